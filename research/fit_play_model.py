"""Fit the search's model of play (``agents/inference.py``) to how the bots really place tiles.

The model: a seat picks among its legal placements with probability
proportional to ``exp(beta * points)``. For each bot this plays seeded
two-player pagat matches against ``heuristic`` (the tuning seeds), keeps
every placement it chose freely (not a lead, not a tile just drawn, more than
one legal action), and prints the ``beta`` of highest log-likelihood on a
grid, with how often the bot took the most points on offer.

    python research/fit_play_model.py --bots heuristic trained search --matches 12
"""

from __future__ import annotations

import argparse
import math

from agents.registry import make_agent
from allfives_env.core import State, make_rules
from allfives_env.core.scoring import POINTS_FOR_TOTAL
from allfives_env.help_text import plain_help

GRID = [0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.8]


def free_placements(bot: str, matches: int) -> list[tuple[list[int], int]]:
    """(points of each legal placement, index of the chosen one) at each of ``bot``'s free placements."""
    found = []
    for match in range(matches):
        state = State(make_rules("pagat", 2), seed=1000 + match)
        seats = [make_agent(bot if (match + s) % 2 else "heuristic", seed=10 * match + s) for s in range(2)]
        studied = 0 if match % 2 else 1
        while not state.finished:
            view = state.view(state.to_act)
            action = seats[state.to_act].act(view)
            if state.to_act == studied and len(view.legal) > 1 and view.drawn < 0 and not view.layout.empty:
                points = [POINTS_FOR_TOTAL[view.layout.end_total_after(a >> 2, a & 3)] for a in view.legal]
                found.append((points, view.legal.index(action)))
            state.apply(action)
    return found


def log_likelihood(placements: list[tuple[list[int], int]], beta: float) -> float:
    return sum(beta * points[i] - math.log(sum(math.exp(beta * p) for p in points)) for points, i in placements)


def report(name: str, placements: list[tuple[list[int], int]]) -> None:
    scoring = [(points, i) for points, i in placements if max(points) > 0]
    took = sum(points[i] == max(points) for points, i in scoring) / max(1, len(scoring))
    best = max(GRID, key=lambda beta: log_likelihood(placements, beta))
    gain = (log_likelihood(placements, best) - log_likelihood(placements, 0.0)) / len(placements)
    print(f"| {name} | {len(placements)} | {took:.0%} of {len(scoring)} | {best} | {gain:.3f} nats |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=plain_help(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bots", nargs="+", default=["heuristic", "trained"])
    parser.add_argument("--matches", type=int, default=12)
    args = parser.parse_args(argv)
    print(
        "| bot | free placements | took the most points (when some scored) | best beta | log-likelihood gain per placement |"
    )
    print("|---|---:|---:|---:|---:|")
    pooled = []
    for bot in args.bots:
        placements = free_placements(bot, args.matches)
        pooled += placements
        report(bot, placements)
    if len(args.bots) > 1:
        report("all of them", pooled)


if __name__ == "__main__":
    main()
