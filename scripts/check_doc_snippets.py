#!/usr/bin/env python3
"""Checks that every C++ snippet of a document is code the build compiles
(docs/cpp-api.md). A snippet is a ```cpp block right after a line
`<!-- snippet: PATH#NAME -->`; it must equal, after removing the common
indentation, the lines between `// [NAME]` and `// [/NAME]` in PATH
(relative to the repository root), a file the build compiles and a test
runs. A ```cpp block without such a line is an error too. Prints one line
per problem and exits 1 if there is any."""
import pathlib
import re
import sys
import textwrap

MARKER = re.compile(r"<!-- snippet: (\S+)#(\S+) -->")


def region(root, path, name):
    text = (root / path).read_text().splitlines()
    begin = [i for i, l in enumerate(text) if l.strip() == f"// [{name}]"]
    end = [i for i, l in enumerate(text) if l.strip() == f"// [/{name}]"]
    if len(begin) != 1 or len(end) != 1 or end[0] <= begin[0]:
        return None
    return textwrap.dedent("\n".join(text[begin[0] + 1:end[0]])).strip("\n")


def problems(root, doc):
    lines = (root / doc).read_text().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.strip() == "```cpp":
            marker = MARKER.fullmatch(lines[i - 1].strip()) if i > 0 else None
            start = i + 1
            end = start
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            block = textwrap.dedent("\n".join(lines[start:end])).strip("\n")
            where = f"{doc}:{i + 1}"
            if marker is None:
                yield f"{where}: a cpp block without a snippet marker"
            else:
                path, name = marker.groups()
                if not (root / path).is_file():
                    yield f"{where}: {path} does not exist"
                else:
                    code = region(root, path, name)
                    if code is None:
                        yield (f"{where}: {path} has no single region "
                               f"// [{name}] ... // [/{name}]")
                    elif code != block:
                        yield f"{where}: differs from {path} [{name}]"
            i = end
        i += 1


def main():
    root = pathlib.Path(sys.argv[1])
    found = [p for doc in sys.argv[2:] for p in problems(root, doc)]
    for p in found:
        print(p)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
