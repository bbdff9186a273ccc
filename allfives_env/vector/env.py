"""The batched engine's public class: many tables stepped by one compiled call, for training loops.

The design is that of a Gymnasium vector environment, a stateful object
with arrays in and arrays out; the state lives in one structured array of
table records (:mod:`allfives_env.vector.table`) that the compiled kernels
(:mod:`allfives_env.vector.kernel`) step in place. Each call returns a
:class:`VectorStep` whose arrays are fresh (a trainer may keep them).

Table ``i`` plays exactly what ``allfives_env.raw_env(**options)`` plays
after ``reset(seed=seeds[i])``: the same deals, the same observations, masks,
rewards and scores for the same actions. When its episode ends, it restarts
at once as that environment would after a ``reset()`` with no seed (its
k-th next match seed is ``next_match_seed(seeds[i], k)``), so the
observation returned with ``terminated[i]`` set is already the new
episode's first decision, while the step's ``rewards``, ``final_scores`` and
``winners`` hold what the finished episode ended with.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import NamedTuple

import numba
import numpy as np

from ..common import EPISODES, REWARD_MODES
from ..core.deal import Deal
from ..core.record import FORMAT, move_texts
from ..core.rules import make_rules
from ..core.state import SeatView
from ..core.stream import next_match_seed
from ..core.tiles import NUM_ACTIONS
from ..options import MAX_SEED, choice, flag
from ..views.action_features import ACTION_FEATURE_SIZE
from ..views.observation import observation_size
from ..views.state_vector import STATE_SIZE
from . import kernel
from .convert import seat_view
from .jit import thread_count
from .table import ROUND_LOG, TABLE, make_config

_LOW64 = (1 << 64) - 1


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


class _Fields:
    """Read the fields of table records by name: per-seat fields cut to the seats, per-side ones to the sides."""

    _PER_SEAT = ("hands", "lacks", "result_pips")
    _PER_SIDE = ("scores",)

    def __init__(self, records: np.ndarray, seats: int, sides: int) -> None:
        self._records, self._seats, self._sides = records, seats, sides

    def __getattr__(self, name: str) -> np.ndarray:
        if name not in TABLE.names:
            raise AttributeError(f"a table has no field {name!r}; its fields: {', '.join(TABLE.names)}")
        field = self._records[name]
        if name in self._PER_SEAT:
            return field[:, : self._seats]
        return field[:, : self._sides] if name in self._PER_SIDE else field


class VectorEnv:
    """``num_envs`` independent All Fives tables of one rule set, stepped together.

    Keyword arguments are those of ``allfives_env.raw_env`` that shape the
    game and its rewards: ``num_players``, ``rules``, ``partnerships``,
    ``target``, ``opening``, ``reward`` ("win_loss", "points"), ``episode``
    ("match", "round"), ``auto_forced``, ``history``, ``action_features``
    (add each table's per-action feature rows), and ``record_dir``
    (write each finished episode's ``allfives-record/1`` game record there).
    ``num_threads`` spreads each call over that many threads (default 1;
    None: all numba may use); the results do not depend on it.
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
        num_threads: int | None = 1,
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
        self.num_threads = thread_count(num_threads)
        self.record_dir = record_dir
        self.num_envs = int(num_envs)
        self.num_players = self.game_rules.num_players
        self.observation_size = observation_size(self.history)
        self.state_size = STATE_SIZE
        self._config = make_config(
            self.game_rules,
            round_episode=self.episode == "round",
            auto_forced=self.auto_forced,
            points_reward=self.reward_mode == "points",
            history=self.history,
            features=self.action_features,
            keep_logs=record_dir is not None,
            threads=self.num_threads,
        )
        self._records = np.zeros(self.num_envs, TABLE)
        self._legal = np.zeros((self.num_envs, 2), dtype=np.uint64)  # each table's legal actions, as bits
        self._rows = np.arange(self.num_envs)
        self._started = False
        self._logs: list[list[tuple[Deal, tuple]]] = [[] for _ in range(self.num_envs)]  # with record_dir only
        self._no_features = np.zeros((0, NUM_ACTIONS, ACTION_FEATURE_SIZE), dtype=np.int8)
        self._no_logs = np.zeros(0, ROUND_LOG)

    # -- the API ---------------------------------------------------------------------------------

    def reset(self, seed: int | Sequence[int] | None = None) -> VectorStep:
        """Start a match on every table: table ``i`` gets ``seed + i`` (an int), ``seed[i]`` (a sequence), or fresh entropy."""
        seeds = self._seeds(seed)
        self._logs = [[] for _ in range(self.num_envs)]
        outputs = self._blank_outputs(self.num_envs)
        self._run(kernel.reset, kernel.reset_parallel, self._rows, seeds, *outputs[:4])
        self._started = True
        return self._step_of(outputs)

    def step(self, actions: Sequence[int] | np.ndarray, rows: Sequence[int] | np.ndarray | None = None) -> VectorStep:
        """Apply one legal action per table (``actions[i]`` for table ``i``'s seat to act).

        With ``rows`` (distinct table indices), only those tables step, table
        ``rows[j]`` with ``actions[j]``, and the outputs have one row per
        listed table, in that order; the other tables wait as they are (a
        loop whose seats act at different times, such as one learning seat
        among bots, steps only the tables where it is their turn). An illegal
        or malformed action raises ``ValueError`` naming the tables and their
        legal actions, and changes no table.
        """
        listed = self._rows if rows is None else self._table_rows(rows, distinct=True)
        actions = self._actions(actions, len(listed))
        outputs = self._blank_outputs(len(listed), stepping=True)
        logs = np.zeros(len(listed), ROUND_LOG) if self.record_dir is not None else self._no_logs
        if self._run(kernel.step, kernel.step_parallel, listed, actions, *outputs, logs):
            self._refuse(actions, listed)  # the kernel checked every action first and changed nothing
        if self.record_dir is not None:
            self._keep_logs(listed, logs, outputs[5])
        return self._step_of(outputs)

    def keep(self, rows: Sequence[int] | np.ndarray) -> None:
        """Keep only the tables ``rows`` (distinct, in the order given) and drop the others.

        Table ``rows[j]`` goes on as table ``j``, exactly as it would have
        (its restarts included); ``num_envs`` becomes ``len(rows)``. A loop
        that plays a fixed set of episodes calls it as episodes end, so that
        finished tables stop costing steps. The arrays of the last step are
        the caller's to index with ``rows`` too.
        """
        if not self._started:
            raise RuntimeError("call reset() before keep()")
        kept = self._table_rows(rows, distinct=True)
        self._records = self._records[kept]
        self._legal = self._legal[kept]
        self._logs = [self._logs[row] for row in kept.tolist()]
        self.num_envs = len(kept)
        self._rows = np.arange(self.num_envs)

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
        if not self._started:
            raise RuntimeError("call reset() before branch()")
        kept = self._table_rows(rows, distinct=False)
        episode = self.episode if episode is None else choice("episode", episode, EPISODES)
        branched = VectorEnv(
            len(kept),
            **self.game_rules.as_dict(),
            reward=self.reward_mode,
            episode=episode,
            auto_forced=self.auto_forced,
            history=self.history,
            action_features=self.action_features,
            num_threads=self.num_threads,
        )
        branched._records = self._records[kept]
        branched._legal = self._legal[kept]
        branched._started = True
        return branched, branched._opening_outputs()

    def load(self, records: np.ndarray) -> VectorStep:
        """Replace every table with a copy of ``records`` (one :data:`~allfives_env.vector.table.TABLE` record a
        table, such as :func:`~allfives_env.vector.convert.state_record` makes); returns their outputs now.

        A search plays from positions that no reset reaches: a seat's view with
        one guess of the hidden tiles (:func:`~allfives_env.vector.convert.view_record`
        and a deal filled in). ``num_envs`` becomes ``len(records)``. The
        records must hold a position of this engine's rules; an engine that
        writes game records refuses, since a loaded table has no deal log.
        """
        if self.record_dir is not None:
            raise RuntimeError("load() is not allowed with record_dir: a loaded table has no log to write")
        if not isinstance(records, np.ndarray) or records.dtype != TABLE or records.ndim != 1 or not records.size:
            got = f"dtype {records.dtype}, shape {records.shape}" if isinstance(records, np.ndarray) else repr(records)
            raise ValueError(f"records must be a 1-d array of TABLE records, at least one; got {got}")
        bad = np.flatnonzero((records["to_act"] < 0) | (records["to_act"] >= self.num_players))
        if bad.size:
            shown = ", ".join(f"table {k}: {records['to_act'][k]}" for k in bad[:5].tolist())
            raise ValueError(f"records must have a seat to act in 0..{self.num_players - 1}; got {shown}")
        self._records = records.copy()
        self._legal = np.zeros((len(records), 2), dtype=np.uint64)
        self._logs = [[] for _ in range(len(records))]
        self.num_envs = len(records)
        self._rows = np.arange(self.num_envs)
        self._started = True
        return self._opening_outputs()

    def state(self) -> np.ndarray:
        """(num_envs, 302) int8: each table's global state vector, as ``raw_env().state()``."""
        if not self._started:
            raise RuntimeError("call reset() before state()")
        out = np.zeros((self.num_envs, STATE_SIZE), dtype=np.int8)
        self._run(kernel.states, kernel.states_parallel, self._rows, out)
        return out

    @property
    def records(self) -> np.ndarray:
        """The table records (dtype :data:`~allfives_env.vector.table.TABLE`), for compiled code that reads the
        tables beside the engine (the batched bots): read them, never write them."""
        return self._records

    @property
    def config(self) -> np.ndarray:
        """The one-element :data:`~allfives_env.vector.table.CONFIG` record the kernels read."""
        return self._config

    def seat_views(self, rows: Sequence[int] | np.ndarray) -> list[SeatView]:
        """The core's :class:`~allfives_env.core.SeatView` of the seat to act at each listed table.

        For agents that are not compiled: a view holds only what the seat may
        know. It is built in Python (the layout from the round's moves), so it
        is for the few tables such agents play, not for every step of every table.
        """
        if not self._started:
            raise RuntimeError("call reset() before seat_views()")
        return [
            seat_view(self._records[row], self.game_rules, tuple(np.flatnonzero(self._mask_of(row)).tolist()))
            for row in self._table_rows(rows, distinct=False).tolist()
        ]

    def _mask_of(self, row: int) -> np.ndarray:
        outputs = self._blank_outputs(1)
        kernel.outputs(self._records, self._config, self._legal, np.array([row]), *outputs[:4])
        return outputs[2][0]

    @property
    def _tables(self) -> _Fields:
        """The table records' fields as attributes (``env._tables.scores``), cut to the seats and sides at the
        table: for tests and debugging."""
        return _Fields(self._records, self.num_players, self.game_rules.num_sides)

    # -- inside -------------------------------------------------------------------------------------

    def _run(self, serial, parallel, *args):
        """One kernel call over the tables, on ``num_threads`` threads; returns what the kernel returns."""
        if self.num_threads == 1:
            return serial(self._records, self._config, self._legal, *args)
        numba.set_num_threads(self.num_threads)
        return parallel(self._records, self._config, self._legal, *args)

    def _blank_outputs(self, count: int, stepping: bool = False) -> tuple:
        """The arrays a kernel fills: the seat to act, observation, mask, features; rewards, ends, scores, winners.

        The kernels write every byte of the seat to act and the mask, and the
        observation too unless it has history rows (an observation starts as a
        copy of a template; of the history, only the bytes that are set are
        written). The step kernel writes each row of the last four; the other
        kernels leave them as they come: no reward, no end, NaN scores, no winner.
        """
        sides, n = self.game_rules.num_sides, self.num_players
        width = self.observation_size
        features = (
            np.zeros((count, NUM_ACTIONS, ACTION_FEATURE_SIZE), dtype=np.int8)
            if self.action_features
            else self._no_features
        )
        head = (
            np.empty(count, dtype=np.intp),
            (np.zeros if self.history else np.empty)((count, width), dtype=np.int8),
            np.empty((count, NUM_ACTIONS), dtype=np.int8),
            features,
        )
        if stepping:
            return (*head, np.empty((count, n)), np.empty(count, dtype=bool), np.empty((count, sides)),
                    np.empty((count, sides), dtype=bool))  # fmt: skip
        return (*head, np.zeros((count, n)), np.zeros(count, dtype=bool), np.full((count, sides), np.nan),
                np.zeros((count, sides), dtype=bool))  # fmt: skip

    def _step_of(self, outputs: tuple) -> VectorStep:
        player, observation, mask, features, *rest = outputs
        return VectorStep(player, observation, mask, *rest, features if self.action_features else None)

    def _opening_outputs(self) -> VectorStep:
        """The outputs before any step: zero rewards, nothing terminated."""
        outputs = self._blank_outputs(self.num_envs)
        self._run(kernel.outputs, kernel.outputs_parallel, self._rows, *outputs[:4])
        return self._step_of(outputs)

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

    def _seeds(self, seed) -> np.ndarray:
        """(num_envs, 2) uint64: each table's first seed as its low and high 64 bits."""
        b = self.num_envs
        allowed = "allowed: None, an integer 0..2**128-1 or one per table"
        if seed is None:
            seeds = np.zeros((b, 2), dtype=np.uint64)
            seeds[:, 0] = np.random.default_rng().integers(2**63, size=b)
            return seeds
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
            if not 0 <= seed <= MAX_SEED - b + 1:
                raise ValueError(f"seed={seed!r} is not allowed; {allowed} (seed + num_envs - 1 at most 2**128-1)")
            listed = range(int(seed), int(seed) + b)
        else:
            try:
                listed = list(seed)
            except TypeError:
                raise ValueError(f"seed={seed!r} is not allowed; {allowed}") from None
            if len(listed) != b or not all(
                isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_)) and 0 <= s <= MAX_SEED
                for s in listed
            ):
                raise ValueError(f"seed must hold {b} integers 0..2**128-1, one per table; got {seed!r}")
        seeds = np.empty((b, 2), dtype=np.uint64)
        seeds[:, 0] = [int(s) & _LOW64 for s in listed]
        seeds[:, 1] = [int(s) >> 64 for s in listed]
        return seeds

    def _actions(self, actions, count: int) -> np.ndarray:
        """``actions`` as an int64 array of ``count`` entries (legality is the step kernel's to check)."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        array = actions if isinstance(actions, np.ndarray) else np.asarray(actions)
        if array.dtype == np.int64 and array.shape == (count,):
            return array
        if array.shape != (count,) or not (
            np.issubdtype(array.dtype, np.integer) and not np.issubdtype(array.dtype, np.bool_)
        ):
            raise ValueError(
                f"actions must be {count} integers, one per table stepped; got shape {array.shape}, dtype {array.dtype}"
            )
        if np.issubdtype(array.dtype, np.unsignedinteger) and array.size and array.max() > NUM_ACTIONS:
            array = np.minimum(array, NUM_ACTIONS)  # a huge action is illegal, whatever it is
        return array.astype(np.int64)

    def _refuse(self, actions: np.ndarray, rows: np.ndarray) -> None:
        """The ValueError for illegal actions on tables ``rows``: the first tables' actions and their legal ones."""
        masks = self._opening_outputs().action_mask[rows]
        legal = masks[np.arange(len(rows)), np.clip(actions, 0, NUM_ACTIONS - 1)] == 1
        legal &= (actions >= 0) & (actions < NUM_ACTIONS)
        bad = np.flatnonzero(~legal)
        shown = "; ".join(
            f"table {rows[k]}: action {actions[k]}, legal {np.flatnonzero(masks[k]).tolist()}" for k in bad[:5].tolist()
        )
        more = f" (and {len(bad) - 5} more tables)" if len(bad) > 5 else ""
        raise ValueError(f"illegal actions on {len(bad)} tables, nothing was applied: {shown}{more}")

    # -- records ------------------------------------------------------------------------------------

    def _keep_logs(self, rows: np.ndarray, logs: np.ndarray, terminated: np.ndarray) -> None:
        """Add each round that ended to its table's log; write the record of each episode that ended (``logs`` and
        ``terminated``: one entry per table of ``rows``)."""
        rules = self.game_rules
        n, size = rules.num_players, rules.hand_size
        for k in np.flatnonzero(logs["ended"]).tolist():
            log, row = logs[k], int(rows[k])
            tiles = log["deal"].tolist()
            deal = Deal(tuple(tuple(tiles[s * size : (s + 1) * size]) for s in range(n)), tuple(tiles[n * size :]),
                        int(log["leader"]))  # fmt: skip
            moves = tuple(divmod(code, 128) for code in log["moves"][: log["move_count"]].tolist())
            self._logs[row].append((deal, moves))
        if np.any(terminated):
            os.makedirs(self.record_dir, exist_ok=True)
        for row in rows[terminated].tolist():
            episode = int(self._records[row]["episode"])  # already counts the episode that ended
            first = int(self._records[row]["first_seed"][0]) | int(self._records[row]["first_seed"][1]) << 64
            seed = first if episode == 1 else next_match_seed(first, episode - 1)
            name = f"allfives-{seed}-table{row:05d}-{episode:06d}.json"
            rounds = [{**deal.to_json(), "actions": move_texts(moves)} for deal, moves in self._logs[row]]
            record = {"format": FORMAT, **rules.as_dict(), "seed": seed, "rounds": rounds}
            with open(os.path.join(self.record_dir, name), "w", encoding="utf-8") as f:
                json.dump(record, f, indent=1)
                f.write("\n")
            self._logs[row] = []
