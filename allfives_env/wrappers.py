"""AEC wrappers that fit the environment to what other RL libraries expect.

``FloatObservations`` casts the observation dict to a float dtype. The
environment's arrays are int8 (small, exact counts); RLlib's default encoders
feed the observation straight into a float ``Linear`` layer, which refuses
int8 input ("mat1 and mat2 must have the same dtype"). Wrapping the env
fixes that for any library that does not cast for itself.

``HeldRewards`` makes every seat's reward arrive in a row where that seat
acts. Libraries that turn an AEC game into one row per step (Tianshou's
``PettingZooEnv``) give each seat the reward of its own step only, so a seat
that loses on another seat's move never sees its -1. The wrapper holds each
seat's reward until its next step and, when the match ends, gives every
other seat one last turn (a single legal action) in which its held reward is
paid out.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import BaseWrapper

from .core import NUM_ACTIONS
from .core.tiles import PASS

__all__ = ["FloatObservations", "HeldRewards"]


class FloatObservations(BaseWrapper):
    """The same environment with both arrays of the observation dict in ``dtype`` (default float32).

    Values are unchanged (the int8 counts are exact in any float type); the
    observation spaces become float Boxes with the same bounds.
    """

    def __init__(self, env: AECEnv, dtype: Any = np.float32) -> None:
        given = dtype
        try:
            dtype = None if dtype is None else np.dtype(dtype)
        except TypeError:
            dtype = None
        if dtype is None or dtype.kind != "f":
            raise ValueError(f"dtype must be a float type such as numpy.float32; got {given!r}")
        super().__init__(env)
        self.dtype = dtype
        self._spaces = {}
        for agent in env.possible_agents:
            inner = env.observation_space(agent)
            self._spaces[agent] = spaces.Dict(
                {
                    key: spaces.Box(box.low.astype(dtype), box.high.astype(dtype), dtype=dtype)
                    for key, box in inner.items()
                }
            )

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray] | None:
        obs = self.env.observe(agent)
        if obs is None:
            return None
        return {key: value.astype(self.dtype) for key, value in obs.items()}


class HeldRewards(BaseWrapper):
    """Each seat's reward is paid in the step where that seat next acts; the match end adds a settling turn per seat.

    While the match runs, ``rewards`` after a step holds only the reward of
    the seat that just acted: everything it earned since its previous step
    (from other seats' moves too) plus what this step earned it. When the
    match ends, every seat other than the one that moved last gets one more
    turn, in seat order after it: its observation is the final one, its only
    legal action is ``PASS`` and stepping it pays out the seat's held reward.
    ``terminations`` turn true with the last of these turns. A seat that loses
    on another seat's move therefore receives its -1 in a row of its own.

    The inner environment must run whole matches without dead steps taken by
    anyone else (``allfives_env.env()``, wrapped or not).
    """

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self.possible_agents = list(env.possible_agents)
        self._settle_mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._settle_mask[PASS] = 1
        self._clear()

    def _clear(self) -> None:
        self._held = {a: 0.0 for a in self.possible_agents}
        self._settling: list[str] = []  # seats still to be paid after the match ended
        self._final_obs: dict[str, Any] = {}
        self._truncated = False  # whether the match ended by a limit rather than a result
        self.rewards = {a: 0.0 for a in self.possible_agents}
        self._cumulative_rewards = {a: 0.0 for a in self.possible_agents}
        self.terminations = {a: False for a in self.possible_agents}
        self.truncations = {a: False for a in self.possible_agents}
        self.infos = {a: {} for a in self.possible_agents}
        self.agents = list(self.possible_agents)
        self.agent_selection = None

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.env.reset(seed=seed, options=options)
        self._clear()
        self.infos = dict(self.env.infos)
        self.agent_selection = self.env.agent_selection

    def observe(self, agent: str) -> Any:
        if agent in self._final_obs:
            obs = self._final_obs[agent]
            if agent == self.agent_selection and self._settling:
                obs = {
                    "observation": obs["observation"],
                    "action_mask": self._settle_mask.astype(obs["action_mask"].dtype),
                }
            return obs
        return self.env.observe(agent)

    def step(self, action: Any) -> None:
        actor = self.agent_selection
        if actor is None:
            raise ValueError("step() called before reset()")
        if self._settling:
            self._settle(actor, action)
            return
        if self.terminations[actor] or self.truncations[actor]:
            self._dead_step(actor, action)
            return
        self.env.step(action)
        inner = self.env
        for agent in self.possible_agents:
            self._held[agent] += float(inner.rewards.get(agent, 0.0))
        self.rewards = {a: 0.0 for a in self.possible_agents}
        self._pay(actor)
        self.infos = dict(inner.infos)
        if any(inner.terminations.values()) or any(inner.truncations.values()):
            self._final_obs = {a: inner.observe(a) for a in self.possible_agents}
            done_by_limit = not any(inner.terminations.values())
            n = len(self.possible_agents)
            first = self.possible_agents.index(actor)
            self._settling = [self.possible_agents[(first + k) % n] for k in range(1, n)]
            self._truncated = done_by_limit
            self.agent_selection = self._settling[0]
        else:
            self.agent_selection = inner.agent_selection

    def _dead_step(self, agent: str, action: Any) -> None:
        """The AEC ending: each finished seat is stepped with None once, then leaves ``agents``."""
        if action is not None:
            raise ValueError(f"the match is over: seat {agent!r} may only be stepped with None; got {action!r}")
        self.agents.remove(agent)
        self.rewards = {a: 0.0 for a in self.possible_agents}
        self._cumulative_rewards = {a: 0.0 for a in self.possible_agents}
        self.agent_selection = self.agents[0] if self.agents else agent

    def _pay(self, agent: str) -> None:
        self.rewards[agent] = self._held[agent]
        self._cumulative_rewards = {a: 0.0 for a in self.possible_agents}
        self._cumulative_rewards[agent] = self._held[agent]
        self._held[agent] = 0.0

    def _settle(self, agent: str, action: Any) -> None:
        if action is not None and int(action) != PASS:
            raise ValueError(f"after the match ended seat {agent!r} may only settle with PASS ({PASS}); got {action!r}")
        self.rewards = {a: 0.0 for a in self.possible_agents}
        self._pay(agent)
        self._settling.pop(0)
        if self._settling:
            self.agent_selection = self._settling[0]
            return
        key = self.truncations if self._truncated else self.terminations
        for a in self.possible_agents:
            key[a] = True
