"""How fast each bot decides: decisions per second and milliseconds per decision.

The positions are the decisions of seeded heuristic-vs-heuristic matches, so
every bot is timed on the same views (forced decisions included: they are
part of every real match and cost a bot nothing). Times are CPU time of the
one process, so other load on the machine disturbs them little. A copy of
each bot first decides once untimed, so that loading its compiled code (once
a process) is not counted in its decisions.

    python benchmarks/bench_bots.py --matches 5 --bots random greedy heuristic search
"""

from __future__ import annotations

import argparse
import time

from agents.positions import heuristic_positions
from agents.registry import make_agent
from allfives_env.core import SeatView


def time_bot(spec: str, views: list[SeatView]) -> dict:
    warm = next((view for view in views if len(view.legal) > 1), views[0])
    make_agent(spec, seed=1).act(warm)
    bot = make_agent(spec, seed=0)
    times = []
    for view in views:
        start = time.process_time()
        bot.act(view)
        times.append(time.process_time() - start)
    choices = [t for t, view in zip(times, views, strict=True) if len(view.legal) > 1]
    total = sum(times)
    return {
        "bot": spec,
        "decisions": len(times),
        "per_s": len(times) / total if total else float("inf"),
        "mean_ms": 1000 * total / len(times),
        "mean_choice_ms": 1000 * sum(choices) / max(1, len(choices)),
        "slowest_ms": 1000 * max(times),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=5, help="seeded matches whose decisions are timed")
    parser.add_argument("--rules", default="pagat")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--bots", nargs="+", default=["random", "greedy", "heuristic", "search"])
    args = parser.parse_args(argv)
    views = heuristic_positions(args.matches, args.rules, args.players)
    choices = sum(len(v.legal) > 1 for v in views)
    print(f"{len(views)} decisions ({choices} with a choice) from {args.matches} {args.rules} {args.players}p matches")
    print("| bot | decisions/s | mean ms | mean ms (with a choice) | slowest ms |")
    print("|---|---:|---:|---:|---:|")
    for spec in args.bots:
        r = time_bot(spec, views)
        print(
            f"| {r['bot']} | {r['per_s']:.0f} | {r['mean_ms']:.3f} | {r['mean_choice_ms']:.3f} | {r['slowest_ms']:.1f} |"
        )


if __name__ == "__main__":
    main()
