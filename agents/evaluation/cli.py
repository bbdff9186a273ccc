"""The command line of the harness: ``python -m agents.evaluate greedy random --matches 1000 --out results/x``."""

from __future__ import annotations

import argparse
import os
import sys

from ..factory import AgentFactory
from .games import EvaluationError
from .harness import evaluate
from .pool import MatchMap
from .seating import SEATINGS


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agents.evaluate",
        description="Play duplicate matches between agents and print a results table (Markdown).",
        epilog="Seating: without partnerships give one agent per seat; with four-seat partnerships give two "
        "(one per team) or four (in seat order). Every duplicate match is played under each seat rotation, or with "
        "--seatings all under every seat order.",
    )
    parser.add_argument("lineup", nargs="+", metavar="AGENT", help="agent specs: random, greedy, heuristic, search...")
    parser.add_argument("--matches", type=int, default=100, help="duplicate matches to play (default 100)")
    parser.add_argument("--rules", default="pagat", choices=["pagat", "fives"])
    parser.add_argument("--players", type=int, default=2, choices=[2, 3, 4])
    parser.add_argument("--partnerships", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--target", type=int, default=None, help="points to win (default: the rule set's)")
    parser.add_argument("--opening", default=None, choices=["winners_choice", "descending"], help="fives only")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seatings", default="rotations", choices=SEATINGS,
                        help="seat orders each duplicate match is played under: the line-up's rotations (default), "
                        "or all of them, so that each agent follows each other as often (3 or more seats)")  # fmt: skip
    parser.add_argument("--workers", type=int, default=2, help="worker processes (1: play in this process)")
    parser.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                        help="play the matches as Ray tasks on a cluster (ADDRESS: 'auto', HOST:PORT or ray://...; "
                        "none: a local Ray instance; put it after the agents or write --ray=ADDRESS); needs the ray extra")  # fmt: skip
    parser.add_argument("--out", metavar="DIR", help="write results.md, results.csv, games.csv and records/ here")
    parser.add_argument("--no-records", action="store_true", help="with --out, do not write the game records")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return parser


def main(
    argv: list[str] | None = None, agent_factory: AgentFactory | None = None, backend: MatchMap | None = None
) -> int:
    """Run the command line; returns the exit status (2: bad arguments, 1: an agent misbehaved, 130: Ctrl-C)."""
    args = _parser().parse_args(argv)
    records = os.path.join(args.out, "records") if args.out and not args.no_records else None
    if args.ray is not None and backend is None:
        try:
            from .ray_map import RayMatchMap
        except ModuleNotFoundError as err:
            print(f"error: --ray needs Ray ({err}); install it with: pip install -e '.[ray]'", file=sys.stderr)
            return 2
        backend = RayMatchMap(args.ray or None)
    try:
        result = evaluate(
            args.lineup,
            args.matches,
            rules=args.rules,
            num_players=args.players,
            partnerships=args.partnerships,
            target=args.target,
            opening=args.opening,
            seed=args.seed,
            seatings=args.seatings,
            workers=args.workers,
            records_dir=records,
            progress=not args.no_progress,
            agent_factory=agent_factory,
            backend=backend,
        )
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except EvaluationError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    print(result.markdown(), end="")
    if args.seatings == "rotations" and len(set(args.lineup)) >= 3:
        print(
            "note: under rotations each agent always plays right after the same other agent, which can move the "
            "results by many points; --seatings all plays every seat order",
            file=sys.stderr,
        )
    if args.out:
        paths = result.write(args.out)
        if records:
            paths.append(os.path.join(records, ""))
        print(f"\nWritten: {', '.join(paths)}")
    return 0
