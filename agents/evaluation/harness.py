"""The entry point of the harness: check the arguments, seat the line-up, play the matches, summarize them."""

from __future__ import annotations

import os
from collections.abc import Sequence

from allfives_env.core import make_rules

from ..factory import AgentFactory, default_agent_factory
from .games import MatchConfig
from .pool import MatchMap, play_all
from .report import EvaluationResult
from .seating import seat_lineup
from .stats import summarize


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
    seatings: str = "rotations",
    workers: int = 2,
    records_dir: str | None = None,
    progress: bool = True,
    agent_factory: AgentFactory | None = None,
    backend: MatchMap | None = None,
) -> EvaluationResult:
    """Play ``matches`` duplicate matches of ``lineup`` and summarize them (see :mod:`agents.evaluation`).

    ``lineup`` holds agent specs for ``agents.registry.make_agent`` (or for
    ``agent_factory(spec, seed)``, which must be picklable when
    ``workers > 1``). ``seatings="all"`` plays each duplicate match under
    every distinct seat order rather than the line-up's rotations alone (at
    three or more seats, who follows whom matters; see :mod:`.seating`).
    ``workers=1`` plays in this process. ``records_dir``,
    if given, receives one game record per game. ``backend`` replaces the
    process pool (see :mod:`agents.evaluation.pool`). Raises ValueError for
    bad arguments, EvaluationError if an agent misbehaves.
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
    seating = seat_lineup(len(lineup), table, seatings)
    factory = agent_factory or default_agent_factory
    for i, spec in enumerate(lineup):  # fail early and clearly on a bad name
        try:
            factory(spec, 0)
        except ValueError as err:
            raise ValueError(f"lineup[{i}]={spec!r}: {err}") from None
    if records_dir is not None:
        os.makedirs(records_dir, exist_ok=True)
    config = MatchConfig(table, tuple(lineup), seating, seed, records_dir, agent_factory)
    games = play_all(config, matches, workers, progress, backend)
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
