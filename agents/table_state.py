"""A table of the batched engine as a core ``State``: for what only the core answers (final observations, rendering).

The engine keeps each table as one record (dtype ``allfives_env.vector.table.TABLE``);
its public ``records`` may be read. :func:`table_state` builds the full core
state a record stands for, through ``State.from_view``: the seat to act's
view as ``VectorEnv.seat_views`` reads it, with every hand and the boneyard
left in draw order. Played on with the core, it plays exactly what the table
would (``tests/test_gym_vector.py`` holds it to the engine's observations).
"""

from __future__ import annotations

import numpy as np

from allfives_env.core import DRAW, Rules, SeatView, State
from allfives_env.core.layout import Layout


def _score(value: float) -> int | float:
    """A side's score as the core keeps it: an int, or a float for the halves of a three-player split."""
    return int(value) if float(value).is_integer() else float(value)


def table_state(record: np.void, rules: Rules, seed: int = 0, round_limit: int | None = None) -> State:
    """The core state of one table record; ``seed`` deals its later rounds, ``round_limit`` as in ``State``."""
    n = rules.num_players
    codes = tuple(int(code) for code in record["moves"][: record["move_count"]])
    layout = Layout()
    for code in codes:
        if code & 127 < DRAW:
            layout.place((code & 127) >> 2, code & 3)
    hands = [int(h) for h in record["hands"][:n]]
    seat = int(record["to_act"])
    bone_pos = int(record["bone_pos"])
    view = SeatView(
        seat,
        rules,
        hands[seat],
        tuple(h.bit_count() for h in hands),
        rules.boneyard_size - bone_pos,
        layout,
        tuple(int(x) for x in record["lacks"][:n]),
        tuple(_score(x) for x in record["scores"][: rules.num_sides]),
        int(record["round_index"]),
        seat,
        int(record["drawn"]),
        (),
        codes,
        int(record["leader"]),
        int(record["required_lead"]) if record["lead"] < 0 else -1,
    )
    boneyard = tuple(
        int(t) for t in record["deal"][n * rules.hand_size + bone_pos : n * rules.hand_size + rules.boneyard_size]
    )
    return State.from_view(view, hands, boneyard, seed=seed, round_limit=round_limit)
