"""Rollout workers as Ray actors (``run.backend: ray``): the shards of an update played anywhere on a cluster.

One actor per shard (one CPU each), started once and set up with the same
initializer as a worker process; each update sends every actor its shard
and the current weights (put into Ray's object store once, shared by all).
The learner stays in the driver. A shard is a pure function of its matches
and the weights, so an actor that dies (its node lost, its process killed)
is replaced by a fresh one that plays the same shard again: the update goes
on with the same batch, each shard counted exactly once. Needs ``ray``.
"""

from __future__ import annotations

from collections.abc import Callable

import ray
from ray.exceptions import RayActorError

from agents.ray_pool import connect

#: How often one shard may lose its actor within one update before the update gives up.
MAX_REPLACEMENTS = 3


@ray.remote(num_cpus=1)
class RolloutActor:
    """One rollout worker: ``initializer(*initargs)`` once, then ``fn(*args)`` calls."""

    def __init__(self, initializer: Callable, initargs: tuple) -> None:
        initializer(*initargs)

    def run(self, fn: Callable, *args):
        return fn(*args)

    def node(self) -> str:
        return ray.get_runtime_context().get_node_id()


class RayBackend:
    """``count`` rollout actors; the rollout pool's backend interface (see :func:`.parallel.make_backend`)."""

    def __init__(self, count: int, initializer: Callable, initargs: tuple, address: str | None = None) -> None:
        self.started = connect(address)
        self.initializer, self.initargs = initializer, initargs
        self.actors = [self._new() for _ in range(count)]
        self.replaced = 0  # actors replaced after dying, over the backend's life

    def _new(self):
        return RolloutActor.remote(self.initializer, self.initargs)

    def submit(self, fn: Callable, calls: list[tuple]) -> list:
        """Start call i on actor i (modulo the actor count); dict arguments (weights) go to the object store once."""
        stored: dict[int, ray.ObjectRef] = {}
        handles = []
        for i, args in enumerate(calls):
            for a in args:
                if isinstance(a, dict) and id(a) not in stored:
                    stored[id(a)] = ray.put(a)
            args = tuple(stored[id(a)] if isinstance(a, dict) else a for a in args)
            slot = i % len(self.actors)
            handles.append((slot, fn, args, self.actors[slot].run.remote(fn, *args)))
        return handles

    def gather(self, handles: list) -> list:
        """Each call's result in call order; a call whose actor died is played again on a fresh actor."""
        out = []
        for slot, fn, args, ref in handles:
            for attempt in range(MAX_REPLACEMENTS + 1):
                try:
                    out.append(ray.get(ref))
                    break
                except RayActorError as err:
                    if attempt == MAX_REPLACEMENTS:
                        raise RuntimeError(
                            f"rollout shard {slot} lost its Ray actor {MAX_REPLACEMENTS + 1} times in one update; "
                            f"last error: {err}"
                        ) from err
                    self.actors[slot] = self._new()
                    self.replaced += 1
                    ref = self.actors[slot].run.remote(fn, *args)
        return out

    def nodes(self) -> list[str]:
        """The node each actor runs on."""
        return ray.get([actor.node.remote() for actor in self.actors])

    def close(self) -> None:
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
        if self.started:
            ray.shutdown()
