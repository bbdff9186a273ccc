"""Duplicate matches as Ray tasks: the harness's match backend for a Ray cluster (``--ray [ADDRESS]``).

Each duplicate match is one task (one CPU) that plays it with
:func:`agents.evaluation.pool.play_in_worker`; Ray places the tasks on every
node of the cluster and reuses its worker processes, which keep their agents
from one match to the next. The harness sorts what comes back by match
number, so the tables are the same as those of a local run with the same
seed.

Every node needs this package installed (the same version), as it would to
run the command itself. Needs ``ray`` (the ``ray`` extra); the harness imports
this module only when asked for Ray.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import ray

from ..ray_pool import connect
from .games import GameResult, MatchConfig
from .pool import MatchDone, play_in_worker


@ray.remote(num_cpus=1, scheduling_strategy="SPREAD")  # spread the matches over the nodes
def _play_match(config: MatchConfig, match: int) -> tuple[list[GameResult], str]:
    return play_in_worker(config, match), ray.get_runtime_context().get_node_id()


class RayMatchMap:
    """A :data:`~agents.evaluation.MatchMap` that plays each match as a Ray task.

    ``address`` is where the cluster is (``"auto"``, ``"HOST:6379"``,
    ``"ray://HOST:10001"``); None starts a local instance unless Ray is already
    initialized in this process. A Ray instance this object started is shut
    down when the matches are done. ``workers`` is ignored: the cluster's CPUs
    decide how many matches run at once. ``matches_per_node`` counts, after a
    run, the matches each node played.
    """

    def __init__(self, address: str | None = None) -> None:
        self.address = address
        self.matches_per_node: Counter[str] = Counter()

    def __call__(self, config: MatchConfig, matches: Sequence[int], workers: int, done: MatchDone) -> None:
        started = connect(self.address)
        self.matches_per_node.clear()
        try:
            shared = ray.put(config)
            pending = {_play_match.remote(shared, k): k for k in matches}
            try:
                while pending:
                    finished, _ = ray.wait(list(pending), num_returns=1)
                    for ref in finished:
                        k = pending.pop(ref)
                        games, node = ray.get(ref)  # re-raises an agent's error (as its own type) here
                        self.matches_per_node[node] += 1
                        done(k, games)
            except BaseException:  # an agent's error or Ctrl-C: drop the matches not yet played
                for ref in pending:
                    ray.cancel(ref, force=True)
                raise
        finally:
            if started:
                ray.shutdown()
