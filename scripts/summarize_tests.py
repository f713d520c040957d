"""Prints 'N passed, N failed' over all doctest test cases of meson runs
(the testlog.json files given)."""
import json
import re
import sys

passed = failed = 0
for path in sys.argv[1:]:
    with open(path) as log:
        for line in log:
            test = json.loads(line)
            m = re.search(
                r"test cases:\s*\d+\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed",
                test.get("stdout", ""))
            if m:
                passed += int(m.group(1))
                failed += int(m.group(2))
            elif test.get("result") == "OK":
                passed += 1
            else:
                failed += 1
print(f"{passed} passed, {failed} failed")
