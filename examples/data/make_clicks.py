#!/usr/bin/env python3
"""Writes a clickstream for examples/clicks_per_minute.json: lines
`user<TAB>event_time_ms`, in arrival order, each up to 4 s out of order.

    examples/data/make_clicks.py [--users N] [--minutes M] [--seed S] > clicks.tsv

The same arguments give the same file (examples/data/clicks.tsv was made
with the defaults).
"""
import argparse
import random

START_MS = 1764496800000  # 2026-11-30T10:00:00Z


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--users", type=int, default=8)
    p.add_argument("--minutes", type=int, default=5)
    p.add_argument("--seed", type=int, default=31)
    a = p.parse_args()
    rnd = random.Random(a.seed)
    clicks = []
    for minute_ms in range(0, a.minutes * 60000, 250):
        user = f"user{rnd.randrange(a.users) + 1}"
        t = START_MS + minute_ms + rnd.randrange(250)
        # Arrival: the click reaches us up to 4 s after it happened.
        clicks.append((t + rnd.randrange(4000), t, user))
    for _, t, user in sorted(clicks):
        print(f"{user}\t{t}")


if __name__ == "__main__":
    main()
