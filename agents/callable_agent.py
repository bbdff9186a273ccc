"""Any policy on the environment's observation and mask, as an :class:`Agent`.

Users bring policies trained through the PettingZoo or Gymnasium environment:
functions of ``(observation, action_mask)``. Wrapping one here lets the
harness, terminal play and the benchmark seat it beside the built-in bots,
and it sees exactly what the environment would have shown that seat.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from allfives_env.core import SeatView
from allfives_env.views.observation import action_mask, encode_observation

from .base import Agent

ObservationPolicy = Callable[[np.ndarray, np.ndarray], int]


class ObservationAgent(Agent):
    """Plays ``policy(observation, action_mask)``; the observation is the environment's, history rows if asked."""

    name = "observation-policy"

    def __init__(self, policy: ObservationPolicy, seed: int | None = None, history: bool = False) -> None:
        if not callable(policy):
            raise ValueError(f"policy {policy!r} is not callable; give a function (observation, action_mask) -> action")
        super().__init__(seed)
        self.policy = policy
        self.history = history

    def act(self, view: SeatView) -> int:
        action = self.policy(encode_observation(view, history=self.history), action_mask(view.legal))
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise ValueError(f"the policy answered {action!r}; it must answer an action id (an int)")
        if int(action) not in view.legal:
            raise ValueError(f"the policy answered action {int(action)}, which is illegal; legal: {list(view.legal)}")
        return int(action)
