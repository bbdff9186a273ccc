"""Rollouts on several cores: the matches of an update split into shards, one per process.

The batched engine and the network's forward passes run in one thread, so
one process uses one core. With ``train.rollout_workers = N`` (N > 1), N
worker processes (started once, with ``spawn``) play the shards, each with a
copy of the current weights sent for the update, while this process waits;
their batches come back through shared memory, not the pipe. This process
then learns with ``run.threads`` threads while they wait. This process
never changes its thread count between the two (with deterministic kernels,
switching it every update slowed the update tenfold). Every match samples
from its own seeded generator, so the shards' results do not depend on which
process played them; the batches are joined in shard order, which keeps a
run reproducible. With N = 1 this process plays everything itself.

``run.backend: ray`` plays every shard on a Ray actor instead (one per
shard, on any node of the cluster; see :mod:`.ray_backend`) while this
process only learns. The shards are cut the same way, so a run is the same
on either backend.
"""

from __future__ import annotations

import itertools
import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import resource_tracker
from multiprocessing.shared_memory import SharedMemory

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
    """One batch (decision links shifted) and one result list, in shard order."""
    return Batch.concat([batch for batch, _ in parts]), [r for _, results in parts for r in results]


def _new_block(size: int) -> SharedMemory:
    """A shared-memory block that this process's exit will not unlink: the process that reads it does."""
    try:
        return SharedMemory(create=True, size=size, track=False)  # Python 3.13 and newer
    except TypeError:
        block = SharedMemory(create=True, size=size)
        resource_tracker.unregister(block._name, "shared_memory")
        return block


def _through_shared_memory(fn, args: tuple) -> tuple[bytes, str | None, list[int]]:
    """``fn(*args)`` pickled, with the bytes of its arrays left in one shared-memory block for the caller.

    A shard's batch is tens of megabytes; through the executor's pipe it took
    about a tenth of a rollout's time, most of it waiting for a core to read it.
    """
    buffers: list[pickle.PickleBuffer] = []
    head = pickle.dumps(fn(*args), protocol=5, buffer_callback=buffers.append)
    if not buffers:
        return head, None, []
    raws = [b.raw() for b in buffers]
    block = _new_block(max(1, sum(r.nbytes for r in raws)))
    at = 0
    for raw in raws:
        block.buf[at : at + raw.nbytes] = raw
        at += raw.nbytes
    block.close()
    return head, block.name, [r.nbytes for r in raws]


def _from_shared_memory(head: bytes, name: str | None, sizes: list[int]):
    """The result that :func:`_through_shared_memory` sent, its arrays copied out; the block is unlinked."""
    if name is None:
        return pickle.loads(head)
    block = SharedMemory(name=name)
    try:
        offsets = [0, *itertools.accumulate(sizes)]
        buffers = [bytearray(block.buf[a:b]) for a, b in itertools.pairwise(offsets)]
        return pickle.loads(head, buffers=buffers)
    finally:
        block.close()
        block.unlink()


class ProcessBackend:
    """Worker processes on this machine (``run.backend: multiprocessing``), one per shard."""

    def __init__(self, count: int, initializer, initargs: tuple) -> None:
        self.executor = ProcessPoolExecutor(
            count, mp_context=multiprocessing.get_context("spawn"), initializer=initializer, initargs=initargs
        )

    def submit(self, fn, calls: list[tuple]) -> list:
        """Start ``fn(*args)`` for each args in ``calls`` on the workers; the handles for :meth:`gather`."""
        return [self.executor.submit(_through_shared_memory, fn, args) for args in calls]

    def gather(self, handles: list) -> list:
        """The results of :meth:`submit`'s calls, in call order."""
        return [_from_shared_memory(*f.result()) for f in handles]

    def close(self) -> None:
        self.executor.shutdown(cancel_futures=True)


BACKENDS = ("multiprocessing", "ray")


def make_backend(name: str, workers: int, initargs: tuple, address: str | None = None):
    """The backend that plays the shards, or None when this process plays them all (one worker).

    A backend is started once with ``_init(*initargs)`` on each of its
    workers and then runs ``_play_shard`` calls: ``submit(fn, calls)``,
    ``gather(handles)`` (results in call order, each call's result exactly
    once) and ``close()``. What a shard does stays in :func:`_init` and
    :func:`_play_shard`, the same for every backend.
    """
    if name == "ray":
        from .ray_backend import RayBackend  # Ray is an optional extra

        return RayBackend(workers, _init, initargs, address)
    if name != "multiprocessing":
        raise ValueError(f"run.backend={name!r} is not allowed; allowed: {', '.join(map(repr, BACKENDS))}")
    return ProcessBackend(workers, _init, initargs) if workers > 1 else None


class RolloutPool:
    """Plays a list of matches as ``workers`` shards: worker processes or Ray actors."""

    def __init__(self, worker: RolloutWorker, workers: int, hidden: int, action_hidden: int,
                 backend: str = "multiprocessing", address: str | None = None) -> None:  # fmt: skip
        self.worker = worker
        self.workers = workers
        initargs = (worker.rules, worker.points_weight, worker.win_weight, hidden, action_hidden)
        self.backend = make_backend(backend, workers, initargs, address)

    def play(self, specs: list[MatchSpec], net: PolicyNet, pool_net: PolicyNet | None = None, learn: bool = True):
        """Like :meth:`RolloutWorker.play`, over all shards (the same shards, so the same batch, on any backend)."""
        if self.backend is None:
            with torch.no_grad():
                return self.worker.play(specs, net, pool_net, learn=learn)
        size = -(-len(specs) // self.workers)
        shards = [specs[i : i + size] for i in range(0, len(specs), size)]
        actor = {k: v.cpu() for k, v in net.actor_state_dict().items()}
        pool_actor = {k: v.cpu() for k, v in pool_net.actor_state_dict().items()} if pool_net is not None else None
        handles = self.backend.submit(_play_shard, [(shard, actor, pool_actor, learn) for shard in shards])
        return join(self.backend.gather(handles))

    def close(self) -> None:
        if self.backend is not None:
            self.backend.close()
            self.backend = None
