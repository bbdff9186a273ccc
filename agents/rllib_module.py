"""An RLlib RL module for the environment's observation dict: PPO's default network plus the action mask.

RLlib (its current API stack) builds its default encoder for one Box
observation. The environment observes ``{"observation": Box, "action_mask":
Box(114)}``, so this module builds PPO's default encoder, policy and value
heads on ``"observation"`` and pushes the logits of actions the mask forbids
down to a very large negative number before any distribution is built: a
masked action is never sampled and gets no gradient.

The observation must already be float: build the env with
:func:`agents.rllib_env.rllib_env`, which wraps it in
:class:`allfives_env.wrappers.FloatObservations` (an int8 space is refused
with a message saying so); an all-zero mask (a seat
with nothing to do, seen only at the end of a match) leaves every logit at
the floor, which is a harmless uniform distribution. Needs ``ray[rllib]``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns

#: The floor masked logits are set to: finite, so an all-zero mask gives no NaN.
MASKED_LOGIT = -1e9


def _split(batch: dict[str, Any]) -> tuple[torch.Tensor, dict[str, Any]]:
    obs = batch[Columns.OBS]
    inner = dict(batch)
    inner[Columns.OBS] = obs["observation"]
    return obs["action_mask"], inner


def _mask(out: dict[str, Any], mask: torch.Tensor) -> dict[str, Any]:
    logits = out[Columns.ACTION_DIST_INPUTS]
    out[Columns.ACTION_DIST_INPUTS] = torch.where(mask > 0, logits, torch.full_like(logits, MASKED_LOGIT))
    return out


class MaskedPPOModule(DefaultPPOTorchRLModule):
    """PPO's default torch module, built on the ``"observation"`` entry and masked by ``"action_mask"``."""

    def __init__(self, *args: Any, observation_space: gym.Space | None = None, **kwargs: Any) -> None:
        if not isinstance(observation_space, gym.spaces.Dict) or set(observation_space) != {
            "observation",
            "action_mask",
        }:
            raise ValueError(
                "MaskedPPOModule needs the environment's observation dict (a gymnasium Dict space with exactly "
                f"'observation' and 'action_mask'); got {observation_space!r}"
            )
        observation = observation_space["observation"]
        if not isinstance(observation, gym.spaces.Box) or observation.dtype.kind != "f":
            # Built on int8 arrays, PPO's default encoder fails later inside torch, naming neither cause nor cure.
            raise ValueError(
                f"MaskedPPOModule needs float observations; the environment's are {observation.dtype}: build it "
                "with agents.rllib_env.rllib_env(...), which is PettingZooEnv(FloatObservations(allfives_env.env(...)))"
            )
        self.masked_observation_space = observation_space
        super().__init__(*args, observation_space=observation, **kwargs)

    def setup(self) -> None:
        super().setup()
        # What RLlib reads from a built module (and saves with its checkpoint) is the whole dict space.
        self.observation_space = self.masked_observation_space

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, inner = _split(batch)
        return _mask(super()._forward(inner, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, inner = _split(batch)
        return _mask(super()._forward_train(inner, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        if isinstance(batch[Columns.OBS], dict):
            _, batch = _split(batch)
        return super().compute_values(batch, embeddings)
