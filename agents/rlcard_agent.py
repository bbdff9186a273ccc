"""RLCard's DMC and NFSP networks as agents: ``dmc:PATH`` and ``nfsp:PATH`` in the harness and terminal play.

Both train one network per seat (self-play), so the agent at seat ``s``
plays network ``s`` (of two-player ``pagat``, the table they were trained
at). ``dmc:PATH`` reads the ``model.tar`` that RLCard's ``DMCTrainer``
writes (its ``model_state_dict`` list) and plays the legal action of highest
value, as RLCard's ``eval_step`` does. ``nfsp:PATH`` reads a file of format
:data:`NFSP_FORMAT` (each seat's average-policy network) and samples from the
average policy over the legal actions, as RLCard's NFSP evaluates. Needs
``rlcard`` (the ``baselines`` extra).
"""

from __future__ import annotations

import numpy as np
import torch
from rlcard.agents.dmc_agent.model import DMCNet
from rlcard.agents.nfsp_agent import AveragePolicyNetwork

from allfives_env.core import NUM_ACTIONS, SeatView
from allfives_env.views.observation import encode_observation, observation_size

from .base import Agent

NFSP_FORMAT = "allfives-nfsp/1"


def _read(kind: str, path: str, what: str, build) -> list[torch.nn.Module]:
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
        nets = build(data)
    except Exception as err:  # torch and pickle fail in many ways on a broken file
        raise ValueError(f"{kind}:{path}: not {what} ({' '.join(str(err).split())[:200]})") from None
    return [net.eval() for net in nets]


def _dmc_nets(data: dict) -> list[DMCNet]:
    nets = []
    for state in data["model_state_dict"]:
        weights = [state[k] for k in sorted(state, key=lambda k: int(k.split(".")[1])) if k.endswith("weight")]
        if weights[0].shape[1] != observation_size(False) + NUM_ACTIONS:
            raise ValueError(f"its input has {weights[0].shape[1]} numbers, not observation + one-hot action")
        net = DMCNet((observation_size(False),), (NUM_ACTIONS,), [int(w.shape[0]) for w in weights[:-1]])
        net.load_state_dict(state)
        nets.append(net)
    return nets


def _nfsp_nets(data: dict) -> list[AveragePolicyNetwork]:
    if data.get("format") != NFSP_FORMAT:
        raise ValueError(f"not a file of format {NFSP_FORMAT}")
    nets = []
    for state in data["seats"]:
        net = AveragePolicyNetwork(NUM_ACTIONS, [observation_size(False)], list(data["mlp_layers"]))
        net.load_state_dict(state)
        nets.append(net)
    return nets


class DMCAgent(Agent):
    """Plays the legal action of highest value under its seat's DMC network."""

    def __init__(self, path: str, seed: int | None = None) -> None:
        super().__init__(seed)
        self.nets = _read("dmc", path, "a DMC model.tar written by RLCard's DMCTrainer", _dmc_nets)
        self.name = f"dmc:{path}"

    def act(self, view: SeatView) -> int:
        legal = list(view.legal)
        if len(legal) == 1:
            return legal[0]
        obs = torch.from_numpy(encode_observation(view).astype(np.float32)).repeat(len(legal), 1)
        actions = torch.zeros(len(legal), NUM_ACTIONS)
        actions[range(len(legal)), legal] = 1.0
        with torch.no_grad():
            values = self.nets[view.seat % len(self.nets)](obs, actions)
        return legal[int(values.argmax())]


class NFSPAgent(Agent):
    """Samples from its seat's NFSP average policy, restricted to the legal actions."""

    def __init__(self, path: str, seed: int | None = None) -> None:
        super().__init__(seed)
        self.nets = _read("nfsp", path, f"a file of format {NFSP_FORMAT}", _nfsp_nets)
        self.name = f"nfsp:{path}"

    def act(self, view: SeatView) -> int:
        legal = list(view.legal)
        if len(legal) == 1:
            return legal[0]
        obs = torch.from_numpy(encode_observation(view).astype(np.float32))[None]
        with torch.no_grad():
            probs = self.nets[view.seat % len(self.nets)](obs)[0, legal].exp().numpy()
        total = float(probs.sum())
        weights = probs / total if total > 0 else None
        return self.rng.choices(legal, weights=weights)[0]
