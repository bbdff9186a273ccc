"""The batched engine's public class: many tables stepped as arrays, for training loops.

The design is that of a Gymnasium vector environment, a stateful object
with arrays in and arrays out, rather than Pgx's pure functions over a state
value: numpy has no jit that would reward purity, and a trainer keeps one
engine for its whole run anyway. Each call returns a :class:`VectorStep`
whose arrays are fresh (a trainer may keep them).

Table ``i`` plays exactly what ``allfives_env.raw_env(**options)`` plays
after ``reset(seed=seeds[i])``: the same deals, the same observations, masks,
rewards and scores for the same actions. When its episode ends, it restarts
at once as that environment would after a ``reset()`` with no seed (the next
match seed comes from a generator seeded with ``seeds[i]``), so the
observation returned with ``terminated[i]`` set is already the new
episode's first decision, while the step's ``rewards``, ``final_scores`` and
``winners`` hold what the finished episode ended with.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from copy import deepcopy
from typing import NamedTuple

import numpy as np

from ..common import EPISODES, REWARD_MODES
from ..core.record import FORMAT, move_texts
from ..core.rules import make_rules
from ..core.tiles import DRAW, NUM_ACTIONS, PASS
from ..options import choice, flag
from ..views.observation import observation_size
from ..views.state_vector import STATE_SIZE
from .arrays import Tables
from .encode import Encoder
from .features import action_features
from .rounds import Finished, MatchLog, Rounds


class VectorStep(NamedTuple):
    """What every table shows after ``reset`` or ``step``; row ``i`` is table ``i``.

    ``observation`` and ``action_mask`` are for ``current_player``, the seat to
    act. ``rewards`` holds every seat's reward for the step just taken (as
    ``raw_env().rewards`` after that step, forced moves played by
    ``auto_forced`` included). Where ``terminated`` is set the episode ended
    in this step and the table has already restarted: ``final_scores`` (per
    side; NaN elsewhere) and ``winners`` (per side) are the finished
    episode's, like the environment's ``infos``. ``action_features`` (with
    ``action_features=True``) holds the rows of
    :mod:`allfives_env.views.action_features` for the seat to act.
    """

    current_player: np.ndarray  # (num_envs,) intp
    observation: np.ndarray  # (num_envs, observation size) int8
    action_mask: np.ndarray  # (num_envs, 114) int8
    rewards: np.ndarray  # (num_envs, num_players) float64
    terminated: np.ndarray  # (num_envs,) bool
    final_scores: np.ndarray  # (num_envs, num_sides) float64
    winners: np.ndarray  # (num_envs, num_sides) bool
    action_features: np.ndarray | None = None  # (num_envs, 114, K) int8 with action_features=True


class VectorEnv:
    """``num_envs`` independent All Fives tables of one rule set, stepped together.

    Keyword arguments are those of ``allfives_env.raw_env`` that shape the
    game and its rewards: ``num_players``, ``rules``, ``partnerships``,
    ``target``, ``opening``, ``reward`` ("win_loss", "points"), ``episode``
    ("match", "round"), ``auto_forced``, ``history``, ``action_features``
    (add each table's per-action feature rows), and ``record_dir``
    (write each finished episode's ``allfives-record/1`` game record there).
    """

    def __init__(
        self,
        num_envs: int,
        *,
        num_players: int = 2,
        rules: str = "pagat",
        partnerships: bool | None = None,
        target: int | float | None = None,
        opening: str | None = None,
        reward: str = "win_loss",
        episode: str = "match",
        auto_forced: bool = False,
        history: bool = False,
        action_features: bool = False,
        record_dir: str | os.PathLike | None = None,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs={num_envs!r} is not allowed; allowed: a positive integer")
        self.game_rules = make_rules(rules, num_players, partnerships, target, opening)
        self.reward_mode = choice("reward", reward, REWARD_MODES)
        self.episode = choice("episode", episode, EPISODES)
        self.auto_forced = flag("auto_forced", auto_forced)
        self.history = flag("history", history)
        self.action_features = flag("action_features", action_features)
        if record_dir is not None and not isinstance(record_dir, (str, os.PathLike)):
            raise ValueError(f"record_dir={record_dir!r} is not allowed; allowed: None or a directory path")
        self.record_dir = record_dir
        self.num_envs = int(num_envs)
        self.num_players = self.game_rules.num_players
        self.observation_size = observation_size(self.history)
        self.state_size = STATE_SIZE
        self._tables = Tables(self.game_rules, self.num_envs)
        self._rounds = Rounds(self.game_rules, self._tables, self.episode == "round", record_dir is not None)
        self._encoder = Encoder(self.game_rules)
        self._first_seeds: list[int] = []
        self._generators: list[np.random.Generator | None] = []
        self._episodes = np.zeros(self.num_envs, dtype=np.int64)
        self._mask: np.ndarray | None = None  # the legal actions of the last outputs, to check the next step's
        side_of = np.array(self.game_rules.side_of)
        self._win_rewards = [np.where(side_of == side, 1.0, -1.0) for side in range(self.game_rules.num_sides)]

    # -- the API ---------------------------------------------------------------------------------

    def reset(self, seed: int | Sequence[int] | None = None) -> VectorStep:
        """Start a match on every table: table ``i`` gets ``seed + i`` (an int), ``seed[i]`` (a sequence), or fresh entropy."""
        seeds = self._seeds(seed)
        self._first_seeds = seeds
        self._generators = [None] * self.num_envs
        self._episodes[:] = 0
        self._rounds.start_matches(list(range(self.num_envs)), seeds)
        self._rounds.flush()  # every table now opens with a lead, which is never forced
        return self._opening_outputs()

    def step(self, actions: Sequence[int] | np.ndarray) -> VectorStep:
        """Apply one legal action per table (``actions[i]`` for table ``i``'s seat to act).

        An illegal or malformed action raises ``ValueError`` naming the tables
        and their legal actions, and changes no table.
        """
        actions = self._check(actions)
        t = self._tables
        before = t.scores.copy() if self.reward_mode == "points" else None
        finished = Finished()
        self._rounds.end(t.apply(t.rows, actions), finished)
        if self.auto_forced:
            live = np.ones(self.num_envs, dtype=bool)
            live[finished.rows] = False
            live[self._rounds.pending_rows] = False
            self._play_forced(t.rows, finished, live)
        b, sides = self.num_envs, self.game_rules.num_sides
        rewards = self._points(before) if before is not None else np.zeros((b, self.num_players))
        terminated = np.zeros(b, dtype=bool)
        final_scores = np.full((b, sides), np.nan)
        winners = np.zeros((b, sides), dtype=bool)
        if finished.rows:
            rows = finished.rows
            terminated[rows] = True
            final_scores[rows] = finished.scores
            for row, won in zip(rows, finished.winners, strict=True):
                winners[row, list(won)] = True
                if self.reward_mode == "win_loss" and len(won) == 1:
                    rewards[row] = self._win_rewards[won[0]]
            if self.record_dir is not None:
                self._write_records(finished)
            self._restart(rows)
        self._rounds.flush()
        return self._outputs(rewards, terminated, final_scores, winners)

    def keep(self, rows: Sequence[int] | np.ndarray) -> None:
        """Keep only the tables ``rows`` (distinct, in the order given) and drop the others.

        Table ``rows[j]`` goes on as table ``j``, exactly as it would have
        (its restarts included); ``num_envs`` becomes ``len(rows)``. A loop
        that plays a fixed set of episodes calls it as episodes end, so that
        finished tables stop costing steps. The arrays of the last step are
        the caller's to index with ``rows`` too.
        """
        if self._mask is None:
            raise RuntimeError("call reset() before keep()")
        kept = self._table_rows(rows, distinct=True)
        listed = kept.tolist()
        self._tables = self._tables.take(kept)
        self._rounds = self._rounds.take(listed, self._tables)
        self._first_seeds = [self._first_seeds[row] for row in listed]
        self._generators = [self._generators[row] for row in listed]
        self._episodes = self._episodes[kept]
        self._mask = self._mask[kept]
        self.num_envs = len(listed)

    def branch(self, rows: Sequence[int] | np.ndarray, episode: str | None = None) -> tuple[VectorEnv, VectorStep]:
        """A new engine whose table ``j`` is a copy of table ``rows[j]`` as it stands; a table may be copied often.

        Look-ahead starts here: copy a table once per legal action, step
        each copy with its own, and play the copies on. A copy plays on
        exactly as its table would (its restarts included) and shares
        nothing with this engine. ``episode`` (default: this engine's) says
        where a copy's episode ends; ``"round"`` ends it with the round in
        play, or where a side reaches the target, and then ``final_scores``
        are the match's scores and ``winners`` the round's winner, as in any
        round episode. The new engine writes no records. Returns it and its
        outputs now: this engine's for those tables, with zero rewards.
        """
        if self._mask is None:
            raise RuntimeError("call reset() before branch()")
        kept = self._table_rows(rows, distinct=False)
        episode = self.episode if episode is None else choice("episode", episode, EPISODES)
        listed = kept.tolist()
        branched = VectorEnv(
            len(listed),
            **self.game_rules.as_dict(),
            reward=self.reward_mode,
            episode=episode,
            auto_forced=self.auto_forced,
            history=self.history,
            action_features=self.action_features,
        )
        branched._tables = self._tables.take(kept)
        branched._rounds = Rounds(self.game_rules, branched._tables, episode == "round", False)
        branched._rounds.seeds = [self._rounds.seeds[row] for row in listed]
        branched._first_seeds = [self._first_seeds[row] for row in listed]
        branched._generators = [deepcopy(self._generators[row]) for row in listed]
        branched._episodes = self._episodes[kept]
        return branched, branched._opening_outputs()

    def state(self) -> np.ndarray:
        """(num_envs, 302) int8: each table's global state vector, as ``raw_env().state()``."""
        if self._mask is None:
            raise RuntimeError("call reset() before state()")
        return self._encoder.state(self._tables)

    # -- inside -------------------------------------------------------------------------------------

    def _table_rows(self, rows, distinct: bool) -> np.ndarray:
        """``rows`` as an array of table indices, or ValueError saying what is allowed."""
        array = np.asarray(rows)
        if not (
            array.ndim == 1
            and array.size
            and np.issubdtype(array.dtype, np.integer)
            and not np.issubdtype(array.dtype, np.bool_)
            and array.min() >= 0
            and array.max() < self.num_envs
            and (not distinct or len(np.unique(array)) == array.size)
        ):
            which = "distinct table indices" if distinct else "table indices"
            repeats = "" if distinct else " (repeats allowed)"
            raise ValueError(
                f"rows={rows!r} is not allowed; allowed: {which} in 0..{self.num_envs - 1}{repeats}, at least one"
            )
        return array.astype(np.intp)

    def _seeds(self, seed) -> list[int]:
        b = self.num_envs
        if seed is None:
            return [int(s) for s in np.random.default_rng().integers(2**63, size=b)]
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
            if seed < 0:
                raise ValueError(
                    f"seed={seed!r} is not allowed; allowed: None, a non-negative integer or one per table"
                )
            return [int(seed) + i for i in range(b)]
        try:
            seeds = list(seed)
        except TypeError:
            raise ValueError(
                f"seed={seed!r} is not allowed; allowed: None, a non-negative integer or one per table"
            ) from None
        if len(seeds) != b or not all(
            isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_)) and s >= 0 for s in seeds
        ):
            raise ValueError(f"seed must hold {b} non-negative integers, one per table; got {seed!r}")
        return [int(s) for s in seeds]

    def _check(self, actions) -> np.ndarray:
        if self._mask is None:
            raise RuntimeError("call reset() before step()")
        array = np.asarray(actions)
        if array.shape != (self.num_envs,) or not (
            np.issubdtype(array.dtype, np.integer) and not np.issubdtype(array.dtype, np.bool_)
        ):
            raise ValueError(
                f"actions must be {self.num_envs} integers, one per table; got shape {array.shape}, dtype {array.dtype}"
            )
        array = array.astype(np.intp)
        inside = array.view(np.uintp) < NUM_ACTIONS  # a negative action reads as a huge one
        if inside.all():  # one flat read of the legal-action rows
            legal = self._mask.reshape(-1).take(self._tables.rows * NUM_ACTIONS + array) == 1
        else:
            legal = self._mask.reshape(-1).take(self._tables.rows * NUM_ACTIONS + np.where(inside, array, 0)) == 1
            legal &= inside
        if not legal.all():
            bad = np.flatnonzero(~legal)
            shown = "; ".join(
                f"table {row}: action {array[row]}, legal {np.flatnonzero(self._mask[row]).tolist()}"
                for row in bad[:5].tolist()
            )
            more = f" (and {len(bad) - 5} more tables)" if len(bad) > 5 else ""
            raise ValueError(f"illegal actions on {len(bad)} tables, nothing was applied: {shown}{more}")
        return array

    def _play_forced(self, rows: np.ndarray, finished: Finished, live: np.ndarray) -> None:
        """Play forced draws and passes until every live table's seat to act has a real choice.

        A table whose round ended waits for its next deal (a lead, never forced) and is no longer live.
        """
        t = self._tables
        while rows.size:
            mask = t.legal_mask(rows=rows)
            forced = ((mask[:, DRAW] | mask[:, PASS]) == 1) & live[rows]
            rows = rows[forced]
            if not rows.size:
                return
            count, waiting = len(finished.rows), len(self._rounds.pending_rows)
            self._rounds.end(t.apply(rows, np.where(mask[forced, DRAW] == 1, DRAW, PASS)), finished)
            live[finished.rows[count:]] = False  # over, or waiting for the next round's deal
            live[self._rounds.pending_rows[waiting:]] = False

    def _points(self, before: np.ndarray) -> np.ndarray:
        """Own side's gain minus the mean of the other sides' gains, over the target (zero-sum), as raw_env."""
        rules = self.game_rules
        gains = self._tables.scores - before
        total = gains.sum(axis=1, keepdims=True)
        seat_gain = gains[:, np.array(rules.side_of)]
        return (seat_gain - (total - seat_gain) / (rules.num_sides - 1)) / rules.target

    def _restart(self, rows: list[int]) -> None:
        seeds = []
        for row in rows:
            generator = self._generators[row]
            if generator is None:
                generator = self._generators[row] = np.random.default_rng(self._first_seeds[row])
            seeds.append(int(generator.integers(2**63)))
        self._episodes[rows] += 1
        self._rounds.start_matches(rows, seeds)

    def _opening_outputs(self) -> VectorStep:
        """The outputs before any step: zero rewards, nothing terminated."""
        b, sides = self.num_envs, self.game_rules.num_sides
        return self._outputs(
            np.zeros((b, self.num_players)),
            np.zeros(b, dtype=bool),
            np.full((b, sides), np.nan),
            np.zeros((b, sides), dtype=bool),
        )

    def _outputs(self, rewards, terminated, final_scores, winners) -> VectorStep:
        t = self._tables
        t.refresh_need()
        self._mask = t.legal_mask()  # kept to check the next actions; the caller gets a copy
        mask = self._mask.copy()
        features = action_features(t, mask) if self.action_features else None
        return VectorStep(
            t.to_act.copy(),
            self._encoder.observation(t, self.history),
            mask,
            rewards,
            terminated,
            final_scores,
            winners,
            features,
        )

    def _write_records(self, finished: Finished) -> None:
        os.makedirs(self.record_dir, exist_ok=True)
        for row, log in zip(finished.rows, finished.logs, strict=True):
            name = f"allfives-{log.seed}-table{row:05d}-{int(self._episodes[row]) + 1:06d}.json"
            with open(os.path.join(self.record_dir, name), "w", encoding="utf-8") as f:
                json.dump(self._record_of(log), f, indent=1)
                f.write("\n")

    def _record_of(self, log: MatchLog) -> dict:
        """A finished match's ``allfives-record/1`` record, as the core's ``to_record`` writes it."""
        rounds = [{**deal.to_json(), "actions": move_texts(moves)} for deal, moves in log.rounds]
        return {"format": FORMAT, **self.game_rules.as_dict(), "seed": log.seed, "rounds": rounds}
