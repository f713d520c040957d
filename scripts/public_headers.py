#!/usr/bin/env python3
"""The headers `meson install` ships: the list in public_headers.txt, which
must be closed under weir's own includes ("messages/record.hpp" style,
resolved from the source root).

  public_headers.py --closed ROOT LIST   prints LIST's headers, one per line;
                                         exits 1 naming any header a public
                                         one includes that LIST lacks
  public_headers.py ROOT HEADER...       prints the closure, one per line
  public_headers.py --external ROOT HEADER...
                                         prints the <...> headers it uses
  public_headers.py --check DIR          checks an installed tree: every
                                         "..." include of a header under DIR
                                         names a file under DIR; prints one
                                         line per missing one, exits 1
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def includes(path):
    return INCLUDE.findall(path.read_text(errors="replace"))


def closure(root, headers):
    seen, todo = set(), list(headers)
    while todo:
        h = todo.pop()
        if h in seen:
            continue
        if not (root / h).is_file():
            sys.exit(f"public_headers.py: {h}: no such header under {root}")
        seen.add(h)
        todo += [t for kind, t in includes(root / h)
                 if kind == '"' and (root / t).is_file()]
    return sorted(seen)


def external(root, headers):
    return sorted({t for h in closure(root, headers)
                   for kind, t in includes(root / h) if kind == "<"})


def missing(tree):
    for path in sorted(tree.rglob("*.hpp")):
        for kind, target in includes(path):
            if kind == '"' and not (tree / target).is_file():
                yield (f"{path.relative_to(tree)} includes \"{target}\", "
                       f"which is not installed")


def listed(path):
    return [line.strip() for line in path.read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def leaks(root, headers):
    public = set(headers)
    for h in headers:
        if not (root / h).is_file():
            yield f"{h}: no such header under {root}"
            continue
        for kind, target in includes(root / h):
            if kind == '"' and (root / target).is_file() \
                    and target not in public:
                yield (f"{h} includes \"{target}\", which is not public "
                       f"(public_headers.txt)")


def main(args):
    if args[:1] == ["--closed"] and len(args) == 3:
        root, headers = pathlib.Path(args[1]), listed(pathlib.Path(args[2]))
        problems = list(leaks(root, headers))
        for p in problems:
            print(f"public_headers.py: {p}", file=sys.stderr)
        if problems:
            return 1
        print("\n".join(headers))
        return 0
    if args[:1] == ["--check"] and len(args) == 2:
        problems = list(missing(pathlib.Path(args[1])))
        for p in problems:
            print(p)
        return 1 if problems else 0
    if args[:1] == ["--external"] and len(args) > 2:
        print("\n".join(external(pathlib.Path(args[1]), args[2:])))
        return 0
    if len(args) < 2 or args[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    print("\n".join(closure(pathlib.Path(args[0]), args[1:])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
