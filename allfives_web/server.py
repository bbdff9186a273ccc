"""``python -m allfives_env serve``: start the browser app on this machine (needs ``pip install "allfives[web]"``).

By default it listens on 127.0.0.1 only, so only this machine can reach it.
``--host 0.0.0.0`` opens it to every network the machine is on (see docs/web.md).
"""

from __future__ import annotations

import argparse
import sys

from allfives_env.help_text import plain_help

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m allfives_env serve",
        description=plain_help(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)"
    )
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--records", metavar="DIR", help="a folder of game records to offer on the Replay page")
    parser.add_argument(
        "--results",
        metavar="DIR",
        default="results",
        help="where the Leaderboard looks for evaluation and benchmark results (default: ./results)",
    )
    parser.add_argument(
        "--leaderboard",
        metavar="FILE",
        default="LEADERBOARD.md",
        help="a benchmark's leaderboard to show first on the Leaderboard page (default: ./LEADERBOARD.md)",
    )
    parser.add_argument(
        "--bot",
        action="append",
        default=[],
        metavar="NAME=SPEC",
        help="offer one more bot to the pages, e.g. --bot mine=checkpoint:runs/x.pt (pages never name files)",
    )
    parser.add_argument("--idle-minutes", type=float, default=30.0, help="drop a game idle this long (default 30)")
    parser.add_argument("--max-games", type=int, default=2000, help="games held at once (default 2000)")
    return parser


def parse_bots(items: list[str]) -> dict[str, str]:
    """``NAME=SPEC`` items as a dict; ValueError names the faulty item."""
    bots = {}
    for item in items:
        name, sep, spec = item.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier() or not spec.strip():
            raise ValueError(f"--bot {item!r}: expected NAME=SPEC, e.g. mine=checkpoint:runs/policy.pt")
        bots[name] = spec.strip()
    return bots


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        import uvicorn

        from .app import create_app
    except ImportError as err:
        print(
            f"error: the web app needs Starlette and uvicorn ({err.name} is missing): pip install 'allfives[web]'",
            file=sys.stderr,
        )
        return 2
    try:
        if not 0 < args.port < 65536:
            raise ValueError(f"--port {args.port} is not a port; allowed: 1 to 65535")
        if args.idle_minutes <= 0 or args.max_games < 1:
            raise ValueError("--idle-minutes and --max-games must be positive")
        bots = parse_bots(args.bot)
        from agents.registry import make_agent

        for name, spec in bots.items():
            make_agent(spec, seed=0)  # fail now, not when a page first asks for it
            print(f"Bot {name!r}: {spec}")
        app = create_app(
            records=args.records,
            results=args.results,  # looked at on each visit: results written later show up
            bots=bots,
            leaderboard=args.leaderboard,
            idle_seconds=60 * args.idle_minutes,
            max_games=args.max_games,
        )
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"All Fives is at http://{shown}:{args.port}/  (Ctrl+C stops it)", flush=True)
    if args.host not in LOOPBACK:
        print(
            f"warning: listening on {args.host}: anyone who can reach this machine on port {args.port} can use the app "
            "(play, watch, and open the records folder's records); there is no login.",
            flush=True,
        )
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
