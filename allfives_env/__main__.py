"""Command line: ``python -m allfives_env {demo,replay,play,evaluate,benchmark,serve} ...``.

``play``, ``evaluate``, ``benchmark`` and ``serve`` forward to :mod:`agents.play`,
:mod:`agents.evaluate`, :mod:`agents.benchmark` and :mod:`allfives_web.server`; the core itself never
imports the agents.
"""

from __future__ import annotations

import argparse
import json
import sys

from .core import State, make_rules
from .core.record import RecordError, read_record, replay
from .core.state import RoundLog

FORWARDED = {"play": "agents.play", "evaluate": "agents.evaluate", "benchmark": "agents.benchmark",
             "serve": "allfives_web.server"}  # fmt: skip


#: What ``--help`` says first (the module's docstring is for readers of the code).
DESCRIPTION = (
    "All Fives from the command line: play a seeded demo match, replay a game record, play against bots in the "
    "terminal, evaluate agents by duplicate matches, rank them on the benchmark, or serve the browser app. "
    "Each command has its own --help."
)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in FORWARDED:
        import importlib

        return importlib.import_module(FORWARDED[argv[0]]).main(argv[1:])
    args = parser().parse_args(argv)
    if args.command == "demo":
        return _demo(args)
    return _replay(args)


def parser() -> argparse.ArgumentParser:
    """The command line's parser; the forwarded commands are listed for --help, and parse their own arguments."""
    parser = argparse.ArgumentParser(prog="python -m allfives_env", description=DESCRIPTION)
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="play a seeded match between random players and print it")
    demo.add_argument("--rules", default="pagat", choices=["pagat", "fives"])
    demo.add_argument("--players", type=int, default=2, choices=[2, 3, 4])
    demo.add_argument("--partnerships", action=argparse.BooleanOptionalAction, default=None)
    demo.add_argument("--target", type=int, default=None)
    demo.add_argument("--opening", default=None, choices=["winners_choice", "descending"])
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--record", metavar="FILE", help="also write the match record here")

    rep = commands.add_parser("replay", help="replay a game record and print the outcome")
    rep.add_argument("file")
    rep.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object instead: the scores, finished, the winner, each round's end, winner, award and "
        "scores, and every action with the end total and points it made (docs/records.md lists every key)",
    )

    commands.add_parser("play", help="play a match against bots in the terminal (see: play --help)", add_help=False)
    commands.add_parser("evaluate", help="duplicate-match evaluation of agents (see: evaluate --help)", add_help=False)
    commands.add_parser(
        "benchmark", help="rank agents against the bots' ladder (see: benchmark --help)", add_help=False
    )
    commands.add_parser("serve", help="the browser app: play, watch, replay (see: serve --help)", add_help=False)
    return parser


def _demo(args) -> int:
    import random

    from .core.record import write_record

    try:
        rules = make_rules(args.rules, args.players, args.partnerships, args.target, args.opening)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    state = State(rules, seed=args.seed)
    chooser = random.Random(args.seed)
    print(f"All Fives, {rules.rules}, {rules.num_players} players, target {rules.target}, seed {args.seed}")
    shown = 0
    while not state.finished:
        state.apply(chooser.choice(state.legal_actions()))
        while shown < len(state.past):
            _print_round(shown, state.past[shown], state)
            shown += 1
    names = _side_names(rules)
    scores = ", ".join(f"{names[s]} {_num(x)}" for s, x in enumerate(state.scores))
    print(f"Final scores: {scores}. Winner: {' and '.join(names[s] for s in state.winners)}.")
    if args.record:
        write_record(state, args.record, seed=args.seed, agents=["random"] * rules.num_players)
        print(f"Record written to {args.record}")
    return 0


def _print_round(index: int, log: RoundLog, state: State) -> None:
    from .core.record import move_texts

    names = _side_names(state.rules)
    result = log.result
    moves = move_texts(log.moves)
    draws = moves.count("draw")
    if result.end == "target":
        how = f"{names[result.winner]} reached the target"
    elif result.winner is not None:
        how = f"{result.end}, won by {names[result.winner]}, award {result.award}"
    elif result.split:
        how = f"block, tied low: {' and '.join(names[s] for s in result.split)} split {result.award}"
    else:
        how = f"{result.end}, tied: no award"
    print(f"Round {index + 1}: leader seat {log.deal.leader}, {len(moves)} actions ({draws} draws); {how}")
    print(f"  opening: {' '.join(moves[:6])}{' ...' if len(moves) > 6 else ''}")


def _side_names(rules) -> list[str]:
    if rules.partnerships:
        return ["seats 0+2", "seats 1+3"]
    return [f"seat {s}" for s in range(rules.num_players)]


def _num(x) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _print_error(message: str) -> None:
    """One stderr line, whatever the message holds and whatever stderr can encode."""
    line = " ".join(message.splitlines())
    encoding = getattr(sys.stderr, "encoding", None) or "utf-8"
    print(f"error: {line}".encode(encoding, "backslashreplace").decode(encoding), file=sys.stderr)


def _replay(args) -> int:
    try:
        result = replay(read_record(args.file))
    except RecordError as err:
        _print_error(str(err))
        return 2
    summary = result.summary()
    if args.json:
        print(json.dumps(summary))
        return 0
    state = result.state
    names = _side_names(state.rules)
    for index, entry in enumerate(summary["rounds"]):
        who = names[entry["winner"]] if entry["winner"] is not None else "nobody alone"
        scores = ", ".join(_num(x) for x in entry["scores"])
        print(f"Round {index + 1}: {entry['end']}, won by {who}, award {_num(entry['award'])}; scores {scores}")
    scores = ", ".join(f"{names[s]} {_num(x)}" for s, x in enumerate(state.scores))
    if state.finished:
        print(f"Finished. Scores: {scores}. Winner: {' and '.join(names[s] for s in state.winners)}.")
    else:
        print(f"Unfinished. Scores: {scores}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
