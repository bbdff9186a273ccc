"""How far the guided search's choice falls from the one it would make with unlimited rollouts.

A 300-match duplicate evaluation takes half an hour and still moves by about
4 points from run to run, too coarse to tell two budgets apart. This measures
the search itself, with little noise: on the decisions of seeded
heuristic-vs-heuristic matches (the tuning seeds), it rolls the policy's
``--candidates`` most probable actions out on ``--deals`` sampled deals, and
takes the means over all of them as each one's value. A setting (rollouts a
decision, candidates kept) is then replayed many times by drawing its deals
from those, and its regret is the value of the best of them minus the value
of the one it picks: points per decision, in the rollouts' own terms. The
policy's favourite alone is the first row.

    python research/search_regret.py --matches 14 --every 3 --deals 1000 --candidates 8
"""

from __future__ import annotations

import argparse
import random
import statistics

import numpy as np

from agents.guided_search import DEFAULT_MIN_PRIOR, GuidedSearchAgent
from agents.positions import heuristic_positions
from agents.rollout import add_deal_values
from agents.search import sample_hidden
from allfives_env.core import SeatView
from allfives_env.help_text import plain_help

#: (rollouts a decision, candidates kept as the bot keeps them; None: every one in the table).
SETTINGS = [(240, 3), (380, 3), (760, 2), (760, 3), (760, 4), (760, 5), (760, 6), (760, None), (1520, 3)]


def rollout_table(view: SeatView, actions: list[int], deals: int, rng: random.Random) -> list[list[float]]:
    """One row per sampled deal: the rollout outcome of each action from it."""
    rows = []
    for _ in range(deals):
        values = np.zeros(len(actions))
        add_deal_values(values, view, [sample_hidden(view, rng)], [1.0], actions, guarded=True)
        rows.append(values.tolist())
    return rows


def regret(
    rows: list[list[float]], probs: list[float], rollouts: int, kept: int | None, repeats: int, rng: random.Random
) -> float:
    """Mean regret of ``rollouts`` rollouts, drawn from ``rows``, over the candidates the bot would keep.

    The bot keeps the ``kept`` most probable actions and any other the policy
    gives at least ``DEFAULT_MIN_PRIOR``; ``None`` keeps every one in the table.
    """
    values = [statistics.fmean(column) for column in zip(*rows, strict=True)]
    best = max(values)
    if kept is None:
        kept = len(values)
    kept = min(len(values), max(kept, sum(p >= DEFAULT_MIN_PRIOR for p in probs)))
    deals = max(1, rollouts // kept)
    total = 0.0
    for _ in range(repeats):
        drawn = [rows[rng.randrange(len(rows))] for _ in range(deals)]
        means = [sum(row[i] for row in drawn) for i in range(kept)]
        total += best - values[means.index(max(means))]  # a tie goes to the more probable candidate, as in the bot
    return total / repeats


def _error(values: list[float]) -> float:
    """The standard error of the mean over decisions (the decisions, not the replays, are the noise that matters)."""
    return statistics.stdev(values) / len(values) ** 0.5


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=plain_help(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=6, help="seeded heuristic matches whose decisions are used")
    parser.add_argument("--every", type=int, default=3, help="use every N-th decision with a choice")
    parser.add_argument("--deals", type=int, default=600, help="deals behind each candidate's value")
    parser.add_argument("--repeats", type=int, default=200, help="replays of each setting per decision")
    parser.add_argument("--candidates", type=int, default=4, help="the most probable actions valued per decision")
    args = parser.parse_args(argv)
    bot = GuidedSearchAgent(seed=0, candidates=args.candidates)
    rng = random.Random(0)
    tables = []
    for view in [v for v in heuristic_positions(args.matches, "pagat", 2) if len(v.legal) > 1][:: args.every]:
        actions, probs = bot.shortlist(view)
        if len(actions) > 1:
            tables.append((rollout_table(view, actions, args.deals, rng), probs))
    print(f"{len(tables)} decisions with a shortlist, each candidate valued over {args.deals} deals")
    print("| setting | regret (points a decision) | standard error |")
    print("|---|---:|---:|")
    favourite = [
        max(map(statistics.fmean, zip(*rows, strict=True))) - statistics.fmean(r[0] for r in rows) for rows, _ in tables
    ]
    print(f"| the policy's favourite, no rollouts | {statistics.fmean(favourite):.3f} | {_error(favourite):.3f} |")
    for rollouts, kept in SETTINGS:
        regrets = [regret(rows, probs, rollouts, kept, args.repeats, rng) for rows, probs in tables]
        over = f"all {args.candidates} valued" if kept is None else f"the {kept} most probable"
        print(f"| {rollouts} rollouts over {over} | {statistics.fmean(regrets):.3f} | {_error(regrets):.3f} |")


if __name__ == "__main__":
    main()
