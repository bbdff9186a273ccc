"""The trained policy as an agent: ``checkpoint:PATH`` and ``trained`` in the harness and terminal play.

It encodes the seat's view exactly as training did (:mod:`agents.policy_features`),
scores the legal actions with the checkpoint's actor and plays the best one,
or samples from the softmax when ``sample=True``. Only legal actions can come
out: the network scores the rows of ``view.legal`` and nothing else.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from allfives_env.core import SeatView

from .base import Agent
from .policy_features import encode_decision
from .policy_net import NumpyActor, net_from_checkpoint, read_checkpoint

#: The checkpoint shipped with the package, trained with the default config.
DEFAULT_CHECKPOINT = Path(__file__).resolve().parent / "checkpoints" / "default.pt"


class PolicyAgent(Agent):
    """Plays the argmax (or, with ``sample=True``, a softmax sample) of a trained actor."""

    def __init__(self, path: str | os.PathLike, seed: int | None = None, sample: bool = False) -> None:
        super().__init__(seed)
        self.path = Path(path)
        self.sample = sample
        data = read_checkpoint(self.path)
        self.actor = NumpyActor(net_from_checkpoint(data, self.path))
        self.trained_steps = int(data.get("steps", 0))
        self.name = f"checkpoint:{self.path.name}"

    def act(self, view: SeatView) -> int:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        state, actions = encode_decision(view)
        logits = self.actor.logits(state, actions)
        if not self.sample:
            return legal[int(logits.argmax())]
        top = float(logits.max())
        weights = [math.exp(float(x) - top) for x in logits]
        return self.rng.choices(legal, weights=weights)[0]


def load_policy_agent(path: str | os.PathLike | None, seed: int | None = None, sample: bool = False) -> PolicyAgent:
    """The agent of a checkpoint file, or of the shipped default checkpoint when ``path`` is None."""
    agent = PolicyAgent(DEFAULT_CHECKPOINT if path is None else path, seed=seed, sample=sample)
    if path is None:
        agent.name = "trained"
    return agent
