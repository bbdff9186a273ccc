"""The policy network and its checkpoint file: what the trainer writes and the policy agent reads.

The network reads exactly what the environments give a seat (the observation
contract): the 192-value observation, the action mask and the per-action
feature rows (``action_features=True``), all small integers that it scales
itself. The actor embeds the observation once, then scores every legal
action's row with one shared head and takes a softmax over the legal ones,
so the output always covers exactly the legal actions. The critic is used
only in training: it reads the environment's global ``state()`` vector
(every hand, and the seat to act; a centralised critic), which lowers the
variance of the advantages without letting the actor see anything a seat
may not know.

A checkpoint is a ``torch.save`` dict loaded with ``weights_only=True`` (no
code runs on load). It names its format and version, the input contract it
was trained on, the network sizes, and a SHA-256 of the weights, so a
truncated, corrupt, foreign or outdated file is refused with one line naming
the file and the problem.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import torch
from torch import nn

from allfives_env.views.action_features import ACTION_FEATURE_SIZE, action_features_high
from allfives_env.views.observation import OBSERVATION_SIZE, observation_high
from allfives_env.views.state_vector import STATE_SIZE, state_high

from .checkpoint_file import CheckpointError, load_file

CHECKPOINT_FORMAT = "allfives-policy"
#: 2: inputs are the environments' observation, mask and action features (1 read a private encoding).
CHECKPOINT_VERSION = 2
#: What a version-2 network reads; a checkpoint records it and is refused if the sizes changed.
CONTRACT = {"observation": OBSERVATION_SIZE, "action_features": ACTION_FEATURE_SIZE, "state": STATE_SIZE}
NEG = -1e9  # the logit of an illegal action or a padding slot


def _inverse(high: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(1.0 / np.maximum(high.astype(np.float32), 1.0))


class PolicyNet(nn.Module):
    """Actor (observation trunk + shared per-action head) and centralised critic (observation + state)."""

    def __init__(self, hidden: int = 128, action_hidden: int = 64) -> None:
        super().__init__()
        self.hidden = hidden
        self.action_hidden = action_hidden
        # Each input divided by the largest value it can take: every feature in [0, 1].
        self.register_buffer("obs_scale", _inverse(observation_high()), persistent=False)
        self.register_buffer("feature_scale", _inverse(action_features_high()[0]), persistent=False)
        self.register_buffer("state_scale", _inverse(state_high()), persistent=False)
        self.trunk = nn.Sequential(nn.Linear(OBSERVATION_SIZE, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.state_in = nn.Linear(hidden, action_hidden)
        self.action_in = nn.Linear(ACTION_FEATURE_SIZE, action_hidden, bias=False)
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(action_hidden, action_hidden), nn.ReLU())
        self.score = nn.Linear(action_hidden, 1)
        critic = max(8, hidden // 2)  # the state says it all; a narrower critic halves the update's cost
        self.critic = nn.Sequential(
            nn.Linear(STATE_SIZE, critic), nn.ReLU(), nn.Linear(critic, critic), nn.ReLU(), nn.Linear(critic, 1)
        )

    def sizes(self) -> dict:
        return {"hidden": self.hidden, "action_hidden": self.action_hidden}

    def embed(self, observation: torch.Tensor) -> torch.Tensor:
        """The observation's contribution to every action's score, [B, action_hidden]."""
        return self.state_in(self.trunk(observation.float() * self.obs_scale))

    def score_rows(self, embedded: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """Scores [M] of feature rows [M, K] (int8 or float), each with its decision's embedding [M, action_hidden]."""
        z = self.head(embedded + self.action_in(rows.float() * self.feature_scale))
        return self.score(z).squeeze(-1)

    def logits(
        self, observation: torch.Tensor, action_features: torch.Tensor, action_mask: torch.Tensor
    ) -> torch.Tensor:
        """Logits [B, 114] from the contract: observations [B, 192], features [B, 114, K], mask [B, 114].

        Only the legal rows are scored; illegal actions get :data:`NEG`.
        """
        legal = action_mask.bool()
        b, a = legal.nonzero(as_tuple=True)
        scores = self.score_rows(self.embed(observation)[b], action_features[b, a])
        out = torch.full(legal.shape, NEG, dtype=scores.dtype, device=scores.device)
        out[b, a] = scores
        return out

    def value(self, state: torch.Tensor) -> torch.Tensor:
        """The critic's estimate [B] of the return of the seat to act, from the global state vectors [B, 302]."""
        return self.critic(state.float() * self.state_scale).squeeze(-1)

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
        "contract": dict(CONTRACT),
        "model": net.sizes(),
        "actor_only": actor_only,
        "weights": weights,
        "weights_sha256": weights_digest(weights),
        **extra,
    }


def read_policy_file(path: str | os.PathLike) -> dict:
    """A policy checkpoint's dict of any format version (integrity checked, version not); CheckpointError if not."""
    data, _ = load_file(path)  # sealed files checked byte for byte; one-line errors
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"checkpoint {str(path)!r} is not an allfives policy checkpoint (no 'format' field)")
    return data


def read_checkpoint(path: str | os.PathLike) -> dict:
    """Load and check a current-format checkpoint dict; raise :class:`CheckpointError` naming the file and the problem."""
    return check_checkpoint(read_policy_file(path), path)


def check_checkpoint(data: dict, path: str | os.PathLike) -> dict:
    """``data`` if it is a current-format (version 2) checkpoint dict; CheckpointError naming the file if not."""
    path = Path(path)
    if data.get("version") == 1:
        raise CheckpointError(
            f"checkpoint {str(path)!r} has format version 1, which read a private encoding of the game and is no "
            f"longer read: this code reads version {CHECKPOINT_VERSION} only (the environments' observation and "
            "action features); train a new policy with train.py"
        )
    if data.get("version") != CHECKPOINT_VERSION:
        raise CheckpointError(
            f"checkpoint {str(path)!r} has format version {data.get('version')!r}; this code reads version "
            f"{CHECKPOINT_VERSION}"
        )
    if data.get("contract") != CONTRACT:
        raise CheckpointError(
            f"checkpoint {str(path)!r} was trained on inputs of sizes {data.get('contract')!r}; "
            f"this code gives {CONTRACT}"
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
        obs_scale = net.obs_scale.double().numpy()
        feature_scale = net.feature_scale.double().numpy()
        # The input scales folded into the first layers' weights.
        self.w1, self.b1 = p["trunk.0.weight"].T * obs_scale[:, None], p["trunk.0.bias"]
        self.w2, self.b2 = p["trunk.2.weight"].T, p["trunk.2.bias"]
        self.ws, self.bs = p["state_in.weight"].T, p["state_in.bias"]
        self.wa = p["action_in.weight"].T * feature_scale[:, None]
        self.wh, self.bh = p["head.1.weight"].T, p["head.1.bias"]
        self.wo, self.bo = p["score.weight"][0], p["score.bias"][0]
        # Batches (the policy's play-outs) run in float32, the precision the network was trained in: about twice
        # as fast, and the same favourites but where two actions' scores tie to within float32's rounding.
        names = ("w1", "b1", "w2", "b2", "ws", "bs", "wa", "wh", "bh", "wo", "bo")
        self.batch = {name: getattr(self, name).astype(np.float32) for name in names}

    def logits(self, observation: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Logits [L] of one decision: its observation [192] and the feature rows [L, K] of its legal actions."""
        h = np.maximum(observation @ self.w1 + self.b1, 0.0)
        h = np.maximum(h @ self.w2 + self.b2, 0.0)
        z = np.maximum(h @ self.ws + self.bs + rows @ self.wa, 0.0)
        z = np.maximum(z @ self.wh + self.bh, 0.0)
        return z @ self.wo + self.bo

    def favourites(self, observations: np.ndarray, features: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The best legal action of each of a batch of decisions (the lowest id on a tie), as :meth:`logits` scores
        them: observations [T, 192], feature rows [T, 114, K] and masks [T, 114] of the batched engine."""
        legal = masks.astype(bool)
        width = legal.sum(1)
        table, action = np.nonzero(legal)  # by table, then by action id
        w = self.batch
        h = np.maximum(observations @ w["w1"] + w["b1"], 0.0)
        h = np.maximum(h @ w["w2"] + w["b2"], 0.0)
        z = np.maximum((h @ w["ws"] + w["bs"])[table] + features[table, action] @ w["wa"], 0.0)
        z = np.maximum(z @ w["wh"] + w["bh"], 0.0)
        first = np.cumsum(width) - width
        scores = np.full((len(width), int(width.max())), -np.inf, dtype=np.float32)
        scores[table, np.arange(len(table)) - first[table]] = z @ w["wo"] + w["bo"]
        return action[first + scores.argmax(1)]
