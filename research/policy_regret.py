"""Where a bot's choices fall short of the search's with unlimited deals, and at which stakes.

A match between two bots says who is stronger; it does not say where the
weaker one loses. This values every legal action of the decisions of seeded
heuristic-vs-heuristic matches (the tuning seeds) by ``--deals`` play-outs on
deals drawn from the seat's view, as the search does, and charges each bot
the value of the best action minus the value of the one it picks: points per
decision, in the play-outs' own terms (a match won inside a play-out counts
100). The decisions are then split by what is at stake: those where some side
is within ``--near`` points of the target (the play-out's match bonus is in
reach, so one wrong tile can lose the match) and the rest.

    python research/policy_regret.py trained search heuristic --matches 8 --every 3 --deals 600
"""

from __future__ import annotations

import argparse
import random
import statistics

from search_regret import rollout_table

from agents.positions import heuristic_positions
from agents.registry import make_agent
from allfives_env.core import SeatView
from allfives_env.help_text import plain_help


def action_values(view: SeatView, deals: int, rng: random.Random) -> dict[int, float]:
    """Every legal action's mean play-out value over ``deals`` deals drawn from the seat's view."""
    actions = list(view.legal)
    rows = rollout_table(view, actions, deals, rng)
    return {a: statistics.fmean(column) for a, column in zip(actions, zip(*rows, strict=True), strict=True)}


def near_target(view: SeatView, near: int) -> bool:
    """True when some side needs at most ``near`` points to reach the target."""
    return max(view.scores) >= view.rules.target - near


def _summary(regrets: list[float]) -> str:
    if not regrets:
        return "| | |"
    error = statistics.stdev(regrets) / len(regrets) ** 0.5 if len(regrets) > 1 else 0.0
    return f"{statistics.fmean(regrets):.3f} | {error:.3f} |"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=plain_help(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("bots", nargs="+", help="agent specs, as for agents.evaluate")
    parser.add_argument("--matches", type=int, default=8, help="seeded heuristic matches whose decisions are used")
    parser.add_argument("--every", type=int, default=3, help="use every N-th decision with a choice")
    parser.add_argument("--deals", type=int, default=600, help="deals behind each action's value")
    parser.add_argument("--near", type=int, default=50, help="points from the target that count as high stakes")
    parser.add_argument("--rules", default="pagat")
    parser.add_argument("--players", type=int, default=2)
    args = parser.parse_args(argv)
    bots = [make_agent(spec, seed=0) for spec in args.bots]
    rng = random.Random(0)
    views = [v for v in heuristic_positions(args.matches, args.rules, args.players) if len(v.legal) > 1][:: args.every]
    regrets: dict[str, list[tuple[bool, float]]] = {spec: [] for spec in args.bots}
    for view in views:
        values = action_values(view, args.deals, rng)
        best = max(values.values())
        stakes = near_target(view, args.near)
        for spec, bot in zip(args.bots, bots, strict=True):
            regrets[spec].append((stakes, best - values[bot.act(view)]))
    high = sum(near_target(v, args.near) for v in views)
    print(f"{len(views)} decisions, each action valued over {args.deals} deals; {high} with a side within {args.near}")
    print("| bot | regret, all | error | regret, near the target | error | regret, the rest | error | share near |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for spec, pairs in regrets.items():
        every = [r for _, r in pairs]
        near = [r for s, r in pairs if s]
        rest = [r for s, r in pairs if not s]
        share = sum(near) / sum(every) if sum(every) else 0.0
        print(f"| {spec} | {_summary(every)} {_summary(near)} {_summary(rest)} {100 * share:.0f}% |")


if __name__ == "__main__":
    main()
