"""Rollouts on several cores: the matches of an update split into shards, one per process.

Stepping the rules core and encoding decisions is pure Python, so one
process uses one core. With ``train.rollout_workers = N`` the main process
plays the first shard and N - 1 worker processes (started once, with
``spawn``) play the others, each with a copy of the current weights sent
for the update. Every match samples from its own seeded generator, so the
shards' results do not depend on which process played them; the batches are
joined in shard order, which keeps a run reproducible.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import torch

from agents.policy_net import PolicyNet
from allfives_env.core import Rules

from .rollout import Batch, MatchSpec, RolloutWorker

_worker: RolloutWorker | None = None
_nets: dict[str, PolicyNet] = {}


def _init(rules: Rules, points: float, win: float, hidden: int, action_hidden: int) -> None:
    global _worker
    torch.set_num_threads(1)
    _worker = RolloutWorker(rules, torch.device("cpu"), points, win)
    _nets["current"] = PolicyNet(hidden, action_hidden).eval()
    _nets["pool"] = PolicyNet(hidden, action_hidden).eval()


def _play_shard(specs: list[MatchSpec], actor: dict, pool_actor: dict | None, learn: bool):
    _nets["current"].load_state_dict(actor, strict=False)
    if pool_actor is not None:
        _nets["pool"].load_state_dict(pool_actor, strict=False)
    with torch.no_grad():
        return _worker.play(specs, _nets["current"], _nets["pool"], learn=learn)


def join(parts: list[tuple[Batch, list]]) -> tuple[Batch, list]:
    """One batch (trajectory indices shifted) and one result list, in shard order."""
    batch, results = Batch(), []
    for part, part_results in parts:
        offset = len(batch)
        batch.states += part.states
        batch.actions += part.actions
        batch.hidden += part.hidden
        batch.chosen += part.chosen
        batch.logp += part.logp
        batch.reward += part.reward
        batch.trajectories += [[i + offset for i in steps] for steps in part.trajectories]
        results += part_results
    return batch, results


class RolloutPool:
    """Plays a list of matches over ``workers`` processes (this one included)."""

    def __init__(self, worker: RolloutWorker, workers: int, hidden: int, action_hidden: int) -> None:
        self.worker = worker
        self.workers = workers
        self.executor = None
        if workers > 1:
            self.executor = ProcessPoolExecutor(
                workers - 1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_init,
                initargs=(worker.rules, worker.points_weight, worker.win_weight, hidden, action_hidden),
            )

    def play(self, specs: list[MatchSpec], net: PolicyNet, pool_net: PolicyNet | None = None, learn: bool = True):
        """Like :meth:`RolloutWorker.play`, over all processes."""
        if self.executor is None or len(specs) < 2 * self.workers:
            with torch.no_grad():
                return self.worker.play(specs, net, pool_net, learn=learn)
        size = -(-len(specs) // self.workers)
        shards = [specs[i : i + size] for i in range(0, len(specs), size)]
        actor = {k: v.cpu() for k, v in net.actor_state_dict().items()}
        pool_actor = {k: v.cpu() for k, v in pool_net.actor_state_dict().items()} if pool_net is not None else None
        futures = [self.executor.submit(_play_shard, shard, actor, pool_actor, learn) for shard in shards[1:]]
        with torch.no_grad():
            parts = [self.worker.play(shards[0], net, pool_net, learn=learn)]
        parts += [f.result() for f in futures]
        return join(parts)

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(cancel_futures=True)
            self.executor = None
