#!/usr/bin/env python3
"""Checks that every C++ snippet of a document is code the build compiles
(docs/cpp-api.md). A snippet is a ```cpp block right after a line
`<!-- snippet: PATH#NAME -->`; it must equal, after removing the common
indentation, the lines between `// [NAME]` and `// [/NAME]` in PATH
(relative to the repository root), a file the build compiles and a test
runs. A ```cpp block without such a line is an error too.

Also checks that every section reference resolves, in the docs and in the
code's comments: `docs/FILE.md § Heading` (or `§ Heading` inside a
document, or after a reference to a document in the same parentheses)
names a heading of that document; the heading may go on past what the
reference writes ("§ The guard" for "The guard in front of CAF's
protocol").

Prints one line per problem and exits 1 if there is any."""
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


# A reference: an optional document, then "§" and the heading's words up
# to a closing bracket or punctuation. Comment markers at line starts are
# joined away first, so a reference may wrap.
REFERENCE = re.compile(r"(?:((?:docs/)?[\w.-]+\.md)\s*)?§\s*([^)\],;:\n]+)")
SOURCES = (".md", ".cpp", ".hpp", ".py", ".build", ".js", ".html")
SKIP = {"build", "subprojects", ".git", "node_modules"}


def words(text):
    return re.sub(r"[`*]", "", " ".join(text.split())).lower()


def headings(path):
    return [words(line.lstrip("#")) for line in path.read_text().splitlines()
            if line.startswith("#")]


def names_heading(reference, heads):
    """The reference's words start a heading, or a heading starts them
    (the words after it are the sentence's)."""
    ref = words(reference).rstrip(".")

    def starts(longer, shorter):
        return longer.startswith(shorter) and (
            len(longer) == len(shorter) or not longer[len(shorter)].isalnum())
    return any(starts(h, ref) or starts(ref, h) for h in heads)


def unresolved_references(root):
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if (path.suffix not in SOURCES or not path.is_file()
                or SKIP & set(rel.parts) or path.samefile(__file__)):
            continue
        text = path.read_text(errors="replace")
        if path.suffix == ".md":
            joined = re.sub(r"\n(?!\n)", " ", text)
        else:
            joined = re.sub(r"\n[ \t]*(?:///|//|#|\*)[ \t]?", " ", text)
        previous, previous_end = None, -1
        for m in REFERENCE.finditer(joined):
            doc, name = m.groups()
            if doc is None and previous and m.start() - previous_end < 4:
                doc = previous  # "docs/x.md § A, § B"
            if doc is None:
                if path.suffix != ".md":
                    yield f"{rel}: § {name.strip()} names no document"
                    continue
                doc = str(rel)
            target = root / doc if (root / doc).is_file() else root / "docs" / doc
            previous, previous_end = doc, m.end()
            if not target.is_file():
                yield f"{rel}: {doc} § {name.strip()}: no such document"
            elif not names_heading(name, headings(target)):
                yield f"{rel}: {doc} § {name.strip()}: no such heading"


def main():
    root = pathlib.Path(sys.argv[1])
    found = [p for doc in sys.argv[2:] for p in problems(root, doc)]
    found += list(unresolved_references(root))
    for p in found:
        print(p)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
