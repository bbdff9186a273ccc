"""Per-seat observation vectors, ego-centric so one network plays every seat.

Every seat is listed relative to the observer (0 = itself, 1 = the next seat
clockwise, ...), always four seat slots and four side slots whatever the
player count, so one network can also serve every table size. Every feature
is binary or a small non-negative integer (fits int8). :data:`FIELDS` is the
authoritative layout; the README's table is printed from it.
"""

from __future__ import annotations

import numpy as np

from ..core.state import SeatView
from ..core.tiles import DRAW, NUM_TILES, PASS

MAX_SEATS = 4
HISTORY_LENGTH = 128  # more public moves than any round can hold
HISTORY_WIDTH = 12  # per move: seat one-hot 4, kind one-hot 3 (place/draw/pass), tile id + 1, slot one-hot 4


def _fields() -> list[tuple[str, int, str]]:
    return [
        ("hand", NUM_TILES, "1 if the observer holds tile id i"),
        ("played", NUM_TILES, "1 if tile id i is in the layout"),
        ("hand_counts", MAX_SEATS, "tiles held by each relative seat (0..19); 0 for absent seats"),
        ("boneyard", 1, "tiles left in the boneyard (0..14)"),
        ("end_open", 4, "per slot W, E, N, S: 1 if a tile can be placed there"),
        ("end_value", 28, "per slot (7 each): one-hot of the value to match"),
        ("end_count", 4, "per slot: what the end adds to the end total (0..12)"),
        ("end_double", 4, "per slot: 1 if the end is a terminal double (counts both halves)"),
        ("branch_started", 2, "N, S: 1 once a tile was placed on that branch"),
        ("spinner", 8, "1 if a spinner is down, then one-hot of its value (7)"),
        ("end_total", 1, "the current end total (0..36)"),
        ("lacks", 4 * 7, "per relative seat (7 each): 1 if it is known to hold no tile of value v"),
        ("to_target", MAX_SEATS, "per side, own side first: points still needed, in units of 2.5, clipped to 127"),
        ("target", 1, "the target in units of 5, clipped to 127"),
        ("round", 1, "round number, clipped to 127"),
        ("must_place_drawn", 1, "1 if the observer just drew a tile it must place now"),
        ("drawn_tile", NUM_TILES, "one-hot of that drawn tile"),
        ("to_act", MAX_SEATS, "one-hot: the relative seat to act"),
        ("leader", MAX_SEATS, "one-hot: the relative seat that led this round"),
        ("partner", MAX_SEATS, "1 for each relative seat on the observer's side (itself included)"),
        ("seat_present", MAX_SEATS, "1 for each relative seat at the table"),
        ("rules_fives", 1, "1 under the fives rule set, 0 under pagat"),
    ]


FIELDS = _fields()
OFFSETS: dict[str, int] = {}
_o = 0
for _name, _size, _ in FIELDS:
    OFFSETS[_name] = _o
    _o += _size
OBSERVATION_SIZE = _o
HISTORY_SIZE = HISTORY_LENGTH * HISTORY_WIDTH


def observation_size(history: bool = False) -> int:
    return OBSERVATION_SIZE + (HISTORY_SIZE if history else 0)


_HAND = OFFSETS["hand"]
_PLAYED = OFFSETS["played"]
_COUNTS = OFFSETS["hand_counts"]
_BONE = OFFSETS["boneyard"]
_OPEN = OFFSETS["end_open"]
_VALUE = OFFSETS["end_value"]
_COUNT = OFFSETS["end_count"]
_DOUBLE = OFFSETS["end_double"]
_STARTED = OFFSETS["branch_started"]
_SPIN = OFFSETS["spinner"]
_TOTAL = OFFSETS["end_total"]
_LACKS = OFFSETS["lacks"]
_TO_TARGET = OFFSETS["to_target"]
_TARGET = OFFSETS["target"]
_ROUND = OFFSETS["round"]
_MUST = OFFSETS["must_place_drawn"]
_DRAWN = OFFSETS["drawn_tile"]
_TO_ACT = OFFSETS["to_act"]
_LEADER = OFFSETS["leader"]
_PARTNER = OFFSETS["partner"]
_PRESENT = OFFSETS["seat_present"]
_FIVES = OFFSETS["rules_fives"]


def _set_bits(obs: np.ndarray, offset: int, mask: int) -> None:
    while mask:
        low = mask & -mask
        obs[offset + low.bit_length() - 1] = 1
        mask ^= low


def encode_observation(view: SeatView, history: bool = False) -> np.ndarray:
    """The observation vector (int8) of ``view``; a fresh array every call."""
    obs = np.zeros(OBSERVATION_SIZE + (HISTORY_SIZE if history else 0), dtype=np.int8)
    rules = view.rules
    n = rules.num_players
    me = view.seat
    layout = view.layout
    _set_bits(obs, _HAND, view.hand)
    _set_bits(obs, _PLAYED, layout.played)
    for rel in range(n):
        seat = (me + rel) % n
        obs[_COUNTS + rel] = view.hand_counts[seat]
        _set_bits(obs, _LACKS + 7 * rel, view.lacks[seat])
        obs[_PRESENT + rel] = 1
        if rules.side_of[seat] == rules.side_of[me]:
            obs[_PARTNER + rel] = 1
    obs[_BONE] = view.boneyard_left
    for slot in range(4):
        v = layout.values[slot]
        if v >= 0:
            obs[_OPEN + slot] = 1
            obs[_VALUE + 7 * slot + v] = 1
            obs[_COUNT + slot] = layout.counts[slot]
            if layout.terminal_double(slot):
                obs[_DOUBLE + slot] = 1
    if layout.arms[2]:
        obs[_STARTED] = 1
    if layout.arms[3]:
        obs[_STARTED + 1] = 1
    if layout.spinner >= 0:
        obs[_SPIN] = 1
        obs[_SPIN + 1 + layout.spinner] = 1
    obs[_TOTAL] = layout.end_total
    sides = rules.num_sides
    my_side = rules.side_of[me]
    target = rules.target
    for rel in range(sides):
        score = view.scores[(my_side + rel) % sides]
        obs[_TO_TARGET + rel] = min(127, max(0, int((target - score) / 2.5 + 0.999)))
    obs[_TARGET] = min(127, int(target // 5))
    obs[_ROUND] = min(127, view.round_index)
    if view.drawn >= 0:
        obs[_MUST] = 1
        obs[_DRAWN + view.drawn] = 1
    obs[_TO_ACT + (view.to_act - me) % n] = 1
    obs[_LEADER + (view.leader - me) % n] = 1
    if rules.rules == "fives":
        obs[_FIVES] = 1
    if history:
        _encode_history(obs, OBSERVATION_SIZE, view.moves, me, n)
    return obs


def _encode_history(obs: np.ndarray, offset: int, moves, me: int, n: int) -> None:
    """The round's public moves, oldest first, one row of HISTORY_WIDTH each."""
    for row, (seat, action) in enumerate(moves[-HISTORY_LENGTH:]):
        base = offset + row * HISTORY_WIDTH
        obs[base + (seat - me) % n] = 1
        if action == DRAW:
            obs[base + 5] = 1
        elif action == PASS:
            obs[base + 6] = 1
        else:
            obs[base + 4] = 1
            obs[base + 7] = (action >> 2) + 1
            obs[base + 8 + (action & 3)] = 1
