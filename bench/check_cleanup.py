#!/usr/bin/env python3
"""A bench session whose start times out leaves no process behind
(bench/run_bench.py's Session and end_all). Usage: check_cleanup.py WEIR"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_bench  # noqa: E402


def main():
    weir = os.path.abspath(sys.argv[1])
    wait_for = run_bench.Session.wait_for

    def quick(proc, pattern, timeout=30):
        return wait_for(proc, pattern, min(timeout, 5))

    run_bench.Session.wait_for = staticmethod(quick)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            # A jobmanager of another cluster id: the worker never registers.
            run_bench.Session(weir, tmp, workers=1, slots=1,
                              extra=["-Dhigh-availability.cluster-id=other"])
        except SystemExit as e:
            print(f"the start failed as it should: {e}")
        else:
            sys.exit("the session started, though its worker cannot register")
    alive = [p.args for p in run_bench.STARTED if p.poll() is None]
    if alive:
        sys.exit(f"left running: {alive}")
    if len(run_bench.STARTED) != 2:
        sys.exit(f"expected a jobmanager and a taskmanager, started "
                 f"{len(run_bench.STARTED)}")


if __name__ == "__main__":
    main()
