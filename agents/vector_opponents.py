"""The other seats of every table of the vector environment, chosen for many tables at once.

The ``opponents`` keyword is read exactly as ``AllFives-v0`` reads it
(:func:`allfives_env.opponents.make_seats`): ``None`` (uniformly random), a
bot name, an ``Agent`` or a callable ``(observation, action_mask) -> action``,
one for every other seat or a list with one per other seat in seat order
after the learner. A name or ``None`` gives every table its own copy, each
reseeded at every episode as ``AllFives-v0`` reseeds its opponents; an
``Agent`` or callable object is shared by all tables, as given.

The bots ``random``, ``greedy`` and ``heuristic`` choose for all their
tables in one compiled call (:func:`agents.batched.choose`); other agents
are asked with the seat's view, uniform seats and callables from the
engine's observation and mask of the seat to act.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from allfives_env.opponents import AgentSeat, CallableSeat, Seat, UniformRandom, make_seats
from allfives_env.options import as_action
from allfives_env.vector import VectorEnv

from .batched import choose


class _LegalActions:
    """All that a uniformly random seat reads of a table: its legal actions."""

    def __init__(self, legal: list[int]) -> None:
        self._legal = legal

    def legal_actions(self) -> list[int]:
        return self._legal


class TableOpponents:
    """``seats[table][slot]``: who plays the seat ``slot + 1`` places after the learner at each table."""

    def __init__(self, opponents: Any, num_envs: int, num_players: int) -> None:
        count = num_players - 1
        template = make_seats(opponents, count)  # checks the keyword and resolves names once
        specs = list(opponents) if isinstance(opponents, (list, tuple)) else [opponents] * count
        own = [spec is None or isinstance(spec, str) for spec in specs]  # a copy per table; else shared
        self.seats: list[list[Seat]] = [
            [copy.deepcopy(seat) if own[j] and table else seat for j, seat in enumerate(template)]
            for table in range(num_envs)
        ]
        self.kinds = [type(seat) for seat in template]

    def reset(self, table: int, rng: np.random.Generator) -> None:
        """Start an episode at ``table``: each seat in slot order gets a seed from ``rng``, as in ``AllFives-v0``."""
        for seat in self.seats[table]:
            seat.reset(int(rng.integers(2**63)))

    def choose(
        self,
        env: VectorEnv,
        rows: np.ndarray,
        slots: np.ndarray,
        seats: np.ndarray,
        observation: np.ndarray,
        mask: np.ndarray,
    ) -> np.ndarray:
        """The action of the opponent in ``slots[k]`` at table ``rows[k]``, whose seat ``seats[k]`` is to act.

        ``observation`` and ``mask`` are the engine's latest outputs of every
        table (those of the seat to act). An action a callable answers is
        checked; an illegal one raises ValueError naming the table and seat.
        """
        actions = np.empty(len(rows), dtype=np.int64)
        for slot in np.unique(slots).tolist():
            picked = np.flatnonzero(slots == slot)
            tables = rows[picked].tolist()
            playing = [self.seats[table][slot] for table in tables]
            kind = self.kinds[slot]
            if kind is AgentSeat:
                actions[picked] = choose(env, rows[picked], [seat.agent for seat in playing])
                continue
            for k, table, seat in zip(picked.tolist(), tables, playing, strict=True):
                legal = np.flatnonzero(mask[table]).tolist()
                if kind is UniformRandom:
                    actions[k] = seat.act(_LegalActions(legal), int(seats[k]), False)
                    continue
                assert kind is CallableSeat
                answer = seat.policy(observation[table].copy(), mask[table].copy())
                action = as_action(answer)
                if action is None or action not in legal:
                    raise ValueError(
                        f"the opponent at seat {int(seats[k])} of table {table} chose an illegal action {answer!r}; "
                        f"legal: {legal}"
                    )
                actions[k] = action
        return actions
