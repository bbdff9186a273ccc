"""The policy network and its checkpoint file: what the trainer writes and the policy agent reads.

The actor scores each legal action with one shared head over [state trunk
output, action features] and takes a softmax over the legal ones, so the
output always covers exactly the legal actions, whatever their number. The
critic is used only in training: it sees the observation plus the hidden
tiles (a centralised critic), which lowers the variance of the advantages
without letting the actor see anything a seat may not know.

A checkpoint is a ``torch.save`` dict loaded with ``weights_only=True`` (no
code runs on load). It names its format, the feature version it was trained
on, the network sizes, and a SHA-256 of the weights, so a truncated, corrupt
or foreign file is refused with an error naming the file and the problem.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import torch
from torch import nn

from .policy_features import ACTION_SIZE, FEATURE_VERSION, STATE_SIZE

from .checkpoint_file import CheckpointError, load_file

CHECKPOINT_FORMAT = "allfives-policy"
CHECKPOINT_VERSION = 1
#: The critic's extra input: the tiles of the other three relative seats and the boneyard.
GLOBAL_SIZE = 4 * 28
NEG = -1e9  # the logit of a padding slot


class PolicyNet(nn.Module):
    """Actor (state trunk + shared action head) and centralised critic."""

    def __init__(self, hidden: int = 256, action_hidden: int = 128) -> None:
        super().__init__()
        self.hidden = hidden
        self.action_hidden = action_hidden
        self.trunk = nn.Sequential(nn.Linear(STATE_SIZE, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.state_in = nn.Linear(hidden, action_hidden)
        self.action_in = nn.Linear(ACTION_SIZE, action_hidden, bias=False)
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(action_hidden, action_hidden), nn.ReLU())
        self.score = nn.Linear(action_hidden, 1)
        self.critic = nn.Sequential(
            nn.Linear(STATE_SIZE + GLOBAL_SIZE, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, 1),
        )

    def sizes(self) -> dict:
        return {"hidden": self.hidden, "action_hidden": self.action_hidden}

    def logits(self, states: torch.Tensor, actions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Logits [B, K] for states [B, S], padded action rows [B, K, A] and mask [B, K] (True = a legal action)."""
        s = self.state_in(self.trunk(states)).unsqueeze(1)
        z = self.head(s + self.action_in(actions))
        out = self.score(z).squeeze(-1)
        return out.masked_fill(~mask, NEG)

    def value(self, states: torch.Tensor, hidden_tiles: torch.Tensor) -> torch.Tensor:
        """The critic's estimate [B] of the return, from the state and the hidden tiles."""
        return self.critic(torch.cat([states, hidden_tiles], dim=-1)).squeeze(-1)

    def actor_state_dict(self) -> dict[str, torch.Tensor]:
        """The weights the actor needs (what a shipped policy keeps)."""
        return {k: v.detach().clone() for k, v in self.state_dict().items() if not k.startswith("critic.")}


def weights_digest(weights: dict[str, torch.Tensor]) -> str:
    """SHA-256 over the weights' names, shapes and bytes."""
    h = hashlib.sha256()
    for name in sorted(weights):
        tensor = weights[name].detach().to("cpu").contiguous()
        h.update(name.encode())
        h.update(str(tuple(tensor.shape)).encode())
        h.update(tensor.numpy().tobytes())
    return h.hexdigest()


def policy_payload(net: PolicyNet, *, actor_only: bool, **extra) -> dict:
    """The checkpoint dict for ``net``; ``extra`` (training state, metadata) is stored beside the weights."""
    weights = net.actor_state_dict() if actor_only else {k: v.detach().clone() for k, v in net.state_dict().items()}
    return {
        "format": CHECKPOINT_FORMAT,
        "version": CHECKPOINT_VERSION,
        "feature_version": FEATURE_VERSION,
        "model": net.sizes(),
        "actor_only": actor_only,
        "weights": weights,
        "weights_sha256": weights_digest(weights),
        **extra,
    }


def read_checkpoint(path: str | os.PathLike) -> dict:
    """Load and check a checkpoint dict; raise :class:`CheckpointError` naming the file and the problem."""
    path = Path(path)
    data, _ = load_file(path)  # sealed files checked byte for byte; one-line errors
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"checkpoint {str(path)!r} is not an allfives policy checkpoint (no 'format' field)")
    if data.get("version") != CHECKPOINT_VERSION:
        raise CheckpointError(
            f"checkpoint {str(path)!r} has format version {data.get('version')!r}; this code reads {CHECKPOINT_VERSION}"
        )
    if data.get("feature_version") != FEATURE_VERSION:
        raise CheckpointError(
            f"checkpoint {str(path)!r} was trained on feature version {data.get('feature_version')!r}; "
            f"this code encodes version {FEATURE_VERSION}"
        )
    weights = data.get("weights")
    if not isinstance(weights, dict) or weights_digest(weights) != data.get("weights_sha256"):
        raise CheckpointError(f"checkpoint {str(path)!r} is corrupt: its weights do not match their SHA-256")
    model = data.get("model")
    if not isinstance(model, dict) or not {"hidden", "action_hidden"} <= set(model):
        raise CheckpointError(f"checkpoint {str(path)!r} lacks the network sizes ('model')")
    if not all(isinstance(model[k], int) and 1 <= model[k] <= 4096 for k in ("hidden", "action_hidden")):
        raise CheckpointError(f"checkpoint {str(path)!r} has network sizes out of range (1 to 4096): {model!r}")
    return data


def net_from_checkpoint(data: dict, path: str | os.PathLike = "<checkpoint>") -> PolicyNet:
    """A network holding the checkpoint's weights (the critic left fresh if the file keeps the actor only)."""
    net = PolicyNet(int(data["model"]["hidden"]), int(data["model"]["action_hidden"]))
    try:
        net.load_state_dict(data["weights"], strict=not data.get("actor_only", False))
    except RuntimeError as error:
        raise CheckpointError(f"checkpoint {str(path)!r} does not fit the network: {error}") from None
    return net


class NumpyActor:
    """The actor as plain numpy: one decision in a few microseconds, no torch threads involved."""

    def __init__(self, net: PolicyNet) -> None:
        p = {k: v.detach().to("cpu").double().numpy() for k, v in net.actor_state_dict().items()}
        self.w1, self.b1 = p["trunk.0.weight"].T, p["trunk.0.bias"]
        self.w2, self.b2 = p["trunk.2.weight"].T, p["trunk.2.bias"]
        self.ws, self.bs = p["state_in.weight"].T, p["state_in.bias"]
        self.wa = p["action_in.weight"].T
        self.wh, self.bh = p["head.1.weight"].T, p["head.1.bias"]
        self.wo, self.bo = p["score.weight"][0], p["score.bias"][0]

    def logits(self, state: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Logits [K] of one decision: state [S], action rows [K, A]."""
        h = np.maximum(state @ self.w1 + self.b1, 0.0)
        h = np.maximum(h @ self.w2 + self.b2, 0.0)
        z = np.maximum(h @ self.ws + self.bs + actions @ self.wa, 0.0)
        z = np.maximum(z @ self.wh + self.bh, 0.0)
        return z @ self.wo + self.bo
