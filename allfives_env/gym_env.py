"""A Gymnasium single-agent view of a match: one seat learns, policies play the others.

The learner sees exactly what the PettingZoo environment shows its seat: a
``Dict`` with the ego-centric ``"observation"`` vector and the
``"action_mask"`` (the core's legal actions). Between two of its decisions
the other seats are played by the given opponents, so one :meth:`step` is one
learner decision. :meth:`action_masks` gives the mask as booleans, which is
what ``sb3-contrib``'s ``MaskablePPO`` asks for.

Importing this module registers ``"AllFives-v0"`` with Gymnasium; without the
import, ``gymnasium.make("allfives_env.gym_env:AllFives-v0")`` loads it.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from .core import NUM_ACTIONS, TILE_TEXT, IllegalActionError, State, make_rules
from .core.deal import deal_from_json
from .core.record import to_record
from .views.observation import FIELDS, HISTORY_LENGTH, HISTORY_WIDTH, OBSERVATION_SIZE, encode_observation

ENV_ID = "AllFives-v0"
REWARD_MODES = ("win_loss", "points")
EPISODES = ("match", "round")
ILLEGAL_MODES = ("raise", "penalize")
RESET_OPTIONS = ("deal", "learner_seat")

Policy = Callable[[np.ndarray, np.ndarray], int]


# -- observation bounds ----------------------------------------------------------


def observation_high(rules, history: bool = False) -> np.ndarray:
    """The largest value each observation feature can take under ``rules`` (all lows are 0)."""
    most_held = rules.hand_size + rules.boneyard_size
    ceilings = {
        "hand_counts": most_held,
        "boneyard": rules.boneyard_size,
        "end_count": 12,
        "end_total": 36,
        "to_target": 127,
        "target": 127,
        "round": 127,
    }
    high = np.ones(OBSERVATION_SIZE, dtype=np.int8)
    offset = 0
    for name, size, _ in FIELDS:
        high[offset : offset + size] = ceilings.get(name, 1)
        offset += size
    if not history:
        return high
    row = np.ones(HISTORY_WIDTH, dtype=np.int8)
    row[7] = 28  # tile id + 1
    return np.concatenate([high, np.tile(row, HISTORY_LENGTH)])


# -- opponents -------------------------------------------------------------------


class _Seat:
    """How one opponent seat is played: ``reset`` per match, ``act`` per decision."""

    def reset(self, seed: int) -> None:
        pass

    def act(self, state: State, seat: int, history: bool) -> int:
        raise NotImplementedError


class _UniformRandom(_Seat):
    """The default opponent: a uniformly random legal action, from the env's own seeding."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)

    def reset(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, state: State, seat: int, history: bool) -> int:
        legal = state.legal_actions()
        return legal[int(self.rng.integers(len(legal)))]


class _AgentSeat(_Seat):
    """An ``agents.Agent``-like object: it sees its seat's ``SeatView``."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent

    def reset(self, seed: int) -> None:
        reset = getattr(self.agent, "reset", None)
        if reset is not None:
            reset(seed)

    def act(self, state: State, seat: int, history: bool) -> int:
        return self.agent.act(state.view(seat))


class _CallableSeat(_Seat):
    """A callable ``(observation, action_mask) -> action`` on the seat's own observation."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    def act(self, state: State, seat: int, history: bool) -> int:
        obs = encode_observation(state.view(seat), history)
        return self.policy(obs, _mask(state.legal_actions()))


def _make_seat(spec: Any, seed: int | None) -> _Seat:
    if spec is None:
        return _UniformRandom()
    if isinstance(spec, str):
        from agents.registry import make_agent  # only when a named bot is asked for

        try:
            return _AgentSeat(make_agent(spec, seed=seed))
        except ValueError as err:
            raise ValueError(f"opponents: {err}") from None
    if callable(getattr(spec, "act", None)):
        return _AgentSeat(spec)
    if callable(spec):
        return _CallableSeat(spec)
    raise ValueError(
        f"opponents: {spec!r} is not a policy; allowed: None (random), a bot name such as 'random' or 'greedy', "
        "an Agent, or a callable (observation, action_mask) -> action"
    )


def _make_seats(opponents: Any, count: int) -> list[_Seat]:
    """One opponent per other seat, in seat order after the learner."""
    if isinstance(opponents, (list, tuple)):
        if len(opponents) != count:
            raise ValueError(
                f"opponents has {len(opponents)} entries; allowed: one policy, or a list of {count} "
                "(one per other seat, in seat order after the learner)"
            )
        return [_make_seat(spec, seed=i) for i, spec in enumerate(opponents)]
    return [_make_seat(opponents, seed=i) for i in range(count)]


def _mask(legal: Sequence[int]) -> np.ndarray:
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    mask[list(legal)] = 1
    return mask


def _as_index(action: Any) -> int | None:
    """An integer action (Python, NumPy scalar or 0-d array), else None; booleans are not actions."""
    if isinstance(action, (bool, np.bool_)):
        return None
    try:
        return operator.index(action)
    except TypeError:
        return None


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name}={value!r} is not allowed; allowed: {', '.join(map(repr, allowed))}")
    return value


# -- the environment ---------------------------------------------------------------


class AllFivesSingleAgentEnv(gymnasium.Env):
    """One learning seat against fixed opponents; one step is one learner decision.

    Keyword arguments (all optional):

    - ``num_players``, ``rules``, ``partnerships``, ``target``, ``opening``: the
      match, as in the PettingZoo environment (checked by the core).
    - ``opponents``: ``None`` (uniformly random legal moves), one policy for
      every other seat, or a list with one per other seat in seat order after
      the learner. A policy is a bot name (``"random"``, ``"greedy"``, ...), an
      ``Agent`` (it gets ``state.view(seat)``) or a callable
      ``(observation, action_mask) -> action`` on that seat's own observation.
    - ``learner_seat``: a seat number, or ``"random"`` to draw it each reset.
    - ``reward_mode``: ``"win_loss"`` (+1/-1 when the episode ends, 0 on a shared
      win) or ``"points"`` (each step: own side's points minus the mean of the
      other sides', over the target, counting the opponents' moves too).
    - ``episode``: ``"match"`` or ``"round"`` (the episode ends with the first round).
    - ``auto_forced``: play the learner's forced ``DRAW``/``PASS`` for it.
    - ``history``: append the public-history block to the observation.
    - ``illegal``: ``"raise"`` (a ``ValueError`` naming the action and the legal
      ones; nothing changes) or ``"penalize"`` (the episode ends with reward -1;
      the default of the registered ``"AllFives-v0"``, for clients that step
      unmasked actions).
    - ``render_mode``: ``None``, ``"ansi"``, ``"human"`` or ``"rgb_array"``.
    """

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 2, "name": "allfives_single_v0"}

    def __init__(
        self,
        num_players: int = 2,
        rules: str = "pagat",
        partnerships: bool | None = None,
        target: int | float | None = None,
        opening: str | None = None,
        opponents: Any = None,
        learner_seat: int | str = 0,
        reward_mode: str = "win_loss",
        episode: str = "match",
        auto_forced: bool = False,
        history: bool = False,
        illegal: str = "raise",
        render_mode: str | None = None,
    ) -> None:
        self.game_rules = make_rules(rules, num_players, partnerships, target, opening)
        n = self.game_rules.num_players
        if learner_seat != "random" and (
            isinstance(learner_seat, bool)
            or not isinstance(learner_seat, (int, np.integer))
            or not 0 <= learner_seat < n
        ):
            raise ValueError(f"learner_seat={learner_seat!r} is not allowed; allowed: 0..{n - 1} or 'random'")
        self.learner_choice = learner_seat if learner_seat == "random" else int(learner_seat)
        self.reward_mode = _choice("reward_mode", reward_mode, REWARD_MODES)
        self.episode = _choice("episode", episode, EPISODES)
        self.illegal = _choice("illegal", illegal, ILLEGAL_MODES)
        for name, flag in (("auto_forced", auto_forced), ("history", history)):
            if not isinstance(flag, bool):
                raise ValueError(f"{name}={flag!r} is not allowed; allowed: True or False")
        self.auto_forced = auto_forced
        self.history = history
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode={render_mode!r} is not allowed; allowed: None, "
                + ", ".join(map(repr, self.metadata["render_modes"]))
            )
        self.render_mode = render_mode
        self.seats = _make_seats(opponents, n - 1)

        high = observation_high(self.game_rules, history)
        self.observation_space = spaces.Dict(
            {
                "observation": spaces.Box(0, high, dtype=np.int8),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
            }
        )
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.state: State | None = None
        self.learner = 0
        self.start_round = 0
        self.done = True
        self._scores: list = []  # scores when the learner last decided, for the points reward

    # -- Gymnasium API -------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """Start a new match from ``seed`` (or the env's generator); ``options`` may fix the deal and the seat.

        ``options={"deal": {"hands": [...], "boneyard": [...], "leader": seat}}``
        fixes the first round's deal as in the PettingZoo environment;
        ``options={"learner_seat": seat}`` fixes the learner for this episode.
        """
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = sorted(set(options) - set(RESET_OPTIONS))
        if unknown:
            raise ValueError(f"reset options {unknown} are not known; allowed: {', '.join(map(repr, RESET_OPTIONS))}")
        deals = {0: deal_from_json(options["deal"])} if options.get("deal") is not None else None
        n = self.game_rules.num_players
        learner = options.get("learner_seat", self.learner_choice)
        rng = self.np_random
        # A match that ends before the learner's first decision (tiny targets) is dealt again.
        for _ in range(100):
            match_seed = int(rng.integers(2**31))
            if learner == "random":
                seat = int(rng.integers(n))
            elif isinstance(learner, (int, np.integer)) and not isinstance(learner, bool) and 0 <= learner < n:
                seat = int(learner)
            else:
                raise ValueError(f"learner_seat={learner!r} is not allowed; allowed: 0..{n - 1} or 'random'")
            for opponent in self.seats:
                opponent.reset(int(rng.integers(2**31)))
            self.state = State(self.game_rules, seed=match_seed, deals=deals)
            self.learner = seat
            self.start_round = 0
            self._scores = list(self.state.scores)
            self._advance()
            if not self._episode_over():
                break
        else:
            raise RuntimeError("every match ended before the learner's first decision; raise the target")
        self.done = False  # points scored before the learner's first decision count in its first step's reward
        if self.render_mode == "human":
            self.render()
        return self._observe(), self._info()

    def step(self, action: int) -> tuple[dict, float, bool, bool, dict]:
        """Play the learner's action, then the other seats until the learner decides again or the episode ends."""
        if self.state is None or self.done:
            raise gymnasium.error.ResetNeeded("the episode is over (or never began): call reset() before step()")
        state = self.state
        legal = state.legal_actions()
        index = _as_index(action)
        if index is None or index not in legal:
            if self.illegal == "raise":
                raise ValueError(self._illegal_message(action))
            self.done = True
            return self._observe(), -1.0, True, False, self._info(illegal_action=True)
        snapshot = state.clone()
        try:
            state.apply(index)
            self._advance()
        except BaseException:
            self.state = snapshot  # an opponent's failure leaves the env as it was before this step
            raise
        terminated = self._episode_over()
        reward = self._reward(terminated)
        self._scores = list(state.scores)
        self.done = terminated
        if self.render_mode == "human":
            self.render()
        return self._observe(), reward, terminated, False, self._info()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as booleans (all False once the episode is over)."""
        if self.state is None or self.done:
            return np.zeros(NUM_ACTIONS, dtype=bool)
        mask = np.zeros(NUM_ACTIONS, dtype=bool)
        mask[self.state.legal_actions()] = True
        return mask

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render_mode; pass render_mode= to the constructor")
            return None
        if self.state is None:
            raise gymnasium.error.ResetNeeded("call reset() before render()")
        if self.render_mode == "rgb_array":
            return _render_image(self.state)
        text = _render_text(self.state, hands=self.render_mode == "human")
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # -- more than Gymnasium asks ------------------------------------------------------

    def record(self, **extra: Any) -> dict:
        """The current match as a game record (``allfives-record/1``)."""
        if self.state is None:
            raise gymnasium.error.ResetNeeded("call reset() before record()")
        return to_record(self.state, learner_seat=self.learner, **extra)

    # -- inside ------------------------------------------------------------------

    def _episode_over(self) -> bool:
        state = self.state
        return state.finished or (self.episode == "round" and state.round_index != self.start_round)

    def _advance(self) -> None:
        """Let the other seats (and the learner's forced moves, if asked) play until the learner must choose."""
        state = self.state
        while not self._episode_over():
            seat = state.to_act
            if seat == self.learner:
                legal = state.legal_actions()
                if not (self.auto_forced and len(legal) == 1 and legal[0] >= NUM_ACTIONS - 2):
                    return
                state.apply(legal[0])
                continue
            opponent = self.seats[(seat - self.learner) % self.game_rules.num_players - 1]
            action = opponent.act(state, seat, self.history)
            try:
                state.apply(action)
            except IllegalActionError as err:
                raise ValueError(f"the opponent at seat {seat} chose an illegal action: {err}") from None

    def _reward(self, terminated: bool) -> float:
        rules = self.game_rules
        mine = rules.side_of[self.learner]
        if self.reward_mode == "points":
            gains = [now - before for now, before in zip(self.state.scores, self._scores, strict=True)]
            others = [g for side, g in enumerate(gains) if side != mine]
            return float((gains[mine] - sum(others) / len(others)) / rules.target)
        if not terminated:
            return 0.0
        if self.state.finished and self.episode == "match":
            winners = self.state.winners
        else:
            result = self.state.past[self.start_round].result
            winners = (result.winner,) if result.winner is not None else ()
        if len(winners) != 1:
            return 0.0  # no winner, or a shared win: 0 to everyone
        return 1.0 if mine in winners else -1.0

    def _observe(self) -> dict:
        view = self.state.view(self.learner)
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        if not self.done:
            mask[list(view.legal)] = 1
        return {"observation": encode_observation(view, self.history), "action_mask": mask}

    def _info(self, **extra: Any) -> dict:
        state = self.state
        info = {"learner_seat": self.learner, "round": state.round_index, "scores": tuple(state.scores)}
        if state.finished:
            info["winners"] = state.winners
        info.update(extra)
        return info

    def _illegal_message(self, action: Any) -> str:
        state = self.state
        try:
            shown = f"{action!r} ({state.action_text(int(action))})"
        except (ValueError, TypeError, IndexError):
            shown = repr(action)
        legal = ", ".join(f"{a} ({state.action_text(a)})" for a in state.legal_actions())
        return f"action {shown} is illegal for the learner (seat {self.learner}); legal actions: {legal}"


# -- rendering (minimal until the shared text and image views land) ------------------


def _render_text(state: State, hands: bool) -> str:
    layout = state.layout
    lines = [f"round {state.round_index}  scores {list(state.scores)}  to act: seat {state.to_act}"]
    for slot, name in enumerate("WENS"):
        arm = " ".join(TILE_TEXT[t] for t in layout.arms[slot])
        lines.append(f"  {name}: [{arm}] end {layout.values[slot]} counts {layout.counts[slot]}")
    lines.append(f"  end total {layout.end_total}, boneyard {state.boneyard_left}")
    if hands:
        for seat in range(state.rules.num_players):
            lines.append(f"  seat {seat}: " + " ".join(TILE_TEXT[t] for t in state.hand_tiles(seat)))
    return "\n".join(lines)


def _render_image(state: State) -> np.ndarray:
    image = np.full((64, 224, 3), 255, dtype=np.uint8)
    for t in range(28):
        if state.layout.played >> t & 1:
            image[24:40, t * 8 : t * 8 + 6] = 0
    return image


def _register() -> None:
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(
            id=ENV_ID,
            entry_point="allfives_env.gym_env:AllFivesSingleAgentEnv",
            kwargs={"illegal": "penalize"},
        )


_register()
