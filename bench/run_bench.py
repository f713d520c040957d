#!/usr/bin/env python3
"""weir benchmarks over the CLI. Prints one JSON line per figure.

Usage: python3 bench/run_bench.py [--weir build/cli/weir] [--runs 3]

(a) wall time of `weir run` for a trivial job, process start to exit
(b) word count throughput (MB/s) on a generated 50 MB text, parallelism 2
(c) keyed sum of 10 million records (key = i mod 1000), records/s
(d) deploy and finish a job of 10,000 subtasks, subtasks/s
Each figure is the median of --runs runs; the JSON also holds every run.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd):
    """Runs a command, returns wall seconds; fails loudly on a non-zero exit."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode()}")
    return elapsed


def repeat(cmd, runs):
    return [timed(cmd) for _ in range(runs)]


def generate_text(path, size_bytes, vocabulary=10_000, seed=42):
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 10)))
             for _ in range(vocabulary)]
    written = 0
    with open(path, "w") as f:
        while written < size_bytes:
            line = " ".join(rng.choice(vocab) for _ in range(12)) + "\n"
            f.write(line)
            written += len(line)
    return written


def emit(name, unit, value, runs, target, higher_is_better, **extra):
    met = value >= target if higher_is_better else value <= target
    print(json.dumps({"figure": name, "value": round(value, 3), "unit": unit,
                      "target": target, "met": met,
                      "runs_s": [round(r, 4) for r in runs], **extra}),
          flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--weir", default=os.path.join(ROOT, "build/cli/weir"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default="abcd")
    args = parser.parse_args()
    weir = args.weir
    with tempfile.TemporaryDirectory() as tmp:
        if "a" in args.only:
            runs = repeat([weir, "run", "examples/collect.json", "--to", "10"],
                          max(args.runs, 10))
            emit("a_trivial_job_wall_time", "ms", statistics.median(runs) * 1000,
                 runs, 50, False)
        if "b" in args.only:
            text = os.path.join(tmp, "words.txt")
            size = generate_text(text, 50 * 1024 * 1024)
            out = os.path.join(tmp, "counts.txt")
            runs = repeat([weir, "run", "examples/wordcount.json", "-p", "2",
                           "--input", text, "--output", out], args.runs)
            mb = size / (1024 * 1024)
            emit("b_wordcount_throughput", "MB/s", mb / statistics.median(runs),
                 runs, 130, True, input_mb=round(mb, 1))
        if "c" in args.only:
            runs = repeat([weir, "run", "examples/keyed_sum.json", "--to",
                           "10000000", "--modulus", "1000"], args.runs)
            emit("c_keyed_sum_throughput", "records/s",
                 10_000_000 / statistics.median(runs), runs, 30_000_000, True)
        if "d" in args.only:
            spec = os.path.join(tmp, "wide.json")
            with open(spec, "w") as f:
                json.dump({"name": "wide", "parallelism": 10000,
                           "vertices": [
                               {"id": "numbers", "operator": "sequence",
                                "params": {"from": 1, "to": 10000}},
                               {"id": "sink", "operator": "discard"}],
                           "edges": [{"from": "numbers", "to": "sink",
                                      "partitioning": "forward"}]}, f)
            runs = repeat([weir, "run", spec], args.runs)
            emit("d_subtask_deploy_rate", "subtasks/s",
                 10_000 / statistics.median(runs), runs, 20_000, True)


if __name__ == "__main__":
    main()
