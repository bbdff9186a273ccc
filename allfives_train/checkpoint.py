"""Checkpoints that survive a kill at any moment, and the random state that makes resuming exact.

A file is written to a temporary name in the same directory, flushed to
disk, then renamed over the old one (``os.replace`` is atomic), so a reader
sees either the previous complete checkpoint or the new complete one. Every
checkpoint is sealed with the SHA-256 of all its bytes
(:mod:`agents.checkpoint_file`), is never written with a NaN or infinite
value, and is checked part by part before a run resumes from it.
"""

from __future__ import annotations

import math
import os
import random
import tempfile
from pathlib import Path

import numpy as np
import torch

from agents.checkpoint_file import serialize
from agents.policy_net import CheckpointError, PolicyNet, net_from_checkpoint, read_checkpoint

from .config import ConfigError, check_config


def atomic_write(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a crash leaves either the old file or the new one, never a part."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    if hasattr(os, "O_DIRECTORY"):  # make the rename itself durable
        dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def atomic_save(obj: dict, path: str | os.PathLike) -> None:
    """Save a checkpoint, sealed, atomically; FloatingPointError (nothing written) if a value is NaN or infinite."""
    atomic_write(path, serialize(obj))


def check_finite(net: torch.nn.Module, stats: dict, when: str) -> None:
    """Stop (FloatingPointError) when a loss or a weight has become NaN or infinite, before anything saves it."""
    bad = [k for k, v in stats.items() if isinstance(v, float) and not math.isfinite(v)]
    bad += [f"weight {k}" for k, v in net.state_dict().items() if v.is_floating_point() and not torch.isfinite(v).all()]
    if bad:
        raise FloatingPointError(
            f"training diverged in {when}: {', '.join(bad[:4])}{' ...' if len(bad) > 4 else ''} not finite "
            "(NaN or infinite); nothing was saved, the last checkpoint is kept; try a smaller train.lr"
        )


def capture_rng(py_rng: random.Random, generator: torch.Generator) -> dict:
    """Every random state a training run draws from, in a form ``weights_only`` loading accepts."""
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    return {
        "python": py_rng.getstate(),
        "torch_generator": generator.get_state(),
        "torch_global": torch.get_rng_state(),
        "numpy_global": [kind, keys.tolist(), int(pos), int(has_gauss), float(cached)],
    }


def restore_rng(state: dict, py_rng: random.Random, generator: torch.Generator, global_state: bool = True) -> None:
    """Put every random state back; with ``global_state=False`` only check that the global ones would load."""
    version, internal, gauss = state["python"]
    py_rng.setstate((version, tuple(internal), gauss))
    generator.set_state(state["torch_generator"])
    kind, keys, pos, has_gauss, cached = state["numpy_global"]
    numpy_state = (kind, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached)
    if global_state:
        torch.set_rng_state(state["torch_global"])
        np.random.set_state(numpy_state)
    else:
        torch.Generator().set_state(state["torch_global"])
        np.random.RandomState().set_state(numpy_state)


def read_training_checkpoint(path: str | os.PathLike) -> dict:
    """A checkpoint that holds a whole training state (not just a policy), checked part by part.

    The seal covers every byte of a new checkpoint; these checks also hold an
    older, unsealed one to the shapes and ranges a run can have produced.
    """
    data = read_checkpoint(path)
    name = repr(str(path))
    training = data.get("training")
    needed = {"optimizer", "iteration", "imitated", "steps", "matches", "recent", "pool", "rng", "config"}
    if not isinstance(training, dict) or not needed <= set(training):
        raise CheckpointError(
            f"checkpoint {name} holds a policy only, not a training state; --resume needs the run's checkpoint.pt"
        )
    if data.get("actor_only"):
        raise CheckpointError(f"checkpoint {name} holds the actor only, not the critic a run needs")
    net = net_from_checkpoint(data, path)
    try:
        _check_training(training, net)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, RuntimeError) as error:
        detail = " ".join(str(error).split())[:200] or type(error).__name__
        raise CheckpointError(f"checkpoint {name} holds a damaged training state: {detail}") from None
    try:
        training["config"] = check_config(training["config"])
    except ConfigError as error:
        raise CheckpointError(f"checkpoint {name} holds a config that is not valid: {error}") from None
    return data


def _count(value, what: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{what} is {value!r}, not a whole number >= 0")


def _check_training(t: dict, net: PolicyNet) -> None:
    """Raise (TypeError, ValueError, ...) naming the first part of a training state that a run cannot have written."""
    for key in ("iteration", "steps", "matches"):
        _count(t[key], key)
    _count(t.get("iterated", 0), "iterated")  # policy-iteration rounds done (older checkpoints: none)
    _count(t.get("experted", 0), "experted")  # expert-iteration rounds done (older checkpoints: none)
    if not isinstance(t["imitated"], bool):
        raise ValueError("'imitated' is not true or false")
    actor = net.actor_state_dict()
    if not isinstance(t["pool"], list):
        raise ValueError("the opponent pool is not a list")
    for i, snapshot in enumerate(t["pool"]):
        if not isinstance(snapshot, dict) or snapshot.keys() != actor.keys():
            raise ValueError(f"pool snapshot {i} does not hold the actor's weights")
        for key, weight in snapshot.items():
            if not isinstance(weight, torch.Tensor) or weight.shape != actor[key].shape:
                raise ValueError(f"pool snapshot {i}: {key} does not have the actor's shape")
    if not isinstance(t["recent"], dict) or not all(
        isinstance(v, list) and all(isinstance(x, (int, float)) and 0 <= x <= 1 for x in v)
        for v in t["recent"].values()
    ):
        raise ValueError("the recent results are not lists of numbers in [0, 1]")
    params = list(net.parameters())
    optimizer = t["optimizer"]
    ids = [i for group in optimizer["param_groups"] for i in group["params"]]
    if sorted(ids) != list(range(len(params))):
        raise ValueError("the optimizer state does not cover the network's parameters")
    for i, moments in optimizer["state"].items():
        for key, value in moments.items():
            if isinstance(value, torch.Tensor) and value.dim() > 0 and value.shape != params[i].shape:
                raise ValueError(f"optimizer {key} of parameter {i} has the wrong shape")
    torch.optim.Adam(params, lr=1.0).load_state_dict(optimizer)
    restore_rng(t["rng"], random.Random(), torch.Generator(), global_state=False)
