"""The PettingZoo AEC environment: one agent per seat, ``player_0`` ... ``player_{n-1}``.

A thin adapter around a core :class:`~allfives_env.core.State`: every rule is
decided by the core, every observation by :mod:`allfives_env.views`. The hot
path (``last()`` then ``step()``) builds the observation only when asked,
straight from the state as bytes, and touches the reward dictionaries only
when some reward is not zero.

``raw_env`` raises :class:`~allfives_env.core.IllegalActionError` (a
``ValueError``) on an illegal action and changes nothing. ``env`` wraps it in
PettingZoo's classic stack: an illegal action ends the episode with -1 for
the seat that made it and 0 for the others (``TerminateIllegalWrapper``),
an action outside ``Discrete(114)`` fails an assertion, and calls out of
order are refused (``OrderEnforcingWrapper``).

``import allfives_env`` registers ``"allfives-v0"`` with PettingZoo's registry
(:mod:`allfives_env.registration`), so ``pettingzoo.make("aec", "allfives-v0",
num_players=3)`` builds ``env(num_players=3)``.
"""

from __future__ import annotations

import os
import secrets
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.wrappers.base import BaseWrapper

from .common import RENDER_MODES, episode_winners, game_settings, points_rewards, reset_options
from .common import observation_space as shared_observation_space
from .common import observe as observe_seat
from .common import render as render_table
from .core import NUM_ACTIONS, IllegalActionError, SeatView, State
from .core.record import to_record, with_own_keys, write_record
from .core.scoring import match_rewards
from .core.stream import next_match_seed
from .core.tiles import DRAW, PASS
from .options import ResetNeeded, action_refused, as_action
from .options import seed as checked_seed
from .registration import AEC_ID
from .views.state_vector import encode_state, state_high

ENV_ID = AEC_ID  # registered by import allfives_env (allfives_env.registration)
RESET_OPTIONS = ("deal",)

__all__ = ["ENV_ID", "IllegalActionError", "env", "raw_env"]


class _Mirrored:
    """An AEC bookkeeping attribute of the raw env, copied onto the env's wrappers whenever it is rebound.

    PettingZoo's wrappers forward every attribute read down the stack through
    ``__getattr__``; ``env()`` registers its wrappers here so that ``last()``
    and ``step()`` find ``agent_selection``, ``terminations`` and the rest on
    the outermost wrapper at once. The values are the raw env's own objects
    (dicts are shared, not copied), so what the wrappers read never differs
    from what forwarding would return; only the cost does. Having no
    ``__get__``, the descriptor leaves reads to the instance dict (no cost).
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.name] = value
        for wrapper in obj.__dict__.get("_mirrors", ()):
            wrapper.__dict__[self.name] = value


class raw_env(AECEnv):
    """All Fives as an AEC environment (see the module docstring and the README for every option).

    Keyword arguments: ``num_players`` (2-4), ``rules`` ("pagat", "fives"),
    ``partnerships``, ``target``, ``opening`` (fives only), ``render_mode``
    (None, "ansi", "human", "rgb_array"), ``reward`` ("win_loss", "points"),
    ``episode`` ("match", "round"), ``auto_forced`` (play forced draws and
    passes automatically), ``history`` (append the round's public moves to
    the observation), ``action_features`` (add the per-action feature rows,
    ``"action_features"``, to the observation), ``record_dir`` (write each
    finished episode's game record there).
    """

    agents = _Mirrored()
    agent_selection = _Mirrored()
    rewards = _Mirrored()
    _cumulative_rewards = _Mirrored()
    terminations = _Mirrored()
    truncations = _Mirrored()
    infos = _Mirrored()

    metadata = {
        "name": "allfives_v0",
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        *,
        num_players: int = 2,
        rules: str = "pagat",
        partnerships: bool | None = None,
        target: int | float | None = None,
        opening: str | None = None,
        render_mode: str | None = None,
        reward: str = "win_loss",
        episode: str = "match",
        auto_forced: bool = False,
        history: bool = False,
        action_features: bool = False,
        record_dir: str | os.PathLike | None = None,
    ) -> None:
        super().__init__()
        settings = game_settings(num_players, rules, partnerships, target, opening, reward, episode, auto_forced,
                                 history, action_features, render_mode)  # fmt: skip
        self._settings = settings
        self.game_rules = settings.rules
        self.render_mode = settings.render_mode
        self._human = render_mode == "human"
        self.reward_mode = settings.reward
        self._points = self.reward_mode == "points"
        self.episode = settings.episode
        self.auto_forced = settings.auto_forced
        self.history = settings.history
        self.action_features = settings.action_features
        if record_dir is not None and not isinstance(record_dir, (str, os.PathLike)):
            raise ValueError(f"record_dir={record_dir!r} is not allowed; allowed: None or a directory path")
        self.record_dir = record_dir

        n = self.game_rules.num_players
        self.possible_agents = [f"player_{seat}" for seat in range(n)]
        self.agents = []  # the bookkeeping is filled in by reset()
        self.agent_selection = None
        self.rewards, self._cumulative_rewards, self.infos = {}, {}, {}
        self.terminations, self.truncations = {}, {}
        self._seat_of = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        observation_space = shared_observation_space(settings)
        # One space object per agent, returned as is on every call (PettingZoo's API test checks identity).
        self.observation_spaces = {agent: observation_space for agent in self.possible_agents}
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS) for agent in self.possible_agents}
        self.state_space = spaces.Box(0, state_high(self.game_rules), dtype=np.int8)
        self._state: State | None = None
        self._first_seed: int | None = None  # the seed of the last seeded reset (or the entropy drawn instead)
        self._resets = 0  # unseeded resets since then
        self.match_seed: int | None = None
        self.episodes_finished = 0
        self._rewards_dirty = False
        self._mirrors: tuple = ()

    # -- spaces ------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    # -- the AEC API ---------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a match. ``seed`` fixes the match (its deals are the core's for that seed).

        Without a seed the match seed continues from the last seeded reset:
        the k-th unseeded reset after ``reset(seed=s)`` plays
        ``next_match_seed(s, k)`` (docs/rules.md), and a new env first draws
        ``s`` from fresh entropy and plays it. ``options`` may
        hold ``{"deal": {"hands": [[tile text]], "boneyard": [...], "leader":
        seat}}`` to fix the first round's deal; another key is ignored with an
        ``UnknownResetOptionWarning`` (see :mod:`allfives_env.common`).
        """
        seed = checked_seed(seed)
        checked = reset_options(options, self.game_rules, RESET_OPTIONS)
        deals = {0: checked["deal"]} if checked.get("deal") is not None else None
        # Nothing above changed the env, and with the seed and the deal checked nothing below can fail:
        # the new match is built aside, then put in place.
        if seed is not None:
            first, resets, match_seed = seed, 0, seed
        elif self._first_seed is None:
            first, resets = secrets.randbits(63), 0
            match_seed = first
        else:
            first, resets = self._first_seed, self._resets + 1
            match_seed = next_match_seed(first, resets)
        state = State(self.game_rules, seed=match_seed, deals=deals, round_limit=1 if self.episode == "round" else None)
        self._first_seed, self._resets, self._state, self.match_seed = first, resets, state, match_seed
        if self.auto_forced:
            self._play_forced()
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self._rewards_dirty = False
        self.agent_selection = self.possible_agents[self._state.to_act]
        if self._state.finished:  # only a fixed deal with auto_forced on could do this
            self._finish()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The agent's observation and action mask: fresh arrays, never changed afterwards."""
        state = self._state
        if state is None:
            raise ResetNeeded("observe()")
        seat = self._seat_of[agent]
        return observe_seat(state, seat, self._settings, state.legal_actions() if seat == state.to_act else ())

    def step(self, action: int) -> None:
        """Take the agent's action: an integer (Python or NumPy; bools and floats are refused, see options)."""
        state = self._state
        if state is None:
            raise ResetNeeded("step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        index = as_action(action)
        if index is None:
            raise IllegalActionError(action_refused(action, state))
        points = self._points
        if points:
            before = state.scores[:]
        state.apply(index)  # raises IllegalActionError and changes nothing if illegal
        if self.auto_forced:
            self._play_forced()
        self._cumulative_rewards[agent] = 0.0
        if self._rewards_dirty:
            self._clear_rewards()
            self._rewards_dirty = False
        if points and state.scores != before:
            self._points_rewards(before)
        if state.finished:
            self._finish()
        else:
            self.agent_selection = self.possible_agents[state.to_act]
        if self._rewards_dirty:
            self._accumulate_rewards()
        if self._human:
            self.render()

    def last(self, observe: bool = True) -> tuple:
        """As PettingZoo's ``last``; before ``reset`` it raises the same error as every other call."""
        if self._state is None:
            raise ResetNeeded("last()")
        return super().last(observe)

    def agent_iter(self, max_iter: int = 2**63):
        if self._state is None:
            raise ResetNeeded("agent_iter()")
        return super().agent_iter(max_iter)

    def state(self) -> np.ndarray:
        """The global state vector (every hand, the layout, scores) for centralised critics."""
        if self._state is None:
            raise ResetNeeded("state()")
        return encode_state(self._state)

    def render(self) -> str | np.ndarray | None:
        """The table as text (``ansi``; ``human`` prints it with every hand) or as an RGB array."""
        return render_table(self._state, self.render_mode, self.possible_agents)

    def close(self) -> None:
        """Nothing to release: rendering holds no window."""

    # -- more than PettingZoo asks ---------------------------------------------------------

    @property
    def core_state(self) -> State:
        """The core state itself (read it, do not change it)."""
        if self._state is None:
            raise ResetNeeded("core_state")
        return self._state

    def seat_view(self, agent: str) -> SeatView:
        """The agent's :class:`SeatView`, for the bots in ``agents/`` (``bot.act(env.seat_view(agent))``)."""
        if agent not in self._seat_of:
            raise ValueError(f"agent {agent!r} is not at this table; allowed: {', '.join(self.possible_agents)}")
        if self._state is None:
            raise ResetNeeded("seat_view()")
        return self._state.view(self._seat_of[agent])

    def record(self, **extra: Any) -> dict:
        """The match so far as a game record (``allfives-record/1``), with its seed and ``extra`` keys.

        An extra key the record writes itself (``seed``, ``format``, ``rounds``...) raises ValueError.
        """
        if self._state is None:
            raise ResetNeeded("record()")
        return to_record(self._state, **with_own_keys({"seed": self.match_seed}, extra))

    # -- inside -------------------------------------------------------------------------------

    def _play_forced(self) -> None:
        state = self._state
        while True:
            legal = state.legal_actions()
            if len(legal) != 1 or legal[0] not in (DRAW, PASS):
                return
            state.apply(legal[0])

    def _points_rewards(self, before: list) -> None:
        """Own side's gain minus the mean of the other sides' gains, over the target (zero-sum)."""
        rules = self.game_rules
        by_side = points_rewards(rules, before, self._state.scores)
        for seat, agent in enumerate(self.possible_agents):
            self.rewards[agent] = by_side[rules.side_of[seat]]
        self._rewards_dirty = True

    def _finish(self) -> None:
        """The episode is over: win/loss rewards, terminations, infos, and the record if asked."""
        state = self._state
        rules = self.game_rules
        winners = episode_winners(state, self.episode)
        by_side = match_rewards(rules, winners)
        if self.reward_mode == "win_loss" and any(by_side):
            for seat, agent in enumerate(self.possible_agents):
                self.rewards[agent] = by_side[rules.side_of[seat]]
            self._rewards_dirty = True
        self.terminations = dict.fromkeys(self.agents, True)
        summary = {"scores": list(state.scores), "winners": list(winners)}
        self.infos = {agent: dict(summary) for agent in self.agents}
        self.agent_selection = self.possible_agents[(state.to_act + 1) % rules.num_players]
        self.episodes_finished += 1
        if self.record_dir is not None:
            os.makedirs(self.record_dir, exist_ok=True)
            name = f"allfives-{self.match_seed}-{self.episodes_finished:06d}.json"
            write_record(state, os.path.join(self.record_dir, name), seed=self.match_seed)


class _AssertAction(wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's bounds assertion under the raw env's rule for actions: ``True`` and ``5.0`` fail it too."""

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        index = as_action(action)
        if not (0 <= index < NUM_ACTIONS if index is not None else action is None and self._dead(agent)):
            raise AssertionError(f"{action_refused(action)}, or None for an agent that is done")
        super().step(action)

    def _dead(self, agent: str) -> bool:
        return self.terminations[agent] or self.truncations[agent]


class _OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order enforcement, except that a refused ``reset`` leaves every wrapper as it was.

    PettingZoo's counts the env as reset before the reset runs, so a refused
    first reset would leave it armed on an env without a match.
    """

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        saved = []
        layer: Any = self
        while isinstance(layer, BaseWrapper):
            saved.append((layer, dict(vars(layer))))
            layer = layer.env
        try:
            super().reset(seed=seed, options=options)
        except BaseException:
            for wrapper, attributes in saved:
                vars(wrapper).clear()
                vars(wrapper).update(attributes)
            raise

    def __str__(self) -> str:
        return str(self.env)


def env(**kwargs: Any) -> AECEnv:
    """The environment wrapped as PettingZoo's classic environments are (see the module docstring)."""
    raw = raw_env(**kwargs)
    terminate = wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1)
    bounds = _AssertAction(terminate)
    ordered = _OrderEnforcing(bounds)
    raw._mirrors = (terminate, bounds, ordered)  # filled at the first reset, so reading before it still fails
    return ordered
