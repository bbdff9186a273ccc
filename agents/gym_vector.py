"""The batched engine as a ``gymnasium.vector.VectorEnv``: one learning seat per table, bots in the others.

Each of the ``num_envs`` tables is one ``AllFives-v0`` episode after another,
stepped together: the same keywords, the same observation space (a ``Dict``
of ``observation``, ``action_mask`` and, when asked, ``action_features``),
the same rewards, so a policy written for ``AllFives-v0`` reads it unchanged.
Underneath is one :class:`allfives_env.vector.VectorEnv`. A ``step`` plays
the learner's action at every table, then steps only the tables where an
opponent is to act (``VectorEnv.step(actions, rows=...)``), with the
opponents' choices for all those tables made at once, until every table is
back at the learner's turn.

Autoreset follows Gymnasium's ``SAME_STEP`` mode, which the engine does
itself (a finished table restarts within the step): the step that ends a
table's episode returns the next episode's first observation, and ``infos``
hold the finished one's ``final_obs`` and ``final_info`` (with the masks
``_final_obs`` and ``_final_info``), as ``gymnasium.vector.SyncVectorEnv``
builds them in that mode.

It lives with the agents, not in ``allfives_env``, because the opponents
play through the agents' batched bots (:mod:`agents.batched`), and the
environment layer never imports the agents.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from allfives_env.common import (
    GameSettings,
    ResetOptionError,
    episode_winners,
    game_settings,
    observe,
    points_rewards,
    render,
    reset_options,
)
from allfives_env.common import observation_space as single_observation_space
from allfives_env.core import DRAW, NUM_ACTIONS
from allfives_env.core.scoring import match_rewards
from allfives_env.core.stream import next_match_seed
from allfives_env.gym_env import learner_seat_option
from allfives_env.options import MAX_SEED, ResetNeeded, choice
from allfives_env.vector import VectorEnv, VectorStep
from allfives_env.vector.convert import core_state

from .vector_opponents import TableOpponents

RENDER_MODES = ("ansi", "rgb_array")
RESET_OPTIONS = ("learner_seat",)
#: Options that ``AllFives-v0`` or Gymnasium's vector envs take and this one cannot: the engine deals from the seeds
#: and resets every table at once.
UNSUPPORTED_OPTIONS = ("deal", "reset_mask")
SKIP_LIMIT = 100  # matches in a row that end before the learner's first decision, as AllFives-v0 allows


class AllFivesVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` tables of ``AllFives-v0`` on the batched engine; one ``step`` is one learner decision per table.

    Keywords are those of ``AllFives-v0`` (``num_players``, ``rules``,
    ``partnerships``, ``target``, ``opening``, ``opponents``,
    ``learner_seat``, ``reward``, ``episode``, ``auto_forced``, ``history``,
    ``action_features``, ``illegal``, ``render_mode``) and ``num_threads``
    for the engine. ``illegal`` takes only ``"raise"``: an illegal action
    raises ValueError naming the tables and their legal actions, and nothing
    changes. ``render_mode`` is None, ``"ansi"`` or ``"rgb_array"``.
    """

    metadata = {
        "autoreset_mode": AutoresetMode.SAME_STEP,
        "render_modes": list(RENDER_MODES),
        "render_fps": 2,
        "name": "allfives_vector_v0",
    }

    def __init__(
        self,
        num_envs: int,
        *,
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
        num_threads: int | None = 1,
    ) -> None:
        if isinstance(num_envs, (bool, np.bool_)) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs={num_envs!r} is not allowed; allowed: a positive integer")
        settings = game_settings(num_players, rules, partnerships, target, opening, reward, episode, auto_forced,
                                 history, action_features, None)  # fmt: skip
        if render_mode is not None:
            choice("render_mode", render_mode, RENDER_MODES)
        self.learner_choice = learner_seat_option(learner_seat, settings.rules.num_players)
        choice("illegal", illegal, ("raise",))
        self.metadata = dict(type(self).metadata)  # the env's own, as Gymnasium's vector envs keep theirs
        self._settings: GameSettings = settings
        self.game_rules = settings.rules
        self.num_envs = int(num_envs)
        self.render_mode = render_mode
        self._opponents = TableOpponents(opponents, self.num_envs, self.game_rules.num_players)
        self._engine = VectorEnv(
            self.num_envs,
            **self.game_rules.as_dict(),
            reward=settings.reward,
            episode=settings.episode,
            auto_forced=settings.auto_forced,
            history=settings.history,
            action_features=settings.action_features,
            num_threads=num_threads,
        )
        self.single_observation_space = single_observation_space(settings)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        n, sides = self.num_envs, self.game_rules.num_sides
        self._rows = np.arange(n)
        self._started = False
        self._failed = False  # a step or reset that raised part way: the tables are mid-step until reset()
        self._first_seed = [0] * n  # each table's seed; its k-th next match seed is next_match_seed(seed, k)
        self._episodes = np.zeros(n, dtype=np.int64)  # episodes each table finished since reset()
        self._match_seed = [0] * n  # the match seed of each table's episode in play
        self._learner = np.zeros(n, dtype=np.int64)
        self._learner_choice_now = self.learner_choice  # this reset's choice (a reset option may override it)
        self._live = np.zeros(n, dtype=bool)  # the learner has decided in the episode in play
        self._skips = np.zeros(n, dtype=np.int64)
        self._baseline = np.zeros((n, sides))  # the scores when the learner last decided (the points reward)
        self._player = np.zeros(n, dtype=np.intp)  # the engine's latest outputs, every table
        self._observation = self._mask = self._features = None

    # -- the Gymnasium API ---------------------------------------------------------------------

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict | None = None
    ) -> tuple[dict, dict]:
        """Start a match at every table: table ``i`` plays ``AllFives-v0``'s ``reset(seed=seed + i)``.

        ``seed`` is an int (table ``i`` gets ``seed + i`` and the generator is
        seeded with ``seed``, as Gymnasium's vector envs do), a list of one
        seed or None per table, or None; a table without a seed gets one from
        the generator. ``options={"learner_seat": seat or "random"}``
        overrides ``learner_seat`` for this reset. A refused reset changes nothing.
        """
        self._check_open()
        learner = self._reset_options(options)
        listed = self._listed_seeds(seed)  # checked before anything changes
        if isinstance(seed, (int, np.integer)):
            super().reset(seed=int(seed))
        seeds = [int(s) if s is not None else int(self.np_random.integers(2**63)) for s in listed]
        self._failed = True  # until the opponents have played up to every learner's turn
        self._learner_choice_now = learner
        self._first_seed = seeds
        self._episodes[:] = 0
        self._skips[:] = 0
        self._adopt(self._engine.reset(seeds))
        self._started = True
        for row, table_seed in enumerate(seeds):
            self._start_episode(row, table_seed)
        self._tick = _Tick(self.num_envs)
        self._play_opponents()
        self._failed = False
        return self._observations(), self._infos()

    def step(self, actions: Any) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Play each table's learner action, then its opponents up to the learner's next decision.

        ``actions`` holds one legal action per table (``action_space``); an
        illegal one raises ValueError naming the tables and their legal
        actions, and nothing changes. A table's reward is everything the
        learner's seat received from its action to its next decision or the
        episode's end (see ``docs/environment.md``).
        """
        self._check_open()
        if not self._started:
            raise ResetNeeded("step()")
        if self._failed:
            raise gymnasium.error.ResetNeeded("the last reset() or step() failed part way: call reset() before step()")
        actions = self._learner_actions(actions)
        self._failed = True
        self._tick = tick = _Tick(self.num_envs)
        self._live[:] = True
        self._engine_step(actions, self._rows)
        self._play_opponents()
        rewards = np.where(tick.ended, tick.final_reward, self._running_rewards())
        self._baseline[~tick.restarted] = self._scores()[~tick.restarted]
        infos = self._infos()
        for row in np.flatnonzero(tick.ended).tolist():
            final_obs, final_info = tick.final[row]
            infos = self._add_info(infos, {"final_obs": final_obs, "final_info": final_info}, row)
        self._failed = False
        return self._observations(), rewards, tick.ended.copy(), np.zeros(self.num_envs, dtype=bool), infos

    def render(self) -> tuple | None:
        """Each table as text (``ansi``) or an RGB array (``rgb_array``), as ``AllFives-v0`` renders one table."""
        self._check_open()
        if self.render_mode is None:
            return render(None, None, ())
        if not self._started:
            raise ResetNeeded("render()")
        records = self._engine.records
        frames = []
        for row in range(self.num_envs):
            state = core_state(records[row], self.game_rules)
            names = [
                f"player_{s}" + (" (learner)" if s == self._learner[row] else "")
                for s in range(state.rules.num_players)
            ]
            frames.append(render(state, self.render_mode, names))
        return tuple(frames)

    def close_extras(self, **kwargs: Any) -> None:
        """Let go of the engine and the opponents; later calls raise."""
        self.__dict__.pop("_engine", None)
        self.__dict__.pop("_opponents", None)

    # -- more than Gymnasium asks --------------------------------------------------------------

    def action_masks(self) -> np.ndarray:
        """(num_envs, 114) bool: each table's learner's legal actions (the ``action_mask`` of the last observation)."""
        self._check_open()
        if not self._started:
            raise ResetNeeded("action_masks()")
        return self._mask.astype(bool)

    @property
    def learner_seats(self) -> np.ndarray:
        """(num_envs,): the learner's seat at each table in the episode in play."""
        return self._learner.copy()

    @property
    def match_seeds(self) -> list[int]:
        """The match seed of each table's episode in play: ``AllFives-v0``'s ``reset(seed=s)`` plays that episode."""
        return list(self._match_seed)

    # -- one step, inside ------------------------------------------------------------------------

    def _engine_step(self, actions: np.ndarray, rows: np.ndarray) -> None:
        """Step the tables ``rows`` on the engine; an episode that ended is closed and the table's next one started."""
        width = self._engine.records.dtype.itemsize
        saved = np.take(self._engine.records.view(np.uint8).reshape(-1, width), rows, axis=0)  # for final states
        out = self._engine.step(actions, rows=rows)
        if rows is self._rows:
            self._adopt(out)
        else:
            self._player[rows] = out.current_player
            self._observation[rows] = out.observation
            self._mask[rows] = out.action_mask
            if self._features is not None:
                self._features[rows] = out.action_features
        for k in np.flatnonzero(out.terminated).tolist():
            row = int(rows[k])
            if self._live[row]:
                record = saved[k].view(self._engine.records.dtype)[0]
                self._close_episode(row, record, int(actions[k]), out.final_scores[k])
            else:
                self._skips[row] += 1
                if self._skips[row] >= SKIP_LIMIT:
                    raise RuntimeError(
                        f"table {row}: {SKIP_LIMIT} matches in a row ended before the learner's first decision; "
                        "raise the target"
                    )
            self._episodes[row] += 1
            self._tick.restarted[row] = True
            self._start_episode(row, next_match_seed(self._first_seed[row], int(self._episodes[row])))

    def _play_opponents(self) -> None:
        """Step the tables where an opponent is to act, all at once, until every table is at its learner's turn."""
        n = self.game_rules.num_players
        waiting = np.flatnonzero(self._player != self._learner)
        while waiting.size:
            seats = self._player[waiting]
            slots = (seats - self._learner[waiting]) % n - 1
            actions = self._opponents.choose(self._engine, waiting, slots, seats, self._observation, self._mask)
            self._engine_step(actions, waiting)
            waiting = waiting[self._player[waiting] != self._learner[waiting]]
        self._skips[:] = 0

    def _start_episode(self, row: int, match_seed: int) -> None:
        """Seed the learner's seat and the opponents of ``row``'s new episode as ``AllFives-v0``'s ``reset(seed=...)``."""
        rng, _ = seeding.np_random(match_seed)
        choice_now = self._learner_choice_now
        self._learner[row] = int(rng.integers(self.game_rules.num_players)) if choice_now == "random" else choice_now
        self._opponents.reset(row, rng)
        self._match_seed[row] = match_seed
        self._live[row] = False
        self._baseline[row] = 0.0

    def _close_episode(self, row: int, record: np.void, action: int, final_scores: np.ndarray) -> None:
        """The finished episode's final observation, info and reward, from the core playing its last action."""
        state = self._final_state(record, action)
        if not state.finished or list(state.scores) != final_scores.tolist():
            raise RuntimeError(f"table {row}: the core's end of the match differs from the engine's")  # never expected
        rules, learner = self.game_rules, int(self._learner[row])
        side = rules.side_of[learner]
        winners = episode_winners(state, self._settings.episode)
        if self._settings.reward == "points":
            reward = points_rewards(rules, self._baseline[row].tolist(), state.scores)[side]
        else:
            reward = match_rewards(rules, winners)[side]
        won = np.zeros(rules.num_sides, dtype=bool)
        won[list(winners)] = True
        info = {
            "learner_seat": learner,
            "round": state.round_index,
            "scores": np.array(state.scores, dtype=np.float64),
            "winners": won,
        }
        tick = self._tick
        tick.ended[row] = True
        tick.final_reward[row] = reward
        tick.final[row] = (observe(state, learner, self._settings, ()), info)
        self._live[row] = False

    def _final_state(self, record: np.void, action: int):
        """The core state after ``action`` on the table as ``record`` held it, forced moves played as the engine plays them."""
        episode_round = self._settings.episode == "round"
        state = core_state(record, self.game_rules, round_limit=1 if episode_round else None)
        state.apply(action)
        while self._settings.auto_forced and not state.finished and len(state.legal_actions()) == 1:
            forced = state.legal_actions()[0]
            if forced < DRAW:
                break
            state.apply(forced)
        return state

    # -- outputs ---------------------------------------------------------------------------------

    def _adopt(self, out: VectorStep) -> None:
        """Take a whole-engine output as the latest of every table (its arrays are fresh: they become the step's)."""
        self._player = out.current_player
        self._observation = out.observation
        self._mask = out.action_mask
        self._features = out.action_features

    def _observations(self) -> dict[str, np.ndarray]:
        """The step's observations: the arrays of this step's engine calls, which later steps never write (a
        step starts from the fresh arrays of its learner call); the mask is also kept apart, to check actions."""
        obs = {"observation": self._observation, "action_mask": self._mask}
        if self._features is not None:
            obs["action_features"] = self._features
        self._mask = self._mask.copy()
        return obs

    def _scores(self) -> np.ndarray:
        return self._engine.records["scores"][:, : self.game_rules.num_sides]

    def _running_rewards(self) -> np.ndarray:
        """Each table's reward since the learner's last decision, as ``AllFives-v0`` pays it mid-episode."""
        if self._settings.reward != "points":
            return np.zeros(self.num_envs)
        rules = self.game_rules
        gains = self._scores() - self._baseline
        mine = gains[self._rows, np.asarray(rules.side_of)[self._learner]]
        return (mine - (gains.sum(axis=1) - mine) / (rules.num_sides - 1)) / rules.target

    def _infos(self) -> dict[str, np.ndarray]:
        """The infos of ``AllFives-v0`` for every table, batched, each with its ``_key`` mask (every table has it)."""
        every = np.ones(self.num_envs, dtype=bool)
        values = {
            "learner_seat": self._learner.copy(),
            "round": self._engine.records["round_index"].astype(np.int64),
            "scores": self._scores().copy(),
        }
        infos: dict[str, np.ndarray] = {}
        for key, value in values.items():
            infos[key], infos[f"_{key}"] = value, every.copy()
        return infos

    # -- arguments --------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if "_engine" not in self.__dict__:
            raise RuntimeError("the environment is closed")

    def _reset_options(self, options: Any) -> int | str:
        if isinstance(options, dict):
            for key in UNSUPPORTED_OPTIONS:
                if key in options:
                    raise ResetOptionError(
                        f"reset option {key!r} is not supported here: the batched engine deals every table from its "
                        f"seed and resets all tables at once; allowed: {', '.join(map(repr, RESET_OPTIONS))}"
                    )
        checked = reset_options(options, self.game_rules, RESET_OPTIONS)
        if "learner_seat" in checked:
            return learner_seat_option(checked["learner_seat"], self.game_rules.num_players)
        return self.learner_choice

    def _listed_seeds(self, seed: Any) -> list[int | None]:
        """One seed or None per table, or ValueError saying what is allowed (nothing drawn yet)."""
        n = self.num_envs
        allowed = f"allowed: None, an integer 0..2**128-{n} (table i gets seed + i) or a list of {n} seeds (each None or an integer 0..2**128-1)"
        if seed is None:
            return [None] * n
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
            if not 0 <= seed <= MAX_SEED - n + 1:
                raise ValueError(f"seed={seed!r} is not allowed; {allowed}")
            return [int(seed) + i for i in range(n)]
        if isinstance(seed, (str, bytes, dict)) or not isinstance(seed, (Sequence, np.ndarray)) or len(seed) != n:
            raise ValueError(f"seed={seed!r} is not allowed; {allowed}")
        for s in seed:
            if s is not None and (
                isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, np.integer)) or not 0 <= s <= MAX_SEED
            ):
                raise ValueError(f"seed={seed!r} is not allowed; {allowed}")
        return [None if s is None else int(s) for s in seed]

    def _learner_actions(self, actions: Any) -> np.ndarray:
        """``actions`` as int64, one legal action per table, or ValueError naming the tables and their legal actions."""
        n = self.num_envs
        array = np.asarray(actions)
        if array.shape != (n,) or not np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.bool_):
            raise ValueError(
                f"actions must be {n} integers, one per table (action_space {self.action_space}); "
                f"got shape {array.shape}, dtype {array.dtype}"
            )
        array = array.astype(np.int64)
        legal = (array >= 0) & (array < NUM_ACTIONS)
        legal[legal] = self._mask[self._rows[legal], array[legal]] == 1
        bad = np.flatnonzero(~legal)
        if bad.size:
            shown = "; ".join(
                f"table {row} (learner seat {self._learner[row]}): action {array[row]}, legal "
                f"{np.flatnonzero(self._mask[row]).tolist()}"
                for row in bad[:5].tolist()
            )
            more = f" (and {bad.size - 5} more tables)" if bad.size > 5 else ""
            raise ValueError(f"illegal actions at {bad.size} tables, nothing was played: {shown}{more}")
        return array


class _Tick:
    """What one ``reset`` or ``step`` gathers per table: episodes that ended (and how), tables that restarted."""

    def __init__(self, n: int) -> None:
        self.ended = np.zeros(n, dtype=bool)
        self.restarted = np.zeros(n, dtype=bool)
        self.final_reward = np.zeros(n)
        self.final: dict[int, tuple[dict, dict]] = {}
