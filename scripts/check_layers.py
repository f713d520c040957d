#!/usr/bin/env python3
"""Checks the dependency direction between weir's folders
(docs/architecture.md § Layers): a file may include its own folder and the
folders below it, never one above. Also: RocksDB's headers only in storage/,
cxxopts only in cli/ and sim/ (the programs' flags), no actor headers in dataplane/, operators/ or plan/;
and the error convention (docs/architecture.md § Errors and logging): a
function a header declares returning caf::error or caf::expected is
[[nodiscard]], so no error is dropped silently.
Prints one line per violation and exits 1 if there is any."""
import pathlib
import re
import sys

# Lowest first. A folder may include any folder at or before its position.
LAYERS = ["os", "messages", "config", "net", "storage", "operators", "plan", "dataplane",
          "client", "actors", "cluster", "metrics", "rest", "ha", "process", "api", "cli",
          "sim"]
# Third-party headers only one folder may use.
OWNED = {"rocksdb/": ("storage",), "cxxopts": ("cli", "sim"), "openssl/": ("net",)}
# Folders that stay free of actors: no CAF actor headers, no actor interfaces.
ACTOR_FREE = {"operators", "plan", "dataplane"}
ACTOR_HEADERS = re.compile(r"caf/(.*actor.*|all|io/.*|scheduled_actor|"
                           r"stateful_actor|typed_.*)\.hpp")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
# A declaration whose return type is an error: `caf::error f(`, or the
# type alone on its line with the name on the next.
RETURNS_ERROR = re.compile(r"^\s*(?:static |virtual |inline |constexpr )*"
                           r"(?:caf::error|caf::expected<.*>)(?:\s+[\w:~]+\s*\(|\s*$)")


def unchecked_errors(rel, lines):
    for n, line in enumerate(lines, 1):
        if "[[nodiscard]]" in line or not RETURNS_ERROR.match(line):
            continue
        if line.rstrip().endswith(">") or line.rstrip().endswith("error"):
            # The type alone: a declaration only if a name and "(" follow.
            if n >= len(lines) or not re.match(r"^\s*[\w:~]+\(", lines[n]):
                continue
        yield (f"{rel}:{n}: returns an error without [[nodiscard]]: "
               f"{line.strip()}")


def violations(root):
    rank = {name: i for i, name in enumerate(LAYERS)}
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".hpp", ".cpp", ".h", ".cc"):
            continue
        rel = path.relative_to(root)
        top = rel.parts[0]
        if top not in rank:
            continue  # tests/, bench/, examples/ may use anything
        lines = path.read_text(errors="replace").splitlines()
        if path.suffix == ".hpp":
            yield from unchecked_errors(rel, lines)
        for n, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, target = m.groups()
            where = f"{rel}:{n}"
            if kind == '"':
                folder = target.split("/")[0]
                if folder in rank and rank[folder] > rank[top]:
                    yield (f"{where}: {top}/ includes \"{target}\" of a higher "
                           f"layer ({folder}/)")
                if top in ACTOR_FREE and folder == "actors":
                    yield f"{where}: {top}/ must not include actors/ ({target})"
                continue
            for prefix, owners in OWNED.items():
                if target.startswith(prefix) and top not in owners:
                    where_ok = " or ".join(f"{o}/" for o in owners)
                    yield f"{where}: <{target}> belongs in {where_ok} only"
            if top in ACTOR_FREE and ACTOR_HEADERS.fullmatch(target):
                yield f"{where}: {top}/ must stay free of actor headers (<{target}>)"


def self_test():
    """The checker finds each kind of violation in a small tree of its own."""
    import tempfile
    cases = {
        "storage/a.cpp": '#include "actors/x.hpp"\n',      # upward
        "config/b.cpp": "#include <rocksdb/db.h>\n",       # not storage/
        "actors/c.cpp": "#include <cxxopts.hpp>\n",        # not cli/
        "dataplane/d.hpp": "#include <caf/event_based_actor.hpp>\n",
        "cli/ok.cpp": '#include "actors/x.hpp"\n#include <cxxopts.hpp>\n',
        "plan/e.hpp": "caf::error check(int x);\n",         # no [[nodiscard]]
        "plan/ok.hpp": ("[[nodiscard]] caf::error check(int x);\n"
                        "caf::error last_error;\n"),
    }
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for name, text in cases.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        found = sorted(v.split(":")[0] for v in violations(root))
    expected = ["actors/c.cpp", "config/b.cpp", "dataplane/d.hpp", "plan/e.hpp",
                "storage/a.cpp"]
    if found != expected:
        print(f"check_layers self-test: found {found}, expected {expected}")
        return 1
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        return self_test()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else
                        pathlib.Path(__file__).resolve().parent.parent)
    found = list(violations(root))
    for v in found:
        print(v)
    if found:
        print(f"check_layers: {len(found)} violation(s)", file=sys.stderr)
        return 1
    print(f"check_layers: {' <- '.join(LAYERS)} holds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
