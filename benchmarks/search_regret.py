"""How far the guided search's choice falls from the one it would make with unlimited rollouts.

A 300-match duplicate evaluation takes half an hour and still moves by about
4 points from run to run, too coarse to tell two budgets apart. This measures
the search itself, with little noise: on the decisions of seeded
heuristic-vs-heuristic matches (the tuning seeds), it rolls every candidate of
the policy's shortlist out on ``--deals`` sampled deals, and takes the means
over all of them as each candidate's value. A setting (rollouts a decision,
candidates kept) is then replayed many times by drawing its deals from those,
and its regret is the value of the best candidate minus the value of the one
it picks: points per decision, in the rollouts' own terms. The policy's
favourite alone is the first row.

    python benchmarks/search_regret.py --matches 14 --every 3 --deals 1000
"""

from __future__ import annotations

import argparse
import random
import statistics

from bench_bots import positions

from agents.guided_search import GuidedSearchAgent
from agents.search import outcome, play_out, sample_hidden
from allfives_env.core import SeatView, State

SETTINGS = [(240, None), (380, None), (760, None), (380, 2)]  # (rollouts a decision, candidates kept; None: all)


def rollout_table(view: SeatView, actions: list[int], deals: int, rng: random.Random) -> list[list[float]]:
    """One row per sampled deal: the rollout outcome of each action from it."""
    side = view.rules.side_of[view.seat]
    rows = []
    for _ in range(deals):
        hands, boneyard = sample_hidden(view, rng)
        root = State.from_view(view, hands, boneyard, round_limit=1)
        row = []
        for action in actions:
            play = root.clone()
            play.apply(action)
            play_out(play)
            row.append(outcome(play, side, view.scores))
        rows.append(row)
    return rows


def regret(rows: list[list[float]], rollouts: int, kept: int | None, repeats: int, rng: random.Random) -> float:
    """Mean regret of choosing among the first ``kept`` actions (None: all) by ``rollouts`` rollouts drawn from ``rows``."""
    values = [statistics.fmean(column) for column in zip(*rows, strict=True)]
    best = max(values)
    kept = len(values) if kept is None else min(kept, len(values))
    deals = max(1, rollouts // kept)
    total = 0.0
    for _ in range(repeats):
        drawn = [rows[rng.randrange(len(rows))] for _ in range(deals)]
        means = [sum(row[i] for row in drawn) for i in range(kept)]
        total += best - values[means.index(max(means))]  # a tie goes to the more probable candidate, as in the bot
    return total / repeats


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=6, help="seeded heuristic matches whose decisions are used")
    parser.add_argument("--every", type=int, default=3, help="use every N-th decision with a choice")
    parser.add_argument("--deals", type=int, default=600, help="deals behind each candidate's value")
    parser.add_argument("--repeats", type=int, default=200, help="replays of each setting per decision")
    args = parser.parse_args(argv)
    bot = GuidedSearchAgent(seed=0)
    rng = random.Random(0)
    tables = []
    for view in [v for v in positions(args.matches, "pagat", 2) if len(v.legal) > 1][:: args.every]:
        actions, _ = bot.shortlist(view)
        if len(actions) > 1:
            tables.append(rollout_table(view, actions, args.deals, rng))
    print(f"{len(tables)} decisions with a shortlist, each candidate valued over {args.deals} deals")
    print("| setting | regret (points a decision) |")
    print("|---|---:|")
    favourite = [
        max(map(statistics.fmean, zip(*rows, strict=True))) - statistics.fmean(r[0] for r in rows) for rows in tables
    ]
    print(f"| the policy's favourite, no rollouts | {statistics.fmean(favourite):.3f} |")
    for rollouts, kept in SETTINGS:
        mean = statistics.fmean(regret(rows, rollouts, kept, args.repeats, rng) for rows in tables)
        over = "the whole shortlist" if kept is None else f"the {kept} most probable"
        print(f"| {rollouts} rollouts over {over} | {mean:.3f} |")


if __name__ == "__main__":
    main()
