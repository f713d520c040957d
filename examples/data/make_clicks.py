#!/usr/bin/env python3
"""Writes a clickstream for examples/clicks_per_minute.json: lines
`user<TAB>event_time_ms`, in arrival order, each up to 4 s out of order;
with --orders, the users' orders for examples/clicks_to_orders.json:
lines `user<TAB>event_time_ms<TAB>amount`, as out of order.

    examples/data/make_clicks.py [--users N] [--minutes M] [--seed S] > clicks.tsv
    examples/data/make_clicks.py --orders [...] > orders.tsv

The same arguments give the same file (examples/data/clicks.tsv and
orders.tsv were made with the defaults).
"""
import argparse
import random

START_MS = 1764496800000  # 2026-11-30T10:00:00Z


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--users", type=int, default=8)
    p.add_argument("--minutes", type=int, default=5)
    p.add_argument("--seed", type=int, default=31)
    p.add_argument("--orders", action="store_true")
    a = p.parse_args()
    rnd = random.Random(a.seed + (1 if a.orders else 0))
    step = 5000 if a.orders else 250
    events = []
    for offset_ms in range(0, a.minutes * 60000, step):
        user = f"user{rnd.randrange(a.users) + 1}"
        t = START_MS + offset_ms + rnd.randrange(step)
        amount = f"\t{rnd.randrange(1, 100)}" if a.orders else ""
        # Arrival: the event reaches us up to 4 s after it happened.
        events.append((t + rnd.randrange(4000), t, user, amount))
    for _, t, user, amount in sorted(events):
        print(f"{user}\t{t}{amount}")


if __name__ == "__main__":
    main()
