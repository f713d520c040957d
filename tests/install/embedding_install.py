#!/usr/bin/env python3
"""What a user gets from `meson install`, tried outside the build system:
installs the build into a temporary DESTDIR, checks that every header the
installed headers include is installed, then, with nothing but the
installed weir.pc (its prefix redirected to the DESTDIR) and the system
compiler, builds the embedding example (docs/cpp-api.md) and runs its three
steps: embedded, on a session cluster of the installed `weir` with its
functions shipped as a library, and as a driver; and builds the example
user library, which the installed `weir` then runs.

  embedding_install.py MESON BUILDDIR SOURCEROOT PREFIX LIBDIR INCLUDEDIR
"""
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile
import time

# The word counts of examples/embedding/sample.txt, as host.cpp prints them.
COUNTS = """brown\t1
dog\t2
fox\t1
jumps\t1
lazy\t1
over\t1
quick\t1
sleeps\t1
the\t3
"""
# Embedded, the words by first letter follow (a key-selector lambda, rows
# of three fields), then the words of five letters or more, in the file's
# order.
HOST_OUTPUT = COUNTS + """b (B): 1 words
d (D): 2 words
f (F): 1 words
j (J): 1 words
l (L): 1 words
o (O): 1 words
q (Q): 1 words
s (S): 1 words
t (T): 3 words
long word: quick
long word: brown
long word: jumps
long word: sleeps
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


def session_step(weir, host, sample, functions, tmp, env):
    """Starts a jobmanager and a taskmanager of the installed weir, runs
    `host SAMPLE REST_ADDRESS LIBRARY` against them; the host's stdout."""
    log = tmp / "jobmanager.log"
    with open(log, "w") as out:
        jm = subprocess.Popen([weir, "jobmanager", "--port", "0",
                               "--state-dir", str(tmp / "state"),
                               "-Drest.port=0"], env=env,
                              stderr=out)
    tm = None
    try:
        # The jobmanager logs its address once it listens.
        address = rest = None
        deadline = time.monotonic() + 60
        while address is None and time.monotonic() < deadline \
                and jm.poll() is None:
            text = log.read_text()
            m = re.search(r"listening on ([0-9.]+:[0-9]+),", text)
            r = re.search(r"REST API at http://([0-9.]+:[0-9]+)", text)
            address = m.group(1) if m and r else None
            rest = r.group(1) if r else None
            time.sleep(0.05)
        if address is None:
            return "no address: " + log.read_text()
        tm = subprocess.Popen([weir, "taskmanager", "-m", address, "--slots",
                               "2"], env=env, stderr=subprocess.DEVNULL)
        # The host is a client: it talks to the REST API.
        r = run([str(host), sample, rest, str(functions)], env=env,
                timeout=120)
        return r.stdout if r.returncode == 0 else f"exit {r.returncode}"
    finally:
        for p in [tm, jm]:
            if p is not None:
                p.terminate()
                p.wait(timeout=30)


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
                  include / "weir" / "api" / "cluster.hpp"]:
            check(f.exists(), f"{f.relative_to(dest)} is installed")
        # The public surface, exactly: the runtime's rooms stay inside.
        installed = {p.relative_to(include / "weir").as_posix()
                     for p in (include / "weir").rglob("*")
                     if p.is_file()}
        public = {line.strip() for line in
                  (source / "public_headers.txt").read_text().splitlines()
                  if line.strip() and not line.lstrip().startswith("#")}
        check(installed == public,
              "exactly public_headers.txt is installed: extra "
              f"{sorted(installed - public)}, missing {sorted(public - installed)}")

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

        # Nothing but PKG_CONFIG_PATH: weir.pc finds the DESTDIR install
        # relative to itself (prefix=${pcfiledir}/...).
        def pkg_config(flag):
            r = run(["pkg-config", flag, "weir"], env=env)
            check(r.returncode == 0, f"pkg-config {flag} weir")
            return shlex.split(r.stdout)

        pc = (lib / "pkgconfig" / "weir.pc").read_text()
        check("prefix=${pcfiledir}/" in pc, "weir.pc is relocatable: "
              + pc.splitlines()[0])
        cflags, libs = pkg_config("--cflags"), pkg_config("--libs")
        check("-std=c++17" in cflags, f"Cflags has -std=c++17: {cflags}")
        check(f"-I{include}" in [os.path.normpath(f) if f.startswith("-I")
                                 else f for f in cflags],
              f"Cflags name the DESTDIR's includes: {cflags}")
        # (-DNOMINMAX is absl's own, whose headers the public ones include.)
        check(not any(f.startswith("-DCPPHTTPLIB") for f in cflags),
              f"no cpp-httplib flags reach user compiles: {cflags}")
        check("-lweir" in libs, f"Libs has -lweir: {libs}")
        cxx = os.environ.get("CXX_FOR_TEST", "c++")

        # The host program and its functions: built, run, exact output.
        example = source / "examples/embedding"
        host = tmp / "host"
        r = run([cxx, *cflags, str(example / "host.cpp"),
                 str(example / "functions.cpp"), "-o", str(host), *libs],
                env=env)
        check(r.returncode == 0, "host.cpp builds with pkg-config weir alone")
        functions = tmp / "libweir_example_functions.so"
        r = run([cxx, "-shared", "-fPIC", *cflags,
                 str(example / "functions.cpp"), "-o", str(functions), *libs],
                env=env)
        check(r.returncode == 0,
              "functions.cpp builds as a library with pkg-config weir alone")
        sample = str(example / "sample.txt")
        if host.exists():
            # Step 1: an embedded cluster in the host.
            r = run([str(host), sample], env=env, timeout=120)
            check(r.returncode == 0, f"host exits 0 (got {r.returncode})")
            check(r.stdout == HOST_OUTPUT,
                  f"host output:\n{r.stdout}expected:\n{HOST_OUTPUT}")
        if host.exists() and functions.exists():
            # Step 2: a session cluster of the installed weir; the host
            # ships its functions in the library.
            weir = str(root / "bin" / "weir")
            check(session_step(weir, host, sample, functions, tmp, env) == COUNTS,
                  "the host's job on a session cluster counts the words")
            # Step 3: the same job from a driver in the library.
            r = run([weir, "run", "-D", "-c", "word_count", str(functions),
                     sample], env=env, timeout=120)
            check(r.returncode == 0, f"the driver exits 0 (got {r.returncode})")
            check("".join(sorted(r.stdout.splitlines(True))) == COUNTS,
                  f"the driver's counts:\n{r.stdout}")
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
