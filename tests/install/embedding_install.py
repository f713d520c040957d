#!/usr/bin/env python3
"""What a user gets from `meson install`, tried outside the build system:
installs the build into a temporary DESTDIR, checks that every header the
installed headers include is installed, then, with nothing but the
installed weir.pc (its prefix redirected to the DESTDIR) and the system
compiler, builds and runs the embedding example and builds the example user
library, which the installed `weir` then runs.

  embedding_install.py MESON BUILDDIR SOURCEROOT PREFIX LIBDIR INCLUDEDIR
"""
import os
import pathlib
import shlex
import subprocess
import sys
import tempfile

# examples/embedding/host.cpp's word count of its own text.
HOST_OUTPUT = """brown 1
dog 2
fox 1
jumps 1
lazy 1
over 1
quick 1
sleeps 1
the 3
"""

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAILED: {what}", file=sys.stderr)


def run(cmd, **kw):
    """Runs `cmd`; prints it and what it wrote when it fails."""
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        print(f"$ {shlex.join(cmd)}\nexit {r.returncode}\n{r.stdout}{r.stderr}",
              file=sys.stderr)
    return r


def main(meson, build, source, prefix, libdir, includedir):
    source = pathlib.Path(source)
    with tempfile.TemporaryDirectory(prefix="weir-install-") as tmp:
        tmp = pathlib.Path(tmp)
        dest = tmp / "dest"
        r = run([meson, "install", "-C", build, "--destdir", str(dest),
                 "--no-rebuild", "--quiet"])
        if r.returncode != 0:
            return "meson install failed"
        root = dest / pathlib.Path(prefix).relative_to("/")
        lib = root / libdir
        include = root / includedir
        for f in [lib / "libweir.so", root / "bin" / "weir",
                  lib / "pkgconfig" / "weir.pc",
                  include / "weir" / "operators" / "plugin.hpp",
                  include / "weir" / "cluster" / "mini_cluster.hpp"]:
            check(f.exists(), f"{f.relative_to(dest)} is installed")

        # Every "..." include of an installed header is installed.
        r = run([sys.executable, str(source / "scripts" / "public_headers.py"),
                 "--check", str(include / "weir")])
        check(r.returncode == 0 and r.stdout == "",
              f"installed headers are complete: {r.stdout.strip()}")

        env = dict(os.environ)
        env["PKG_CONFIG_PATH"] = os.pathsep.join(
            [str(lib / "pkgconfig")]
            + [p for p in [env.get("PKG_CONFIG_PATH")] if p])
        env["LD_LIBRARY_PATH"] = str(lib)

        def pkg_config(flag):
            r = run(["pkg-config", flag, f"--define-variable=prefix={root}",
                     "weir"], env=env)
            check(r.returncode == 0, f"pkg-config {flag} weir")
            return shlex.split(r.stdout)

        cflags, libs = pkg_config("--cflags"), pkg_config("--libs")
        check("-std=c++17" in cflags, f"Cflags has -std=c++17: {cflags}")
        check("-lweir" in libs, f"Libs has -lweir: {libs}")
        cxx = os.environ.get("CXX_FOR_TEST", "c++")

        # The host program: built, run, its exact output.
        host = tmp / "host"
        r = run([cxx, *cflags, str(source / "examples/embedding/host.cpp"),
                 "-o", str(host), *libs], env=env)
        check(r.returncode == 0, "host.cpp builds with pkg-config weir alone")
        if r.returncode == 0:
            r = run([str(host)], env=env, timeout=120)
            check(r.returncode == 0, f"host exits 0 (got {r.returncode})")
            check(r.stdout == HOST_OUTPUT,
                  f"host output:\n{r.stdout}expected:\n{HOST_OUTPUT}")

        # A user operator library: built the same way, then used by the
        # installed weir.
        ops = tmp / "libops.so"
        r = run([cxx, "-shared", "-fPIC", *cflags,
                 str(source / "examples/user_code/ops.cpp"), "-o", str(ops),
                 *libs], env=env)
        check(r.returncode == 0, "ops.cpp builds with pkg-config weir alone")
        if r.returncode == 0:
            r = run([str(root / "bin" / "weir"), "run",
                     "examples/user_code/upper.json", "--libjars", str(ops)],
                    env=env, cwd=source, timeout=120)
            check(r.returncode == 0,
                  f"the installed weir runs the library (exit {r.returncode})")
            first = (source / "examples/data/sample.txt").read_text() \
                .splitlines()[0]
            check(r.stdout.splitlines()[:1] == [first.upper()],
                  f"upper's first line: {r.stdout.splitlines()[:1]}")
    return None


if __name__ == "__main__":
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    problem = main(*sys.argv[1:])
    if problem:
        print(problem, file=sys.stderr)
        sys.exit(1)
    sys.exit(1 if failures else 0)
