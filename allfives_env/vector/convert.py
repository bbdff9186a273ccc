"""A table record as the core sees it, and back: the seat to act's view, the whole state, a record of a view.

For what only the core or an agent written on it answers (an agent that is
not compiled, a rendering, a final observation after the table restarted),
and for the search, which starts its compiled play-outs from a record of what
a view shows. The layout is rebuilt by the core from the round's public
moves, so nothing here works out a rule again.
"""

from __future__ import annotations

import numpy as np

from ..core import DRAW, Rules, SeatView, State
from ..core.layout import Layout
from ..views.observation import to_target
from .table import TABLE


def _score(value: float) -> int | float:
    """A side's score as the core keeps it: an int, or a float for the halves of a three-player split."""
    return int(value) if float(value).is_integer() else float(value)


def seat_view(record: np.void, rules: Rules, legal: tuple[int, ...]) -> SeatView:
    """The view of the seat to act at the table ``record`` (whose legal actions are ``legal``)."""
    n = rules.num_players
    codes = tuple(int(code) for code in record["moves"][: record["move_count"]])
    layout = Layout()
    for code in codes:
        if code & 127 < DRAW:
            layout.place((code & 127) >> 2, code & 3)
    hands = [int(h) for h in record["hands"][:n]]
    seat = int(record["to_act"])
    return SeatView(
        seat,
        rules,
        hands[seat],
        tuple(h.bit_count() for h in hands),
        rules.boneyard_size - int(record["bone_pos"]),
        layout,
        tuple(int(x) for x in record["lacks"][:n]),
        tuple(_score(x) for x in record["scores"][: rules.num_sides]),
        int(record["round_index"]),
        seat,
        int(record["drawn"]),
        tuple(legal),
        codes,
        int(record["leader"]),
        int(record["required_lead"]) if record["lead"] < 0 else -1,
    )


def core_state(record: np.void, rules: Rules, seed: int = 0, round_limit: int | None = None) -> State:
    """The whole core state of the table ``record``; ``seed`` deals its later rounds, ``round_limit`` as in
    ``State``. Played on with the core, it plays what the table would this round."""
    n = rules.num_players
    bone_pos, base = int(record["bone_pos"]), n * rules.hand_size
    boneyard = tuple(int(t) for t in record["deal"][base + bone_pos : base + rules.boneyard_size])
    view = seat_view(record, rules, ())
    hands = [int(h) for h in record["hands"][:n]]
    return State.from_view(view, hands, boneyard, seed=seed, round_limit=round_limit)


def view_record(view: SeatView) -> np.ndarray:
    """A one-table record of what ``view`` shows: the layout, the scores, the seat's own hand (the other hands
    and the boneyard are the caller's to fill, as a deal of the hidden tiles)."""
    record = np.zeros(1, TABLE)
    t = record[0]
    layout = view.layout
    t["values"] = layout.values
    t["counts"] = layout.counts
    t["spinner"] = layout.spinner
    t["spinner_ends"] = layout.spinner_ends
    t["end_double"] = layout.terminal_doubles()
    t["arm_started"] = [bool(arm) for arm in layout.arms]
    t["played"] = layout.played
    t["lead"] = layout.lead
    t["required_lead"] = view.required_lead
    t["to_act"] = view.to_act
    t["drawn"] = view.drawn
    t["bone_pos"] = view.rules.boneyard_size - view.boneyard_left
    t["scores"][: view.rules.num_sides] = view.scores
    t["need"][: view.rules.num_sides] = [to_target(view.rules.target, score) for score in view.scores]
    t["hands"][view.seat] = view.hand
    t["lacks"][: view.rules.num_players] = view.lacks
    t["moves"][: len(view.move_codes)] = view.move_codes
    t["move_count"] = len(view.move_codes)
    t["leader"] = view.leader
    t["round_index"] = view.round_index
    return record


def state_record(state: State) -> np.ndarray:
    """A one-table record of a core state, every hand and the boneyard as they truly lie."""
    record = view_record(state.view(state.to_act))
    t = record[0]
    t["hands"][: state.rules.num_players] = state.hands
    left = state.boneyard[state.bone_pos :]  # a state built from a view holds only the tiles left
    start = state.rules.num_players * state.rules.hand_size + int(t["bone_pos"])
    t["deal"][start : start + len(left)] = left
    return record
