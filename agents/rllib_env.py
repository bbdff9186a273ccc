"""The environment as RLlib takes it, in one call: ``rllib_env(num_players=3)``.

RLlib plays the AEC game through its ``PettingZooEnv`` wrapper, and its
default encoders feed the observation straight into float layers. On the
environment's int8 arrays PPO's first ``train()`` then fails inside torch
(``mat1 and mat2 must have the same dtype``), an error that names neither
the observation nor the cure. :func:`rllib_env` builds what RLlib needs:
``PettingZooEnv(FloatObservations(allfives_env.env(...)))``, the wrapped
environment (illegal moves end the match, as RLlib's checker expects) with
float32 observations of the same values. Use it as the env creator:
``register_env("allfives", rllib_env)``. Needs ``ray[rllib]`` (the ``ray``
extra); the environment layer itself never imports Ray.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

import allfives_env
from allfives_env.wrappers import FloatObservations


def rllib_env(env_config: Mapping[str, Any] | None = None, /, **kwargs: Any) -> PettingZooEnv:
    """RLlib's ``PettingZooEnv`` over ``allfives_env.env(**env_config, **kwargs)`` with float32 observations.

    ``env_config`` is what RLlib hands an env creator (``.environment(env_config={...})``); keywords given
    here are added to it. Every keyword of ``allfives_env.env`` is taken, and a bad one raises its ValueError.
    """
    return PettingZooEnv(FloatObservations(allfives_env.env(**{**dict(env_config or {}), **kwargs})))
