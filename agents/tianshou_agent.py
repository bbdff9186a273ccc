"""A Tianshou DQN network as an agent: ``tianshou:PATH`` in the harness and terminal play.

PATH is a file ``torch.save`` wrote as ``{"format": FORMAT, "hidden_sizes",
"observation_size", "state_dict"}``: the Q network (Tianshou's ``Net``) of a
DQN trained on the environment's observation (``python -m agents.baselines``
writes these). The legal action with the highest Q value is played. Needs
``tianshou`` (the ``ray`` extra).
"""

from __future__ import annotations

import numpy as np
import torch
from tianshou.utils.net.common import Net

from allfives_env.core import NUM_ACTIONS, SeatView
from allfives_env.views.observation import encode_observation, observation_size

from .base import Agent

FORMAT = "allfives-tianshou-dqn/1"


def read_network(path: str) -> Net:
    """The Q network saved at ``path``; ValueError in one line when the file is not such a network."""
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"not a file of format {FORMAT}")
        size = int(data["observation_size"])
        if size != observation_size(False):
            raise ValueError(f"it observes {size} numbers, the environment {observation_size(False)}")
        net = Net(state_shape=(size,), action_shape=NUM_ACTIONS, hidden_sizes=list(data["hidden_sizes"]))
        net.load_state_dict(data["state_dict"])
    except Exception as err:  # torch and pickle fail in many ways on a broken file
        raise ValueError(
            f"tianshou:{path}: not a saved Tianshou DQN network ({' '.join(str(err).split())[:200]})"
        ) from None
    return net.eval()


class TianshouAgent(Agent):
    """Plays the legal action of highest Q value."""

    def __init__(self, path: str, seed: int | None = None) -> None:
        super().__init__(seed)
        self.net = read_network(path)
        self.name = f"tianshou:{path}"

    def act(self, view: SeatView) -> int:
        legal = list(view.legal)
        if len(legal) == 1:
            return legal[0]
        obs = torch.from_numpy(encode_observation(view).astype(np.float32))[None]
        with torch.no_grad():
            q, _ = self.net(obs)
        return legal[int(q[0, legal].argmax())]
