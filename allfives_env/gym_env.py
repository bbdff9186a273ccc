"""A Gymnasium single-agent view of a match: one seat learns, policies play the others.

The learner sees exactly what the PettingZoo environment shows its seat: a
``Dict`` with the ego-centric ``"observation"`` vector and the
``"action_mask"`` (the core's legal actions). Between two of its decisions
the other seats are played by the given opponents, so one :meth:`step` is one
learner decision. :meth:`action_masks` gives the mask as booleans, which is
what ``sb3-contrib``'s ``MaskablePPO`` asks for.

``import allfives_env`` registers ``"AllFives-v0"`` with Gymnasium
(:mod:`allfives_env.registration`); ``gymnasium.make("allfives_env.gym_env:AllFives-v0")``
also imports the package first.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from .common import RENDER_MODES, episode_winners, game_settings, points_rewards, reset_options
from .common import observation_space as shared_observation_space
from .common import observe as observe_seat
from .common import render as render_table
from .core import DRAW, NUM_ACTIONS, PASS, IllegalActionError, State
from .core.record import to_record, with_own_keys
from .core.scoring import match_rewards
from .opponents import make_seats
from .options import ResetNeeded, action_refused, as_action, choice
from .options import seed as checked_seed
from .registration import GYM_ID

ENV_ID = GYM_ID  # registered by import allfives_env (allfives_env.registration)
ILLEGAL_MODES = ("raise", "penalize")
RESET_OPTIONS = ("deal", "learner_seat")


def learner_seat_option(value: Any, n: int) -> int | str:
    """The ``learner_seat`` keyword or reset option checked: a seat 0..n-1 or ``"random"``; else ValueError."""
    if isinstance(value, str) and value == "random":
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not 0 <= value < n:
        raise ValueError(f"learner_seat={value!r} is not allowed; allowed: 0..{n - 1} or 'random'")
    return int(value)


# -- the environment ---------------------------------------------------------------


class AllFivesSingleAgentEnv(gymnasium.Env):
    """One learning seat against fixed opponents; one step is one learner decision.

    Keyword arguments (all optional):

    - ``num_players``, ``rules``, ``partnerships``, ``target``, ``opening``,
      ``reward``, ``episode``, ``auto_forced``, ``history``,
      ``action_features``, ``render_mode``: as in the PettingZoo
      environment. ``reward="win_loss"`` pays +1/-1 when the episode ends
      (0 when no side or several sides win);
      ``reward="points"`` pays, each step, the learner's side's points minus
      the mean of the other sides' points, over the target, counting what the
      opponents scored since the learner's last decision. ``auto_forced``
      plays the learner's single forced ``DRAW``/``PASS`` for it.
    - ``opponents``: ``None`` (uniformly random legal moves), one policy for
      every other seat, or a list with one per other seat in seat order after
      the learner. A policy is a bot name (``"random"``, ``"greedy"``, ...), an
      ``Agent`` (it gets ``state.view(seat)``) or a callable
      ``(observation, action_mask) -> action`` on that seat's own observation.
    - ``learner_seat``: a seat number, or ``"random"`` to draw it each reset.
    - ``illegal``: ``"raise"`` (a ``ValueError`` naming the action and the legal
      ones; nothing changes) or ``"penalize"`` (the episode ends with reward -1
      and nothing else changes; the default of the registered
      ``"AllFives-v0"``, for clients that step unmasked actions).
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 2, "name": "allfives_single_v0"}

    def __init__(
        self,
        num_players: int = 2,
        rules: str = "pagat",
        partnerships: bool | None = None,
        target: int | float | None = None,
        opening: str | None = None,
        opponents: Any = None,
        learner_seat: int | str = 0,
        reward: str = "win_loss",
        episode: str = "match",
        auto_forced: bool = False,
        history: bool = False,
        action_features: bool = False,
        illegal: str = "raise",
        render_mode: str | None = None,
    ) -> None:
        settings = game_settings(num_players, rules, partnerships, target, opening, reward, episode, auto_forced,
                                 history, action_features, render_mode)  # fmt: skip
        self._settings = settings
        self.game_rules = settings.rules
        self.reward_mode = settings.reward
        self.episode = settings.episode
        self.auto_forced = settings.auto_forced
        self.history = settings.history
        self.action_features = settings.action_features
        self.render_mode = settings.render_mode
        self.learner_choice = learner_seat_option(learner_seat, self.game_rules.num_players)
        self.illegal = choice("illegal", illegal, ILLEGAL_MODES)
        self.seats = make_seats(opponents, self.game_rules.num_players - 1)
        self.observation_space = shared_observation_space(settings)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.state: State | None = None
        self.match_seed: int | None = None
        self.learner = 0
        self.done = True
        self._scores: list = []  # the scores when the learner last decided, for the points reward

    # -- Gymnasium API -------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """Start a match; with ``seed`` it is the match the core (and the PettingZoo env) deals for that seed.

        ``options={"deal": {"hands": [...], "boneyard": [...], "leader": seat}}``
        fixes the first round's deal; ``options={"learner_seat": seat}`` (a
        seat or ``"random"``) overrides ``learner_seat`` for this episode;
        another key is ignored with an ``UnknownResetOptionWarning`` (see
        :mod:`allfives_env.common`). Without a seed the match comes from the
        env's generator, which a new env seeds from fresh entropy.
        """
        seed = checked_seed(seed)
        deals, learner = self._reset_options(options)  # checked before anything changes
        saved = self._saved(generator=True)  # opponents' code runs below: if it raises, the env is put back as it was
        try:
            return self._start(seed, deals, learner)
        except BaseException:
            self._restore(saved)
            raise

    def _start(self, seed: int | None, deals: dict | None, learner: int | str) -> tuple[dict, dict]:
        super().reset(seed=seed)
        rng = self.np_random
        match_seed = seed if seed is not None else int(rng.integers(2**63))
        # A match that ends before the learner's first decision (only with tiny targets) is dealt again.
        for _ in range(100):
            self.learner = int(rng.integers(self.game_rules.num_players)) if learner == "random" else learner
            for opponent in self.seats:
                opponent.reset(int(rng.integers(2**63)))
            self.state = State(
                self.game_rules, seed=match_seed, deals=deals, round_limit=1 if self.episode == "round" else None
            )
            self.match_seed = match_seed
            self._scores = list(self.state.scores)  # what is scored before the learner's first decision counts
            self._advance()
            if not self.state.finished:
                break
            match_seed = int(rng.integers(2**63))
        else:
            raise RuntimeError("every match ended before the learner's first decision; raise the target")
        self.done = False
        if self.render_mode == "human":
            self.render()
        return self._observe(), self._info()

    def step(self, action: int) -> tuple[dict, float, bool, bool, dict]:
        """Play the learner's action, then the other seats until the learner decides again or the episode ends."""
        if self.state is None:
            raise ResetNeeded("step()")
        if self.done:
            raise gymnasium.error.ResetNeeded("the episode is over: call reset() before step()")
        state = self.state
        index = as_action(action)
        if index is None or index not in state.legal_actions():
            if self.illegal == "raise":
                raise ValueError(self._illegal_message(action) if index is not None else action_refused(action, state))
            self.done = True
            return self._observe(), -1.0, True, False, self._info(illegal_action=True)
        saved = self._saved()
        try:
            state.apply(index)
            self._advance()
        except BaseException:
            self._restore(saved)  # an opponent's failure leaves the env as it was before this step
            raise
        terminated = state.finished
        reward = self._reward(terminated)
        self._scores = list(state.scores)
        self.done = terminated
        if self.render_mode == "human":
            self.render()
        return self._observe(), reward, terminated, False, self._info()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as booleans (all False once the episode is over); MaskablePPO calls this."""
        if self.state is None:
            raise ResetNeeded("action_masks()")
        mask = np.zeros(NUM_ACTIONS, dtype=bool)
        if not self.done:
            mask[self.state.legal_actions()] = True
        return mask

    def render(self) -> str | np.ndarray | None:
        """The table as text (``ansi``; ``human`` prints it with every hand) or as an RGB array."""
        names = [f"player_{s}" + (" (learner)" if s == self.learner else "") for s in range(len(self.seats) + 1)]
        return render_table(self.state, self.render_mode, names)

    def close(self) -> None:
        """Nothing to release: rendering holds no window."""

    # -- more than Gymnasium asks ------------------------------------------------------

    def record(self, **extra: Any) -> dict:
        """The match so far as a game record (``allfives-record/1``), with its seed and the learner's seat.

        An extra key the record writes itself (``seed``, ``learner_seat``, ``format``...) raises ValueError.
        """
        if self.state is None:
            raise ResetNeeded("record()")
        return to_record(self.state, **with_own_keys({"seed": self.match_seed, "learner_seat": self.learner}, extra))

    # -- inside ------------------------------------------------------------------

    def _saved(self, generator: bool = False) -> tuple:
        """Everything ``reset`` and ``step`` change: attributes, the match, the opponents' generators, and
        with ``generator`` the env's own (only ``reset`` draws from it)."""
        rng = vars(self).get("_np_random") if generator else None
        return (
            dict(vars(self)),
            None if self.state is None else self.state.clone(),
            None if rng is None else rng.bit_generator.state,
            [seat.saved() for seat in self.seats],
        )

    def _restore(self, saved: tuple) -> None:
        attributes, state, rng_state, seats = saved
        vars(self).clear()
        vars(self).update(attributes)
        self.state = state
        if rng_state is not None:
            self._np_random.bit_generator.state = rng_state
        for seat, seat_saved in zip(self.seats, seats, strict=True):
            seat.restore(seat_saved)

    def _reset_options(self, options: dict | None) -> tuple[dict | None, int | str]:
        options = reset_options(options, self.game_rules, RESET_OPTIONS)
        deals = {0: options["deal"]} if options.get("deal") is not None else None
        learner = self.learner_choice
        if "learner_seat" in options:
            learner = learner_seat_option(options["learner_seat"], self.game_rules.num_players)
        return deals, learner

    def _advance(self) -> None:
        """Let the other seats (and the learner's forced moves, if asked) play until the learner must choose."""
        state = self.state
        n = self.game_rules.num_players
        while not state.finished:
            seat = state.to_act
            if seat == self.learner:
                legal = state.legal_actions()
                if not (self.auto_forced and len(legal) == 1 and legal[0] in (DRAW, PASS)):
                    return
                state.apply(legal[0])
                continue
            action = self.seats[(seat - self.learner) % n - 1].act(state, seat, self.history)
            try:
                state.apply(action)
            except IllegalActionError as err:
                raise ValueError(f"the opponent at seat {seat} chose an illegal action: {err}") from None

    def _reward(self, terminated: bool) -> float:
        rules = self.game_rules
        mine = rules.side_of[self.learner]
        if self.reward_mode == "points":
            return points_rewards(rules, self._scores, self.state.scores)[mine]
        if not terminated:
            return 0.0
        return match_rewards(rules, self._winners())[mine]  # no winner, or a shared win: 0 to everyone

    def _winners(self) -> tuple[int, ...]:
        """The sides that won the episode: the match's winners, or the first round's winner."""
        return episode_winners(self.state, self.episode)

    def _observe(self) -> dict:
        state = self.state
        return observe_seat(state, self.learner, self._settings, state.legal_actions() if not self.done else ())

    def _info(self, **extra: Any) -> dict:
        state = self.state
        info = {"learner_seat": self.learner, "round": state.round_index, "scores": tuple(state.scores)}
        if state.finished:
            info["winners"] = self._winners()
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
