"""An RLlib checkpoint as an agent: ``rllib:PATH`` in the harness and terminal play.

PATH is what ``Algorithm.save_to_path`` wrote (the module ``shared`` is read
from ``learner_group/learner/rl_module/shared`` inside it), or the folder of
one RL module. The seat's view is encoded exactly as the environment
observes it (float32, with the legal actions as the mask), the module's
inference pass scores the actions and the best legal one is played
(``sample=True`` draws from the masked softmax instead). Loading a module
does not start Ray. Needs ``ray[rllib]``.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule

from allfives_env.core import SeatView
from allfives_env.views.observation import action_mask, encode_observation, observation_size

from .base import Agent

#: The module id the example trains: one policy shared by every seat.
SHARED = "shared"


def shared_policy(agent_id: str, episode: object, **kwargs: object) -> str:
    """RLlib's policy mapping: every seat plays ``shared``. Module-level, so checkpoints pickle it by name."""
    return SHARED


def module_dir(path: str | os.PathLike, module_id: str = SHARED) -> Path:
    """The folder of one RL module inside an algorithm checkpoint (or ``path`` itself if it is one)."""
    path = Path(path)
    candidates = [path / "learner_group" / "learner" / "rl_module" / module_id, path / "rl_module" / module_id, path]
    for candidate in candidates:
        if (candidate / "class_and_ctor_args.pkl").is_file():
            return candidate
    raise ValueError(
        f"rllib:{path}: no RL module {module_id!r} found; give the folder Algorithm.save_to_path wrote "
        "(with learner_group/learner/rl_module/<id> inside) or the folder of one RL module"
    )


class RLlibAgent(Agent):
    """Plays the best legal action (or a masked softmax sample) of an RLlib RL module."""

    def __init__(self, path: str | os.PathLike, seed: int | None = None, module_id: str = SHARED,
                 sample: bool = False) -> None:  # fmt: skip
        super().__init__(seed)
        self.path = Path(path)
        self.sample = sample
        self.module = RLModule.from_checkpoint(module_dir(self.path.resolve(), module_id))
        self.module.eval()
        space = self.module.observation_space
        inner = space["observation"] if hasattr(space, "spaces") else space
        size = int(np.prod(inner.shape))
        if size not in (observation_size(False), observation_size(True)):
            raise ValueError(
                f"rllib:{path}: the module observes {size} numbers; the environment's observation has "
                f"{observation_size(False)} (or {observation_size(True)} with history=True)"
            )
        self.history = size == observation_size(True)
        self.name = f"rllib:{self.path.name}"

    def logits(self, view: SeatView) -> np.ndarray:
        """The module's masked logits over all 114 actions for this view."""
        obs = torch.from_numpy(encode_observation(view, self.history).astype(np.float32))[None]
        mask = torch.from_numpy(action_mask(view.legal).astype(np.float32))[None]
        with torch.no_grad():
            out = self.module.forward_inference({Columns.OBS: {"observation": obs, "action_mask": mask}})
        return out[Columns.ACTION_DIST_INPUTS][0].numpy()

    def act(self, view: SeatView) -> int:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        scores = self.logits(view)[list(legal)]
        if not self.sample:
            return legal[int(scores.argmax())]
        top = float(scores.max())
        return self.rng.choices(legal, weights=[math.exp(float(x) - top) for x in scores])[0]


def load_rllib_agent(path: str, seed: int | None = None) -> RLlibAgent:
    return RLlibAgent(path, seed=seed)
