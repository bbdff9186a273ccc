"""The global state vector: everything on the table, for centralised critics.

Unlike an observation it shows every hand and the boneyard's tiles (not their
draw order), and it lists seats and sides in absolute order rather than from
one seat's point of view. The layout block is the observation's, byte for
byte. :data:`STATE_FIELDS` is the authoritative layout.
"""

from __future__ import annotations

import numpy as np

from ..core.rules import Rules
from ..core.state import State
from ..core.tiles import NUM_TILES
from .observation import FIELD_HIGH, LAYOUT_FIELDS, MAX_SEATS, bits28, layout_bytes

STATE_FIELDS: list[tuple[str, int, str]] = [
    ("hands", MAX_SEATS * NUM_TILES, "per seat 0..3 (28 each): 1 if that seat holds tile id i"),
    ("boneyard_tiles", NUM_TILES, "1 if tile id i is still in the boneyard"),
    ("played", NUM_TILES, "1 if tile id i is in the layout"),
    ("hand_counts", MAX_SEATS, "tiles held by each seat (0..21); 0 for absent seats"),
    ("boneyard", 1, "tiles left in the boneyard (0..14)"),
    *LAYOUT_FIELDS,
    ("lacks", MAX_SEATS * 7, "per seat (7 each): 1 if it is known to hold no tile of value v"),
    ("to_target", MAX_SEATS, "per side 0..3: points still needed, in units of 2.5, clipped to 127"),
    ("target", 1, "the target in units of 5, clipped to 127"),
    ("round", 1, "round number, clipped to 127"),
    ("must_place_drawn", 1, "1 if the seat to act just drew a tile it must place now"),
    ("drawn_tile", NUM_TILES, "one-hot of that drawn tile"),
    ("to_act", MAX_SEATS, "one-hot: the seat to act"),
    ("leader", MAX_SEATS, "one-hot: the seat that led this round"),
    ("partnerships", 1, "1 if seats 0 and 2 play as partners against seats 1 and 3"),
    ("seat_present", MAX_SEATS, "1 for each seat at the table"),
    ("rules_fives", 1, "1 under the fives rule set, 0 under pagat"),
    ("finished", 1, "1 once the match is over"),
]
STATE_OFFSETS: dict[str, int] = {}
_o = 0
for _name, _size, _ in STATE_FIELDS:
    STATE_OFFSETS[_name] = _o
    _o += _size
STATE_SIZE = _o


def state_high(rules: Rules | None = None) -> np.ndarray:
    """The largest value each state feature can take (all lows are 0)."""
    ceilings = dict(FIELD_HIGH)
    if rules is not None:
        ceilings["hand_counts"] = rules.hand_size + rules.boneyard_size
        ceilings["boneyard"] = max(1, rules.boneyard_size)  # never equal to the low (0)
    return np.concatenate([np.full(size, ceilings.get(name, 1), dtype=np.int8) for name, size, _ in STATE_FIELDS])


def _one_hot(size: int, index: int) -> bytes:
    return bytes(1 if i == index else 0 for i in range(size))


def encode_state(state: State) -> np.ndarray:
    """The global state vector (int8) of ``state``; a fresh array every call."""
    rules = state.rules
    n = rules.num_players
    absent = MAX_SEATS - n
    target = rules.target
    boneyard = 0
    for tile in state.boneyard[state.bone_pos :]:
        boneyard |= 1 << tile
    need = [min(127, max(0, int((target - score) / 2.5 + 0.999))) for score in state.scores]
    acting_drawn = state.drawn if not state.finished else -1
    parts = [bits28(hand) for hand in state.hands]
    parts += [
        bytes(NUM_TILES * absent),
        bits28(boneyard),
        bits28(state.layout.played),
        bytes([h.bit_count() for h in state.hands] + [0] * absent + [state.boneyard_left]),
        layout_bytes(state.layout),
        b"".join(bits28(lacks)[:7] for lacks in state.lacks),
        bytes(7 * absent),
        bytes(need + [0] * (MAX_SEATS - len(need))),
        bytes((min(127, int(target // 5)), min(127, state.round_index), acting_drawn >= 0)),
        _one_hot(NUM_TILES, acting_drawn),
        _one_hot(MAX_SEATS, state.to_act),
        _one_hot(MAX_SEATS, state.deal.leader),
        bytes((rules.partnerships,)),
        bytes([1] * n + [0] * absent),
        bytes((rules.rules == "fives", state.finished)),
    ]
    return np.frombuffer(bytearray(b"".join(parts)), dtype=np.int8)
