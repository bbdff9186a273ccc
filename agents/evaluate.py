"""Duplicate-match evaluation: play a line-up of agents against each other and report who is better.

``python -m agents.evaluate greedy random --matches 1000 --rules pagat --players 2 --out results/g_vs_r``

Units. A *game* is one match of All Fives played to the target. A *duplicate
match* k has its own match seed, derived from (``seed``, k); its deals depend
only on that seed and the round number, so it is played once under every
seat rotation of the line-up and each agent meets the same deals from every
seat: the luck of the deal cancels. ``matches`` counts duplicate matches, so
``games = matches * rotations``.

Seating. The line-up is a list of agent specs (``make_agent`` names); each
position in it is an *entry* (the same spec may appear twice, e.g. for a
self-play check). Without partnerships there must be one entry per seat.
With four-seat partnerships there are two forms: two entries, each playing
both seats of one team (entry 0 in seats 0 and 2, entry 1 in seats 1 and 3),
or four entries in seat order (entries 0 and 2 are partners, as are 1 and
3). Call the entry in seat j of rotation 0 the entry of slot j; in
rotation r the entry of slot j sits in seat (j + r) mod n,
for r = 0 .. rotations - 1, where rotations is the number of distinct
seatings: n for one entry per seat (each entry plays every seat once), 2 for
two teams at four seats (rotation 1 swaps the teams' seats; rotating by 2
would repeat rotation 0).

Statistics, per entry. Win rate: the share of games its side won, a shared
win counting 1 / (number of sides sharing it), with a 95% Wilson score
interval that treats games as independent (the rotations of one duplicate
match are negatively correlated in luck, so this interval is conservative);
the CSV also gives a paired interval over duplicate matches. Margin: its
side's final score minus the best other side's, per game, with a 95% normal
interval over the duplicate-match means. Timing: seconds per decision
counted over decisions with more than one legal action (a forced action
costs no thought), and the slowest such decision. With three or more
entries, openskill Plackett-Luce ratings fitted over every game.

Reproducibility: everything except timings depends only on the line-up, the
rules and ``seed``, never on ``workers``.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import math
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from allfives_env.core import Rules, State, make_rules
from allfives_env.core.record import exact, write_record

from .base import Agent
from .ratings import Rating, fit_ratings

Z95 = 1.959963984540054
AgentFactory = Callable[[str, "int | None"], Agent]


class EvaluationError(RuntimeError):
    """An agent misbehaved during a game (an illegal action, a crash): says which agent, where and why."""


# -- seeds and seating ------------------------------------------------------------


def derive_seed(*parts) -> int:
    """A 63-bit seed that depends only on ``parts`` (stable across runs, machines and Python versions)."""
    digest = hashlib.sha256("/".join(map(str, ("allfives-eval", *parts))).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def match_seed(seed: int, match: int) -> int:
    """The match seed of duplicate match ``match``: ``State(rules, seed=match_seed(seed, k))`` deals it."""
    return derive_seed(seed, "match", match)


@dataclass(frozen=True)
class Seating:
    """Where a line-up sits: ``pattern[j]`` is the entry in line-up slot j; rotation r puts slot j in seat (j + r) % n."""

    pattern: tuple[int, ...]
    rotations: int

    def entries_at_seats(self, rotation: int) -> tuple[int, ...]:
        """The entry in each seat under ``rotation``."""
        n = len(self.pattern)
        return tuple(self.pattern[(seat - rotation) % n] for seat in range(n))

    def seat_of_slot(self, slot: int, rotation: int) -> int:
        return (slot + rotation) % len(self.pattern)


def seat_lineup(size: int, rules: Rules) -> Seating:
    """The seating of a line-up of ``size`` entries; ValueError if the size does not fit the table."""
    n = rules.num_players
    if rules.partnerships:
        if size == 2:
            pattern = (0, 1, 0, 1)
        elif size == 4:
            pattern = (0, 1, 2, 3)
        else:
            raise ValueError(
                f"a line-up of {size} agents does not fit four seats in partnerships; give 2 (one per team, "
                "both partners play it) or 4 (in seat order: 0 and 2 are partners, 1 and 3 are partners)"
            )
    elif size == n:
        pattern = tuple(range(n))
    else:
        raise ValueError(
            f"a line-up of {size} agents does not fit {n} seats without partnerships; give {n} (one per seat)"
        )
    period = next(p for p in range(1, n + 1) if all(pattern[j] == pattern[(j + p) % n] for j in range(n)))
    return Seating(pattern, period)


def entry_labels(lineup: Sequence[str]) -> list[str]:
    """Names to report entries by: the spec, with ``#2``, ``#3``... added when a spec repeats."""
    labels, seen = [], {}
    for spec in lineup:
        seen[spec] = seen.get(spec, 0) + 1
        labels.append(spec if seen[spec] == 1 else f"{spec}#{seen[spec]}")
    return labels


# -- one game ----------------------------------------------------------------------


@dataclass(frozen=True)
class GameResult:
    """One game of one duplicate match under one rotation; per-entry tuples are in line-up order."""

    match: int
    rotation: int
    match_seed: int
    seat_entries: tuple[int, ...]  # the entry in each seat
    scores: tuple  # final score per side
    winners: tuple[int, ...]  # winning side(s)
    rounds: int
    actions: int
    share: tuple[float, ...]  # per entry: 1 for a win, 1/k for a win shared by k sides, else 0
    margin: tuple[float, ...]  # per entry: own side's score minus the best other side's
    decisions: tuple[int, ...]  # per entry: all decisions taken
    choices: tuple[int, ...]  # per entry: decisions with more than one legal action
    choice_seconds: tuple[float, ...]  # per entry: total seconds over those
    slowest: tuple[float, ...]  # per entry: the slowest of those (0 if none)
    seconds: tuple[float, ...]  # per entry: total seconds over all decisions

    def teams(self, rules: Rules) -> list[list[int]]:
        """The entries that played each side (each listed once)."""
        teams: list[list[int]] = [[] for _ in range(rules.num_sides)]
        for seat, entry in enumerate(self.seat_entries):
            team = teams[rules.side_of[seat]]
            if entry not in team:
                team.append(entry)
        return teams


@dataclass(frozen=True)
class _Config:
    rules: Rules
    lineup: tuple[str, ...]
    seating: Seating
    seed: int
    records_dir: str | None
    factory: AgentFactory | None


def default_agent_factory(spec: str, seed: int | None = None) -> Agent:
    """``agents.registry.make_agent``, imported only when first needed."""
    from .registry import make_agent

    return make_agent(spec, seed=seed)


class _Runner:
    """Plays the games of one worker; holds one agent per line-up slot, built once."""

    def __init__(self, config: _Config) -> None:
        self.config = config
        factory = config.factory or default_agent_factory
        self.agents = [
            factory(config.lineup[entry], derive_seed(config.seed, "agent", slot))
            for slot, entry in enumerate(config.seating.pattern)
        ]

    def play_match(self, match: int) -> list[GameResult]:
        return [self.play_game(match, rotation) for rotation in range(self.config.seating.rotations)]

    def play_game(self, match: int, rotation: int) -> GameResult:
        config = self.config
        rules, seating = config.rules, config.seating
        n, entries = rules.num_players, len(config.lineup)
        seed = match_seed(config.seed, match)
        seat_entries = seating.entries_at_seats(rotation)
        seat_agents: list[Agent] = [None] * n  # type: ignore[list-item]
        for slot, agent in enumerate(self.agents):
            agent.reset(derive_seed(config.seed, match, rotation, slot))
            seat_agents[seating.seat_of_slot(slot, rotation)] = agent
        decisions, choices = [0] * entries, [0] * entries
        choice_seconds, slowest, seconds = [0.0] * entries, [0.0] * entries, [0.0] * entries
        state = State(rules, seed=seed)
        actions = 0
        while not state.finished:
            seat = state.to_act
            entry = seat_entries[seat]
            view = state.view(seat)
            start = time.perf_counter()
            try:
                action = seat_agents[seat].act(view)
            except Exception as err:
                raise EvaluationError(
                    f"agent {config.lineup[entry]!r} (seat {seat}) failed in match {match}, rotation {rotation}, "
                    f"round {state.round_index}: {type(err).__name__}: {err}"
                ) from err
            spent = time.perf_counter() - start
            if action not in view.legal:
                legal = ", ".join(state.action_text(a) for a in view.legal)
                raise EvaluationError(
                    f"agent {config.lineup[entry]!r} (seat {seat}) chose {action!r}, which is illegal in match "
                    f"{match}, rotation {rotation}, round {state.round_index}; legal: {legal}"
                )
            decisions[entry] += 1
            seconds[entry] += spent
            if len(view.legal) > 1:
                choices[entry] += 1
                choice_seconds[entry] += spent
                slowest[entry] = max(slowest[entry], spent)
            state.apply(int(action))
            actions += 1
        if config.records_dir is not None:
            write_record(
                state,
                os.path.join(config.records_dir, record_name(match, rotation)),
                seed=seed,
                agents=[config.lineup[e] for e in seat_entries],
                evaluation={"seed": config.seed, "match": match, "rotation": rotation, "lineup": list(config.lineup)},
            )
        return _game_result(state, match, rotation, seed, seat_entries, entries, actions,
                            (decisions, choices, choice_seconds, slowest, seconds))  # fmt: skip


def _game_result(state: State, match, rotation, seed, seat_entries, entries, actions, timing) -> GameResult:
    rules = state.rules
    scores = tuple(exact(s) for s in state.scores)
    share_of_side = [1 / len(state.winners) if side in state.winners else 0.0 for side in range(rules.num_sides)]
    margin_of_side = [
        scores[side] - max(scores[o] for o in range(rules.num_sides) if o != side) for side in range(rules.num_sides)
    ]
    side_of_entry = [0] * entries
    for seat, entry in enumerate(seat_entries):
        side_of_entry[entry] = rules.side_of[seat]
    decisions, choices, choice_seconds, slowest, seconds = timing
    return GameResult(
        match=match,
        rotation=rotation,
        match_seed=seed,
        seat_entries=seat_entries,
        scores=scores,
        winners=tuple(state.winners),
        rounds=len(state.past),
        actions=actions,
        share=tuple(share_of_side[s] for s in side_of_entry),
        margin=tuple(float(margin_of_side[s]) for s in side_of_entry),
        decisions=tuple(decisions),
        choices=tuple(choices),
        choice_seconds=tuple(choice_seconds),
        slowest=tuple(slowest),
        seconds=tuple(seconds),
    )


def record_name(match: int, rotation: int) -> str:
    """The file name of one game's record inside the records folder."""
    return f"match{match:05d}-rot{rotation}.json"


_WORKER: _Runner | None = None


def _init_worker(config: _Config) -> None:
    global _WORKER
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops the workers
    _WORKER = _Runner(config)
    if "torch" in sys.modules:  # one thread per worker: the workers already share the cores
        sys.modules["torch"].set_num_threads(1)


def _worker_match(match: int) -> list[GameResult]:
    assert _WORKER is not None
    return _WORKER.play_match(match)


# -- statistics --------------------------------------------------------------------


def wilson_interval(successes: float, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion; (0, 1) when there are no trials."""
    if trials <= 0:
        return 0.0, 1.0
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float]:
    """Mean and the half-width of its normal 95% interval (nan with fewer than two values)."""
    k = len(values)
    if k == 0:
        return math.nan, math.nan
    mean = sum(values) / k
    if k < 2:
        return mean, math.nan
    var = sum((v - mean) ** 2 for v in values) / (k - 1)
    return mean, z * math.sqrt(var / k)


@dataclass(frozen=True)
class AgentStats:
    """One entry's results over every game it played."""

    label: str
    spec: str
    games: int
    wins: float  # shared wins count as fractions
    win_rate: float
    ci_low: float  # Wilson, games as the unit
    ci_high: float
    paired_low: float  # normal interval over the duplicate matches' mean win shares
    paired_high: float
    margin: float  # mean points margin per game
    margin_half_width: float  # 95% interval half-width over duplicate matches
    decisions: int
    choices: int  # decisions with more than one legal action
    seconds_per_choice: float  # mean seconds over those
    slowest: float  # the slowest of those
    seconds_per_decision: float  # mean seconds over all decisions
    rating: Rating | None = None


def summarize(games: Sequence[GameResult], lineup: Sequence[str], rules: Rules) -> list[AgentStats]:
    """Per-entry statistics (and ratings with three or more entries) from games in (match, rotation) order."""
    labels = entry_labels(lineup)
    ratings = None
    if len(lineup) >= 3 and games:
        ratings = fit_ratings(((g.teams(rules), g.scores) for g in games), len(lineup))
    by_match: dict[int, list[GameResult]] = {}
    for g in games:
        by_match.setdefault(g.match, []).append(g)
    stats = []
    for i, spec in enumerate(lineup):
        n = len(games)
        wins = sum(g.share[i] for g in games)
        low, high = wilson_interval(wins, n)
        share_means = [sum(g.share[i] for g in gs) / len(gs) for gs in by_match.values()]
        paired_mean, paired_half = mean_interval(share_means)
        margin, margin_half = mean_interval([sum(g.margin[i] for g in gs) / len(gs) for gs in by_match.values()])
        decisions = sum(g.decisions[i] for g in games)
        choices = sum(g.choices[i] for g in games)
        stats.append(
            AgentStats(
                label=labels[i],
                spec=spec,
                games=n,
                wins=wins,
                win_rate=wins / n if n else math.nan,
                ci_low=low,
                ci_high=high,
                paired_low=max(0.0, paired_mean - paired_half) if n else math.nan,
                paired_high=min(1.0, paired_mean + paired_half) if n else math.nan,
                margin=margin,
                margin_half_width=margin_half,
                decisions=decisions,
                choices=choices,
                seconds_per_choice=sum(g.choice_seconds[i] for g in games) / choices if choices else 0.0,
                slowest=max((g.slowest[i] for g in games), default=0.0),
                seconds_per_decision=sum(g.seconds[i] for g in games) / decisions if decisions else 0.0,
                rating=ratings[i] if ratings else None,
            )
        )
    return stats


# -- the result and its tables --------------------------------------------------------


@dataclass
class EvaluationResult:
    """Everything one evaluation measured; ``agents`` are in line-up order, ``games`` in (match, rotation) order."""

    lineup: list[str]
    rules: Rules
    matches: int
    rotations: int
    seed: int
    games: list[GameResult]
    agents: list[AgentStats]
    seating: Seating = field(repr=False, default=None)  # type: ignore[assignment]

    def agent(self, label: str) -> AgentStats:
        """The statistics of the entry reported as ``label``."""
        for stats in self.agents:
            if stats.label == label:
                return stats
        raise KeyError(f"no entry {label!r}; entries: {', '.join(s.label for s in self.agents)}")

    def title(self) -> str:
        r = self.rules
        setup = f"{r.rules}, {r.num_players} players{', partnerships' if r.partnerships else ''}, target {r.target}"
        if r.opening:
            setup += f", opening {r.opening}"
        return (
            f"Duplicate evaluation: {' vs '.join(self.lineup)} ({setup}); {self.matches} duplicate matches x "
            f"{self.rotations} seat rotations = {len(self.games)} games; seed {self.seed}"
        )

    def markdown(self) -> str:
        """The results table as Markdown, with a one-line title."""
        rated = any(s.rating for s in self.agents)
        head = ["Agent", "Games", "Win rate", "95% CI (Wilson)", "Margin / match", "Mean ms / decision", "Slowest ms"]
        if rated:
            head += ["Rating (mu - 3 sigma)", "mu", "sigma"]
        lines = [f"**{self.title()}**", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for s in self.agents:
            row = [
                s.label,
                str(s.games),
                f"{100 * s.win_rate:.1f}%",
                f"[{100 * s.ci_low:.1f}%, {100 * s.ci_high:.1f}%]",
                f"{s.margin:+.1f} ± {s.margin_half_width:.1f}" if s.games > 0 else "-",
                f"{1000 * s.seconds_per_choice:.3f}",
                f"{1000 * s.slowest:.3f}",
            ]
            if rated:
                row += [f"{s.rating.ordinal:.2f}", f"{s.rating.mu:.2f}", f"{s.rating.sigma:.2f}"]
            lines.append("| " + " | ".join(row) + " |")
        lines += [
            "",
            "Win rate: share of games won (a shared win counts as a fraction). Margin: own side's final score minus "
            "the best other side's, mean per game ± 95% half-width over duplicate matches. Timing: decisions with "
            "more than one legal action.",
        ]
        return "\n".join(lines) + "\n"

    def csv(self) -> str:
        """One row per entry, every statistic."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(
            ["agent", "spec", "games", "wins", "win_rate", "ci_low", "ci_high", "paired_ci_low", "paired_ci_high",
             "margin", "margin_ci_half_width", "decisions", "choice_decisions", "seconds_per_choice",
             "slowest_seconds", "seconds_per_decision", "rating_ordinal", "rating_mu", "rating_sigma"]
        )  # fmt: skip
        for s in self.agents:
            rating = [s.rating.ordinal, s.rating.mu, s.rating.sigma] if s.rating else ["", "", ""]
            writer.writerow(
                [s.label, s.spec, s.games, s.wins, s.win_rate, s.ci_low, s.ci_high, s.paired_low, s.paired_high,
                 s.margin, s.margin_half_width, s.decisions, s.choices, s.seconds_per_choice, s.slowest,
                 s.seconds_per_decision, *rating]
            )  # fmt: skip
        return buffer.getvalue()

    def games_csv(self) -> str:
        """One row per game: which entry sat where, the scores, the winners."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["match", "rotation", "match_seed", "seat_agents", "scores", "winners", "rounds", "actions"])
        for g in self.games:
            writer.writerow(
                [g.match, g.rotation, g.match_seed, " ".join(self.lineup[e] for e in g.seat_entries),
                 " ".join(str(s) for s in g.scores), " ".join(map(str, g.winners)), g.rounds, g.actions]
            )  # fmt: skip
        return buffer.getvalue()

    def write(self, out_dir: str) -> list[str]:
        """Write ``results.md``, ``results.csv`` and ``games.csv`` into ``out_dir``; return the paths."""
        os.makedirs(out_dir, exist_ok=True)
        paths = []
        for name, text in (
            ("results.md", self.markdown()),
            ("results.csv", self.csv()),
            ("games.csv", self.games_csv()),
        ):
            path = os.path.join(out_dir, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            paths.append(path)
        return paths


# -- the entry point -------------------------------------------------------------------


def evaluate(
    lineup: Sequence[str],
    matches: int = 100,
    *,
    rules: str = "pagat",
    num_players: int = 2,
    partnerships: bool | None = None,
    target: int | None = None,
    opening: str | None = None,
    seed: int = 0,
    workers: int = 2,
    records_dir: str | None = None,
    progress: bool = True,
    agent_factory: AgentFactory | None = None,
) -> EvaluationResult:
    """Play ``matches`` duplicate matches of ``lineup`` and summarize them (see the module docstring).

    ``lineup`` holds agent specs for ``agents.registry.make_agent`` (or for
    ``agent_factory(spec, seed)``, which must be picklable when
    ``workers > 1``). ``workers=1`` plays in this process. ``records_dir``,
    if given, receives one game record per game. Raises ValueError for bad
    arguments, EvaluationError if an agent misbehaves.
    """
    if isinstance(lineup, str) or not all(isinstance(s, str) and s.strip() for s in lineup):
        raise ValueError(f"lineup={lineup!r} must be a list of agent names such as ['greedy', 'random']")
    lineup = [s.strip() for s in lineup]
    for name, value in (("matches", matches), ("workers", workers)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}={value!r} is not allowed; allowed: a positive whole number")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed={seed!r} is not allowed; allowed: a whole number")
    table = make_rules(rules, num_players, partnerships, target, opening)
    seating = seat_lineup(len(lineup), table)
    factory = agent_factory or default_agent_factory
    for i, spec in enumerate(lineup):  # fail early and clearly on a bad name
        try:
            factory(spec, 0)
        except ValueError as err:
            raise ValueError(f"lineup[{i}]={spec!r}: {err}") from None
    if records_dir is not None:
        os.makedirs(records_dir, exist_ok=True)
    config = _Config(table, tuple(lineup), seating, seed, records_dir, agent_factory)
    games = _play_all(config, matches, workers, progress)
    return EvaluationResult(
        lineup=list(lineup),
        rules=table,
        matches=matches,
        rotations=seating.rotations,
        seed=seed,
        games=games,
        agents=summarize(games, lineup, table),
        seating=seating,
    )


def _play_all(config: _Config, matches: int, workers: int, progress: bool) -> list[GameResult]:
    from tqdm import tqdm

    bar = tqdm(total=matches, unit="match", desc="evaluating", disable=not progress, file=sys.stderr)
    by_match: dict[int, list[GameResult]] = {}
    try:
        if workers == 1 or matches == 1:
            runner = _Runner(config)
            for k in range(matches):
                by_match[k] = runner.play_match(k)
                bar.update()
        else:
            _play_parallel(config, matches, min(workers, matches), by_match, bar)
    finally:
        bar.close()
    return [g for k in range(matches) for g in by_match[k]]


def _play_parallel(config: _Config, matches: int, workers: int, by_match: dict, bar) -> None:
    import multiprocessing
    from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait

    # spawn, not fork: a parent that already runs torch threads must not be forked.
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker, initargs=(config,))
    try:
        pending = {pool.submit(_worker_match, k): k for k in range(matches)}
        while pending:
            done, _ = wait(pending, return_when=FIRST_EXCEPTION)
            for future in done:
                k = pending.pop(future)
                by_match[k] = future.result()  # re-raises a worker's error here
                bar.update()
    except BaseException:  # an agent's error or Ctrl-C: stop at once rather than finish the matches under way
        _stop_workers(pool)
        raise
    pool.shutdown()


def _stop_workers(pool) -> None:
    """Drop the queued matches and end the worker processes (the executor offers no public way to end them)."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


# -- command line ------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agents.evaluate",
        description="Play duplicate matches between agents and print a results table (Markdown).",
        epilog="Seating: without partnerships give one agent per seat; with four-seat partnerships give two "
        "(one per team) or four (in seat order). Every duplicate match is played under each seat rotation.",
    )
    parser.add_argument("lineup", nargs="+", metavar="AGENT", help="agent specs: random, greedy, heuristic, search...")
    parser.add_argument("--matches", type=int, default=100, help="duplicate matches to play (default 100)")
    parser.add_argument("--rules", default="pagat", choices=["pagat", "fives"])
    parser.add_argument("--players", type=int, default=2, choices=[2, 3, 4])
    parser.add_argument("--partnerships", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--target", type=int, default=None, help="points to win (default: the rule set's)")
    parser.add_argument("--opening", default=None, choices=["winners_choice", "descending"], help="fives only")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2, help="worker processes (1: play in this process)")
    parser.add_argument("--out", metavar="DIR", help="write results.md, results.csv, games.csv and records/ here")
    parser.add_argument("--no-records", action="store_true", help="with --out, do not write the game records")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return parser


def main(argv: list[str] | None = None, agent_factory: AgentFactory | None = None) -> int:
    args = _parser().parse_args(argv)
    records = os.path.join(args.out, "records") if args.out and not args.no_records else None
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
            workers=args.workers,
            records_dir=records,
            progress=not args.no_progress,
            agent_factory=agent_factory,
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
    if args.out:
        paths = result.write(args.out)
        if records:
            paths.append(os.path.join(records, ""))
        print(f"\nWritten: {', '.join(paths)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
