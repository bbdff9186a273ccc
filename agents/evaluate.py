"""Duplicate-match evaluation, by its historical name: ``python -m agents.evaluate greedy random --matches 1000``.

The harness lives in the package :mod:`agents.evaluation` (one module per
job); this module keeps the command and every name it always offered.
"""

from __future__ import annotations

import sys

from .evaluation import (
    Z95,
    AgentFactory,
    AgentStats,
    EvaluationError,
    EvaluationResult,
    GameResult,
    MatchConfig,
    MatchMap,
    Runner,
    Seating,
    default_agent_factory,
    derive_seed,
    entry_labels,
    evaluate,
    main,
    match_seed,
    mean_interval,
    play_in_worker,
    process_map,
    record_name,
    seat_lineup,
    serial_map,
    summarize,
    wilson_interval,
)

__all__ = [
    "Z95",
    "AgentFactory",
    "AgentStats",
    "EvaluationError",
    "EvaluationResult",
    "GameResult",
    "MatchConfig",
    "MatchMap",
    "Runner",
    "Seating",
    "default_agent_factory",
    "derive_seed",
    "entry_labels",
    "evaluate",
    "main",
    "match_seed",
    "mean_interval",
    "play_in_worker",
    "process_map",
    "record_name",
    "seat_lineup",
    "serial_map",
    "summarize",
    "wilson_interval",
]

if __name__ == "__main__":
    sys.exit(main())
