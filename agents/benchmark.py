"""The standard benchmark: rank any agent against the fixed ladder of bots, on seeds nobody trains on.

    python -m agents.benchmark checkpoint:runs/default/policy.pt --out results/bench
    python -m agents.benchmark trained search:trained --quick --out results/quick

Each agent spec plays every ladder opponent (``random``, ``greedy``,
``heuristic``, ``search``, ``trained``) over duplicate matches in three
settings: two-player ``pagat``, three-player ``fives`` (the agent against
two copies of the opponent) and four-player partnership ``pagat`` (the agent
as one team, the opponent as the other). Per setting and opponent it reports
the agent's win rate (WP) with its 95% Wilson interval, its average
difference in points per game (ADP: own side's final score minus the best
other side's, with a 95% interval over duplicate matches) and its time per
decision with a choice; per setting, an openskill rating of every agent and
opponent fitted over all the games. Every figure comes from the harness
(:func:`agents.evaluation.evaluate`) and its statistics.

Held-out seeds. Every benchmark match is dealt from the harness seeds in
:data:`HELD_OUT_SEEDS`; training (``run.seed``), the trainer's evaluations
(``eval.seed``) and tuning must never use a seed in that range (a test checks
every config). Within a setting every pairing gets the same seed, so every
opponent is met on the same deals.

``--best-response SPEC`` estimates how exploitable an agent is; it trains a
policy, so it lives in the training layer (:mod:`allfives_train.best_response`)
and is started here as a separate process, never imported.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from .evaluation import EvaluationError, evaluate
from .evaluation.pool import MatchMap
from .factory import AgentFactory
from .ratings import fit_ratings

#: Harness seeds reserved for the benchmark; training and tuning never use them.
HELD_OUT_SEEDS = range(9_000_000_000, 9_000_001_000)
#: The opponents every agent meets, weakest first.
LADDER: tuple[str, ...] = ("random", "greedy", "heuristic", "search", "trained")
#: Duplicate matches per pairing: the full run and ``--quick``.
DEFAULT_MATCHES = 100
QUICK_MATCHES = 2


@dataclass(frozen=True)
class Setting:
    """One table of the benchmark and the harness seed it is dealt from."""

    key: str
    rules: str
    num_players: int
    partnerships: bool
    seed: int

    def lineup(self, spec: str, opponent: str) -> list[str]:
        """The agent against the opponent: one entry per seat, or one per team."""
        if self.partnerships or self.num_players == 2:
            return [spec, opponent]
        return [spec] + [opponent] * (self.num_players - 1)

    def title(self) -> str:
        return f"{self.num_players}-player {self.rules}{', partnerships' if self.partnerships else ''}"


SETTINGS: tuple[Setting, ...] = (
    Setting("pagat2", "pagat", 2, False, HELD_OUT_SEEDS[0]),
    Setting("fives3", "fives", 3, False, HELD_OUT_SEEDS[1]),
    Setting("pagat4_partners", "pagat", 4, True, HELD_OUT_SEEDS[2]),
)
#: The harness seed of the best-response evaluation.
BEST_RESPONSE_SEED = HELD_OUT_SEEDS[3]


@dataclass(frozen=True)
class Row:
    """One agent against one opponent in one setting."""

    setting: str
    agent: str
    opponent: str
    matches: int
    games: int
    win_rate: float
    wp_low: float
    wp_high: float
    adp: float
    adp_half_width: float
    ms_per_choice: float
    opponent_ms_per_choice: float
    seed: int


@dataclass
class BenchmarkResult:
    """Every row, and per setting the rating of every agent and opponent."""

    agents: list[str]
    ladder: list[str]
    matches: int
    rows: list[Row]
    ratings: dict[str, dict[str, dict[str, float]]]

    def row(self, setting: str, agent: str, opponent: str) -> Row:
        for r in self.rows:
            if (r.setting, r.agent, r.opponent) == (setting, agent, opponent):
                return r
        raise KeyError(f"no row for {agent!r} against {opponent!r} in {setting!r}")

    def markdown(self, command: str | None = None) -> str:
        lines = ["# Benchmark", ""]
        if command:
            lines += [f"Command: `{command}`", ""]
        lines += [
            f"{self.matches} duplicate matches per pairing (every seat rotation of each), harness seeds "
            f"{', '.join(str(s.seed) for s in SETTINGS)} (the held-out range {HELD_OUT_SEEDS.start}-"
            f"{HELD_OUT_SEEDS.stop - 1}). WP: the agent's share of games won, 95% Wilson interval. ADP: the "
            "agent's final score minus the best other side's, mean per game, 95% interval over duplicate "
            "matches. Time: ms per decision with a choice.",
            "",
        ]
        for s in SETTINGS:
            lines += [f"## {s.title()}", "", "| Agent | Opponent | Games | WP | 95% CI | ADP | ms / choice |",
                      "|---|---|---|---|---|---|---|"]  # fmt: skip
            for r in self.rows:
                if r.setting == s.key:
                    lines.append(
                        f"| {r.agent} | {r.opponent} | {r.games} | {100 * r.win_rate:.1f}% | "
                        f"[{100 * r.wp_low:.1f}%, {100 * r.wp_high:.1f}%] | {_adp(r)} | {r.ms_per_choice:.2f} |"
                    )
            rated = sorted(self.ratings[s.key].items(), key=lambda kv: -kv[1]["ordinal"])
            lines += ["", "| Rating (openskill, all games) | mu - 3 sigma | mu | sigma |", "|---|---|---|---|"]
            lines += [f"| {name} | {r['ordinal']:.2f} | {r['mu']:.2f} | {r['sigma']:.2f} |" for name, r in rated]
            lines.append("")
        return "\n".join(lines)

    def csv(self) -> str:
        buffer = io.StringIO()
        fields = list(Row.__dataclass_fields__)
        writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        for r in self.rows:
            writer.writerow(asdict(r))
        return buffer.getvalue()

    def summary(self) -> dict:
        return {
            "agents": self.agents,
            "ladder": self.ladder,
            "matches_per_pairing": self.matches,
            "held_out_seeds": [HELD_OUT_SEEDS.start, HELD_OUT_SEEDS.stop - 1],
            "settings": {s.key: {**asdict(s), "ratings": self.ratings[s.key]} for s in SETTINGS},
            "rows": [asdict(r) for r in self.rows],
        }

    def write(self, out_dir: str, command: str | None = None) -> list[str]:
        """``benchmark.md``, ``benchmark.csv`` and ``benchmark.json`` in ``out_dir``; returns the paths."""
        os.makedirs(out_dir, exist_ok=True)
        paths = []
        for name, text in (
            ("benchmark.md", self.markdown(command)),
            ("benchmark.csv", self.csv()),
            ("benchmark.json", json.dumps(strict_json(self.summary()), indent=2, allow_nan=False) + "\n"),
        ):
            path = os.path.join(out_dir, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            paths.append(path)
        return paths


def strict_json(x):
    """``x`` with every NaN (an interval of a single match) as null, so the file is strict JSON."""
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, dict):
        return {k: strict_json(v) for k, v in x.items()}
    if isinstance(x, list):
        return [strict_json(v) for v in x]
    return x


def _adp(r: Row) -> str:
    half = "" if math.isnan(r.adp_half_width) else f" ± {r.adp_half_width:.1f}"
    return f"{r.adp:+.1f}{half}"


def run_benchmark(
    specs: Sequence[str],
    matches: int = DEFAULT_MATCHES,
    *,
    ladder: Sequence[str] = LADDER,
    settings: Sequence[Setting] = SETTINGS,
    workers: int = 2,
    progress: bool = False,
    agent_factory: AgentFactory | None = None,
    backend: MatchMap | None = None,
) -> BenchmarkResult:
    """Play every spec against every ladder opponent in every setting; ValueError for bad arguments."""
    if isinstance(specs, str) or not specs:
        raise ValueError(f"specs={specs!r}: give a list of one or more agent specs, e.g. ['trained']")
    if isinstance(ladder, str) or not ladder:
        raise ValueError(f"ladder={ladder!r}: give a list of one or more opponent specs")
    rows, ratings = [], {}
    for setting in settings:
        names = list(dict.fromkeys([*specs, *ladder]))
        games = []
        for spec in specs:
            for opponent in ladder:
                result = evaluate(
                    setting.lineup(spec, opponent),
                    matches,
                    rules=setting.rules,
                    num_players=setting.num_players,
                    partnerships=setting.partnerships,
                    seed=setting.seed,
                    workers=workers,
                    progress=progress,
                    agent_factory=agent_factory,
                    backend=backend,
                )
                me, them = result.agents[0], result.agents[1]
                rows.append(
                    Row(setting.key, spec, opponent, matches, me.games, me.win_rate, me.ci_low, me.ci_high,
                        me.margin, me.margin_half_width, 1000 * me.seconds_per_choice,
                        1000 * them.seconds_per_choice, setting.seed)
                )  # fmt: skip
                games += rating_games(result, names)
        fitted = fit_ratings(games, len(names))
        ratings[setting.key] = {
            n: {"ordinal": r.ordinal, "mu": r.mu, "sigma": r.sigma} for n, r in zip(names, fitted, strict=True)
        }
    return BenchmarkResult(list(specs), list(ladder), matches, rows, ratings)


def rating_games(result, names: list[str]) -> list[tuple[list[list[int]], list[float]]]:
    """The games of one evaluation as (teams, scores) over ``names`` for :func:`fit_ratings`.

    A name may fill several sides (the agent against two copies of an
    opponent): only its side of the lowest line-up entry is kept, a choice
    made before the game, so the ranking of the sides kept is still a fair
    sample of the game; a game left with fewer than two sides (an agent
    against itself) is skipped.
    """
    out = []
    for g in result.games:
        teams, scores, seen = [], [], set()
        for team, score in sorted(zip(g.teams(result.rules), g.scores, strict=True), key=lambda ts: min(ts[0])):
            name = names.index(result.lineup[min(team)])
            if name not in seen:
                seen.add(name)
                teams.append([name])
                scores.append(score)
        if len(teams) >= 2:
            out.append((teams, scores))
    return out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m agents.benchmark",
        description="Rank agents against the fixed ladder of bots on held-out seeds, in three settings.",
    )
    p.add_argument("specs", nargs="*", metavar="SPEC", help="agent specs: trained, checkpoint:PATH, search:trained...")
    p.add_argument(
        "--matches", type=int, default=None, help=f"duplicate matches per pairing (default {DEFAULT_MATCHES})"
    )
    p.add_argument("--quick", action="store_true", help=f"a small run for CI: {QUICK_MATCHES} matches per pairing")
    p.add_argument("--ladder", nargs="+", default=list(LADDER), metavar="OPPONENT", help="override the ladder")
    p.add_argument("--workers", type=int, default=2, help="worker processes (1: play in this process)")
    p.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="play the matches as Ray tasks (ADDRESS: 'auto', HOST:PORT, ray://...; none: local Ray)")  # fmt: skip
    p.add_argument("--out", metavar="DIR", default="benchmark", help="write benchmark.md/.csv/.json here")
    p.add_argument("--leaderboard", metavar="FILE", help="also write the Markdown here (e.g. LEADERBOARD.md)")
    p.add_argument("--best-response", metavar="SPEC", dest="best_response",
                   help="estimate SPEC's exploitability: train a policy against it (training layer)")  # fmt: skip
    p.add_argument("--cpu-minutes", type=float, default=10.0, help="with --best-response: training budget")
    p.add_argument("--baselines", nargs="*", default=[], help="with --best-response: the same figure for these bots")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="with --best-response: override a training config key (repeatable)")  # fmt: skip
    p.add_argument("--no-progress", action="store_true")
    return p


def main(argv: list[str] | None = None, agent_factory: AgentFactory | None = None) -> int:
    """Run the command line; exit status 2 for bad arguments, 1 when an agent misbehaves."""
    args = _parser().parse_args(argv)
    if args.best_response is not None:
        return _best_response(args)
    if not args.specs:
        print("error: give at least one agent spec (or --best-response SPEC)", file=sys.stderr)
        return 2
    matches = args.matches if args.matches is not None else QUICK_MATCHES if args.quick else DEFAULT_MATCHES
    backend = None
    if args.ray is not None:
        try:
            from .evaluation.ray_map import RayMatchMap
        except ModuleNotFoundError as err:
            print(f"error: --ray needs Ray ({err}); install it with: pip install -e '.[ray]'", file=sys.stderr)
            return 2
        backend = RayMatchMap(args.ray or None)
    try:
        result = run_benchmark(
            args.specs,
            matches,
            ladder=args.ladder,
            workers=args.workers,
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
    command = "python -m agents.benchmark " + " ".join(argv if argv is not None else sys.argv[1:])
    text = result.markdown(command)
    print(text)
    paths = result.write(args.out, command)
    if args.leaderboard:
        with open(args.leaderboard, "w", encoding="utf-8") as f:
            f.write(text.replace("# Benchmark", "# Leaderboard", 1))
        paths.append(args.leaderboard)
    print(f"Written: {', '.join(paths)}")
    return 0


def _best_response(args) -> int:
    """Hand over to the training layer in its own process (the agents layer never imports training)."""
    command = [sys.executable, "-m", "allfives_train.best_response", args.best_response,
               "--cpu-minutes", str(args.cpu_minutes), "--out", args.out, "--seed", str(BEST_RESPONSE_SEED)]  # fmt: skip
    if args.baselines:
        command += ["--baselines", *args.baselines]
    if args.matches is not None:
        command += ["--matches", str(args.matches)]
    for override in args.overrides:
        command += ["--set", override]
    return subprocess.call(command)


if __name__ == "__main__":
    sys.exit(main())
