"""The environment as RLCard takes it: ``AllFivesRLCardEnv()``, an ``rlcard.envs.Env`` over the PettingZoo env.

RLCard's algorithms (DMC, NFSP, DQN) play an ``rlcard.envs.Env``: ``run()``
deals a game, asks each seat's agent in turn and hands back every seat's
trajectory and payoff. This adapter drives ``allfives_env.env(**kwargs)``
through its public AEC API and shows each seat what that seat observes:
``obs`` is the seat's observation vector (int8, as the env gives it) and
``legal_actions`` the actions its mask allows. Payoffs are the env's
``win_loss`` rewards (+1 / -1, 0 to a side that shares a win), the only
reward mode allowed here, because RLCard pays a seat once, at the end.

Seeding: ``seed(s)`` (RLCard's actors call it with their index) seeds the
deals from the pair (``config["seed"]``, ``s``), so the actors of one run
play different deals and runs with other seeds play others again.
``steps``, if given, is a shared counter (a ``multiprocessing`` ``Value``)
that every step adds one to, so a trainer whose actors run in other
processes can still count the decisions it stepped. Needs ``rlcard``
(the ``baselines`` extra); the environment layer never imports it.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
from rlcard.envs import Env

import allfives_env

from .seeding import derive_seed


class _Match:
    """RLCard's "game" object: the AEC env, one match per ``init_game``."""

    allow_step_back = False

    def __init__(self, env: Any) -> None:
        self.env = env
        self.np_random: np.random.RandomState | None = None  # RLCard's Env.seed sets it

    def get_num_players(self) -> int:
        return len(self.env.possible_agents)

    def get_num_actions(self) -> int:
        return int(self.env.action_space(self.env.possible_agents[0]).n)

    def init_game(self) -> tuple[dict, int]:
        self.env.reset(seed=int(self.np_random.randint(2**62, dtype=np.int64)))
        player = self.get_player_id()
        return self.get_state(player), player

    def step(self, action: int) -> tuple[dict, int]:
        self.env.step(int(action))
        player = self.get_player_id()
        return self.get_state(player), player

    def get_player_id(self) -> int:
        return self.env.possible_agents.index(self.env.agent_selection)

    def get_state(self, player: int) -> dict:
        return self.env.observe(self.env.possible_agents[player])

    def is_over(self) -> bool:
        env = self.env
        return any(env.terminations[a] or env.truncations[a] for a in env.possible_agents)


class AllFivesRLCardEnv(Env):
    """An RLCard environment for All Fives; keywords go to ``allfives_env.env`` (``reward`` must be ``win_loss``)."""

    name = "allfives"

    def __init__(self, config: dict | None = None, steps: Any = None, **env_kwargs: Any) -> None:
        if env_kwargs.get("reward", "win_loss") != "win_loss":
            raise ValueError(f"reward={env_kwargs['reward']!r} is not allowed; allowed: 'win_loss' (RLCard pays once)")
        config = {"seed": None, "allow_step_back": False, **(config or {})}
        self.base_seed = config["seed"]
        self.steps = steps
        self.game = _Match(allfives_env.env(**env_kwargs))
        super().__init__(config)
        size = self.game.env.observation_space(self.game.env.possible_agents[0])["observation"].shape
        self.state_shape = [list(size) for _ in range(self.num_players)]
        self.action_shape = [None for _ in range(self.num_players)]

    def seed(self, seed: int | None = None) -> int | None:
        if seed is not None and getattr(self, "base_seed", None) is not None:
            seed = derive_seed("rlcard", self.base_seed, seed)
        return super().seed(seed)

    def step(self, action: int, raw_action: bool = False) -> tuple[dict, int]:
        if self.steps is not None:
            with self.steps.get_lock():
                self.steps.value += 1
        return super().step(action, raw_action)

    def get_payoffs(self) -> np.ndarray:
        env = self.game.env
        return np.array([float(env.rewards[a]) for a in env.possible_agents])

    def _extract_state(self, state: dict) -> dict:
        legal = [int(a) for a in np.flatnonzero(state["action_mask"])]
        return {"obs": state["observation"], "legal_actions": OrderedDict((a, None) for a in legal),
                "raw_obs": state["observation"], "raw_legal_actions": legal}  # fmt: skip

    def _decode_action(self, action_id: int) -> int:
        return int(action_id)

    def _get_legal_actions(self) -> list[int]:
        return self._extract_state(self.game.get_state(self.get_player_id()))["raw_legal_actions"]
