"""Duplicate-match evaluation: play a line-up of agents against each other and report who is better.

``python -m agents.evaluate greedy random --matches 1000 --rules pagat --players 2 --out results/g_vs_r``

Units. A *game* is one match of All Fives played to the target. A *duplicate
match* is played once under every seat rotation of the line-up, on the same
deals, so the luck of the deal cancels (or, with ``seatings="all"``, under
every seat order); ``matches`` counts duplicate matches, so
``games = matches * rotations``.

One module per job:

- :mod:`.seating`: match seeds, and which entry sits in which seat under each rotation or seat order;
- :mod:`.games`: one runner plays the games of a match and checks every action;
- :mod:`.pool`: where the matches are played (this process, worker processes, or a pluggable backend);
- :mod:`.stats`: Wilson and normal intervals, per-entry statistics and ratings;
- :mod:`.report`: the result and its Markdown and CSV tables;
- :mod:`.harness`: :func:`evaluate`, the entry point;
- :mod:`.cli`: the command line.

Reproducibility: everything except timings depends only on the line-up, the
rules and ``seed``, never on ``workers`` or the backend.
"""

from ..factory import AgentFactory, default_agent_factory
from ..seeding import derive_seed
from .cli import main
from .games import EvaluationError, GameResult, MatchConfig, Runner, record_name
from .harness import evaluate
from .pool import MatchMap, play_in_worker, process_map, serial_map
from .report import EvaluationResult
from .seating import Seating, entry_labels, match_seed, seat_lineup
from .stats import Z95, AgentStats, mean_interval, summarize, wilson_interval

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
