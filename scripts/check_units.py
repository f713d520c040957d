#!/usr/bin/env python3
"""Checks the systemd units of docs/operations.md § Running a cluster as
services as systemd reads them: each passes `systemd-analyze verify` (with
the weir binary under test in place of /usr/local/bin/weir), can be
enabled ([Install]), and pulls in the network it waits for.

Usage: check_units.py SOURCE_ROOT WEIR_BINARY"""
import os
import re
import subprocess
import sys
import tempfile


def units_of(doc):
    """{file name: text} of the indented blocks starting with a unit path."""
    units = {}
    name = None
    for line in doc.splitlines():
        m = re.match(r"    # /etc/systemd/system/(\S+\.service)$", line)
        if m:
            name = m.group(1)
            units[name] = []
        elif name and (line.startswith("    ") or line == ""):
            units[name].append(line[4:])
        else:
            name = None
    return {n: "\n".join(lines).strip() + "\n" for n, lines in units.items()}


def main():
    root, weir = sys.argv[1], os.path.abspath(sys.argv[2])
    with open(os.path.join(root, "docs/operations.md")) as f:
        doc = f.read()
    section = doc[doc.index("## Running a cluster as services"):]
    section = section[:section.index("\n## ", 1)] if "\n## " in section[1:] else section
    units = units_of(section)
    if set(units) != {"weir-jobmanager.service", "weir-taskmanager.service"}:
        sys.exit(f"expected the jobmanager's and the taskmanager's units, "
                 f"found {sorted(units)}")
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for name, text in units.items():
            if "[Install]" not in text or "WantedBy=" not in text:
                problems.append(f"{name}: no [Install] WantedBy=: cannot be "
                                f"enabled")
            if ("After=network-online.target" in text
                    and "Wants=network-online.target" not in text):
                problems.append(f"{name}: After=network-online.target "
                                f"without Wants=: the target is never "
                                f"started")
            if "User=" in text and "User=root" not in text:
                if "install -o weir" not in section:
                    problems.append(f"{name}: runs as a user the section "
                                    f"does not give the keys to")
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(text.replace("/usr/local/bin/weir", weir))
            paths.append(path)
        run = subprocess.run(["systemd-analyze", "verify", "--man=no"] + paths,
                             capture_output=True, text=True)
        if run.returncode != 0:
            problems.append("systemd-analyze verify: "
                            + (run.stderr or run.stdout).strip())
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
