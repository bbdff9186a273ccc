"""Random play through the rules core: decisions per second.

A decision is one placement, draw or pass, legal-action generation
included. Each setting is timed ``--repeats`` times and the best run is
reported, as ``timeit`` does: the other runs measure the machine's noise.
Run: ``python benchmarks/bench_core.py [--matches N] [--repeats R]``.
"""

from __future__ import annotations

import argparse
import random
import time

from allfives_env.core import State, make_rules
from allfives_env.help_text import plain_help

SETTINGS = [
    ("pagat", 2, None),
    ("pagat", 3, None),
    ("pagat", 4, True),
    ("fives", 2, None),
    ("fives", 3, None),
    ("fives", 4, False),
]


def play(rules, matches: int, seed: int) -> tuple[int, float]:
    chooser = random.Random(seed)
    decisions = 0
    start = time.perf_counter()
    for match in range(matches):
        state = State(rules, seed=seed + match)
        while not state.finished:
            state.apply(chooser.choice(state.legal_actions()))
            decisions += 1
    return decisions, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=plain_help(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=500, help="matches per setting")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per setting; the best is reported")
    args = parser.parse_args()
    print(f"{'rules':<6} {'players':>7} {'decisions':>10} {'seconds':>8} {'decisions/s':>12}")
    total_decisions, total_time = 0, 0.0
    for rule_set, players, partnerships in SETTINGS:
        rules = make_rules(rule_set, players, partnerships)
        decisions, seconds = min(
            (play(rules, args.matches, args.seed) for _ in range(args.repeats)), key=lambda r: r[1]
        )
        total_decisions += decisions
        total_time += seconds
        print(f"{rule_set:<6} {players:>7} {decisions:>10} {seconds:>8.2f} {decisions / seconds:>12,.0f}")
    print(f"{'all':<6} {'':>7} {total_decisions:>10} {total_time:>8.2f} {total_decisions / total_time:>12,.0f}")


if __name__ == "__main__":
    main()
