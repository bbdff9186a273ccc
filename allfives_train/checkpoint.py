"""Checkpoints that survive a kill at any moment, and the random state that makes resuming exact.

A file is written to a temporary name in the same directory, flushed to
disk, then renamed over the old one (``os.replace`` is atomic), so a reader
sees either the previous complete checkpoint or the new complete one.
"""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path

import numpy as np
import torch

from agents.policy_net import CheckpointError, read_checkpoint


def atomic_save(obj, path: str | os.PathLike) -> None:
    """``torch.save`` to ``path`` so that a crash never leaves a partial file there."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(obj, f)
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


def capture_rng(py_rng: random.Random, generator: torch.Generator) -> dict:
    """Every random state a training run draws from, in a form ``weights_only`` loading accepts."""
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    return {
        "python": py_rng.getstate(),
        "torch_generator": generator.get_state(),
        "torch_global": torch.get_rng_state(),
        "numpy_global": [kind, keys.tolist(), int(pos), int(has_gauss), float(cached)],
    }


def restore_rng(state: dict, py_rng: random.Random, generator: torch.Generator) -> None:
    version, internal, gauss = state["python"]
    py_rng.setstate((version, tuple(internal), gauss))
    generator.set_state(state["torch_generator"])
    torch.set_rng_state(state["torch_global"])
    kind, keys, pos, has_gauss, cached = state["numpy_global"]
    np.random.set_state((kind, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))


def read_training_checkpoint(path: str | os.PathLike) -> dict:
    """A checkpoint that holds a whole training state (not just a policy), checked."""
    data = read_checkpoint(path)
    training = data.get("training")
    needed = {"optimizer", "iteration", "imitated", "steps", "pool", "rng", "config"}
    if not isinstance(training, dict) or not needed <= set(training):
        raise CheckpointError(
            f"checkpoint {str(path)!r} holds a policy only, not a training state; "
            "--resume needs the run's checkpoint.pt"
        )
    return data
