"""Per-seat observation vectors, ego-centric so one network plays every seat.

Every seat is listed relative to the observer (0 = itself, 1 = the next seat
clockwise, ...), always four seat slots and four side slots whatever the
player count, so one network can also serve every table size. Every feature
is binary or a small non-negative integer (fits int8). :data:`FIELDS` is the
authoritative layout; the README's table is printed from it.

:func:`encode_observation` encodes a :class:`SeatView`, the one place that
decides what a seat may know. :func:`encode_seat` gives the same vector
straight from a state, reading only what that view would hold; it exists for
speed (environments call it every step) and the tests hold it equal to
``encode_observation(state.view(seat))``. Both assemble the vector from
precomputed byte strings, which is several times faster than setting numpy
elements one by one.
"""

from __future__ import annotations

import numpy as np

from ..core.layout import Layout
from ..core.rules import Rules
from ..core.state import SeatView, State
from ..core.tiles import DRAW, NUM_ACTIONS, NUM_TILES, PASS

MAX_SEATS = 4
HISTORY_LENGTH = 128  # more public moves than any round can hold
HISTORY_WIDTH = 12  # per move: seat one-hot 4, kind one-hot 3 (place/draw/pass), tile id + 1, slot one-hot 4


#: The layout's open ends, shared by the observation and the global state vector.
LAYOUT_FIELDS: list[tuple[str, int, str]] = [
    ("end_open", 4, "per slot W, E, N, S: 1 if a tile can be placed there"),
    ("end_value", 28, "per slot (7 each): one-hot of the value to match"),
    ("end_count", 4, "per slot: what the end adds to the end total (0..12)"),
    ("end_double", 4, "per slot: 1 if the end is a terminal double (counts both halves)"),
    ("branch_started", 2, "N, S: 1 once a tile was placed on that branch"),
    ("spinner", 8, "1 if a spinner is down, then one-hot of its value (7)"),
    ("end_total", 1, "the current end total (0..36)"),
]


def _fields() -> list[tuple[str, int, str]]:
    return [
        ("hand", NUM_TILES, "1 if the observer holds tile id i"),
        ("played", NUM_TILES, "1 if tile id i is in the layout"),
        ("hand_counts", MAX_SEATS, "tiles held by each relative seat (0..21); 0 for absent seats"),
        ("boneyard", 1, "tiles left in the boneyard (0..14)"),
        *LAYOUT_FIELDS,
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

#: The largest value of each field that is not binary (every low is 0).
FIELD_HIGH: dict[str, int] = {
    "hand_counts": 21,  # fives, two players: 7 dealt + 14 drawn
    "boneyard": 14,
    "end_count": 12,
    "end_total": 36,
    "to_target": 127,
    "target": 127,
    "round": 127,
}
#: Per history row: column 7 holds tile id + 1 (0..28), the rest are one-hots.
HISTORY_ROW_HIGH = (1,) * 7 + (NUM_TILES,) + (1,) * 4


def observation_size(history: bool = False) -> int:
    return OBSERVATION_SIZE + (HISTORY_SIZE if history else 0)


def observation_high(rules: Rules | None = None, history: bool = False) -> np.ndarray:
    """The largest value each feature can take (all lows are 0); tighter counts when ``rules`` is given."""
    ceilings = dict(FIELD_HIGH)
    if rules is not None:
        ceilings["hand_counts"] = rules.hand_size + rules.boneyard_size
        ceilings["boneyard"] = max(1, rules.boneyard_size)  # never equal to the low (0)
    high = np.concatenate([np.full(size, ceilings.get(name, 1), dtype=np.int8) for name, size, _ in FIELDS])
    if history:
        high = np.concatenate([high, np.tile(np.array(HISTORY_ROW_HIGH, dtype=np.int8), HISTORY_LENGTH)])
    return high


# -- byte tables: each field value maps to its finished bytes --------------------------


def _one_hot(size: int, index: int) -> bytes:
    return bytes(1 if i == index else 0 for i in range(size))


_BITS7 = tuple(bytes((m >> i) & 1 for i in range(7)) for m in range(128))  # 7-bit mask -> 7 flags
_SEAT_ONE_HOT = tuple(_one_hot(MAX_SEATS, i) for i in range(MAX_SEATS))
_TILE_ONE_HOT = (bytes(NUM_TILES),) + tuple(_one_hot(NUM_TILES, t) for t in range(NUM_TILES))  # [tile + 1]
_SPINNER = (bytes(8),) + tuple(b"\x01" + _one_hot(7, v) for v in range(7))  # [spinner + 1]
_NO_SEAT_LACKS = tuple(bytes(7 * k) for k in range(MAX_SEATS + 1))  # padding for absent seats


_VALUE_ONE_HOT = tuple(_one_hot(7, v) for v in range(-1, 7))  # [value + 1]


def _open_and_values(key: int) -> bytes:
    """end_open (4) then end_value (28) for the four slot values packed base 8 (value + 1 each)."""
    values = [(key >> (3 * (3 - slot)) & 7) - 1 for slot in range(4)]
    return bytes(v >= 0 for v in values) + b"".join(_VALUE_ONE_HOT[v + 1] for v in values)


_OPEN_VALUES = tuple(_open_and_values(key) for key in range(8**4))


_BITS14 = tuple(low + high for high in _BITS7 for low in _BITS7)  # 14-bit mask -> 14 flags


def bits28(mask: int) -> bytes:
    """A 28-tile mask as 28 bytes of 0/1, tile id order."""
    return _BITS14[mask & 16383] + _BITS14[mask >> 14 & 16383]


def layout_bytes(layout: Layout) -> bytes:
    """The layout fields end_open .. end_total (51 bytes), shared with the global state vector."""
    v0, v1, v2, v3 = layout.values
    c0, c1, c2, c3 = layout.counts
    arms = layout.arms
    doubles = layout.terminal_doubles()
    return b"".join(
        (
            _OPEN_VALUES[(v0 + 1) << 9 | (v1 + 1) << 6 | (v2 + 1) << 3 | (v3 + 1)],
            bytes((c0, c1, c2, c3, *doubles, arms[2] != [], arms[3] != [])),
            _SPINNER[layout.spinner + 1],
            bytes((c0 + c1 + c2 + c3,)),
        )
    )


def to_target(target: float, score: float) -> int:
    """Points still needed, in units of 2.5, rounded up and clipped to 0..127: one byte of the observation."""
    return min(127, max(0, int((target - score) / 2.5 + 0.999)))


_NEED_CACHE: dict[tuple, bytes] = {}


def _need_bytes(target, scores, side_order: tuple[int, ...]) -> bytes:
    """to_target (4 bytes, own side first) and target (1); scores change rarely, so the bytes are cached."""
    key = (target, side_order, *scores)
    found = _NEED_CACHE.get(key)
    if found is None:
        need = [to_target(target, scores[side]) for side in side_order]
        found = bytes(need + [0] * (MAX_SEATS - len(need)) + [min(127, int(target // 5))])
        if len(_NEED_CACHE) > 100_000:
            _NEED_CACHE.clear()
        _NEED_CACHE[key] = found
    return found


# -- per-table constants, computed once per (rules, seat) ------------------------------

_TABLES: dict[Rules, list[tuple]] = {}  # rules -> per-seat tables (equal rules share them)
_LAST: tuple = (None, [])  # the rules asked for last and their tables: the common case needs no hashing


def _table(rules: Rules, me: int) -> tuple:
    """(seat order from ``me``, side order from ``me``'s side, static tail bytes, lacks padding, player count)."""
    global _LAST
    last = _LAST
    if last[0] is not rules:
        tables = _TABLES.get(rules)
        if tables is None:
            if len(_TABLES) > 1000:
                _TABLES.clear()
            tables = _TABLES[rules] = [_seat_table(rules, seat) for seat in range(rules.num_players)]
        last = _LAST = (rules, tables)
    return last[1][me]


def _seat_table(rules: Rules, me: int) -> tuple:
    n, sides = rules.num_players, rules.num_sides
    seats = tuple((me + rel) % n for rel in range(n))
    my_side = rules.side_of[me]
    side_order = tuple((my_side + rel) % sides for rel in range(sides))
    partner = bytes(rules.side_of[s] == my_side for s in seats) + bytes(MAX_SEATS - n)
    present = bytes([1] * n + [0] * (MAX_SEATS - n))
    tail = partner + present + bytes((rules.rules == "fives",))
    return seats, side_order, tail, _NO_SEAT_LACKS[MAX_SEATS - n], n


# -- history ---------------------------------------------------------------------------


def history_row(rel: int, action: int) -> bytes:
    """One public move as a history row: seat ``rel`` (relative to the observer) took ``action``."""
    row = bytearray(HISTORY_WIDTH)
    row[rel] = 1
    if action == DRAW:
        row[5] = 1
    elif action == PASS:
        row[6] = 1
    else:
        row[4] = 1
        row[7] = (action >> 2) + 1
        row[8 + (action & 3)] = 1
    return bytes(row)


_HISTORY_ROWS = tuple(tuple(history_row(rel, a) for a in range(NUM_ACTIONS)) for rel in range(MAX_SEATS))


def _history_bytes(moves, me: int, n: int) -> bytes:
    """The round's public moves, oldest first, one row each; ``moves`` are (seat, action) pairs."""
    moves = moves[-HISTORY_LENGTH:]
    rows = _HISTORY_ROWS
    body = b"".join([rows[(seat - me) % n][action] for seat, action in moves])
    return body + bytes(HISTORY_SIZE - len(body))


# -- the encoders ------------------------------------------------------------------------


def _encode(
    rules: Rules,
    me: int,
    hand: int,
    counts,
    boneyard_left: int,
    layout: Layout,
    lacks,
    scores,
    round_index: int,
    to_act: int,
    drawn: int,
    leader: int,
) -> list[bytes]:
    seats, side_order, tail, lacks_pad, n = _table(rules, me)
    rel_to_act = (to_act - me) % n
    rel_leader = (leader - me) % n
    bits7 = _BITS7
    if n == 2:
        a, b = seats
        head = bytes((counts[a], counts[b], 0, 0, boneyard_left))
        seat_lacks = bits7[lacks[a]] + bits7[lacks[b]]
    else:
        head = bytes([counts[s] for s in seats] + [0] * (MAX_SEATS - n) + [boneyard_left])
        seat_lacks = b"".join([bits7[lacks[s]] for s in seats])
    return [
        bits28(hand),
        bits28(layout.played),
        head,
        layout_bytes(layout),
        seat_lacks,
        lacks_pad,
        _need_bytes(rules.target, scores, side_order),
        bytes((min(127, round_index), drawn >= 0)),
        _TILE_ONE_HOT[drawn + 1],
        _SEAT_ONE_HOT[rel_to_act],
        _SEAT_ONE_HOT[rel_leader],
        tail,
    ]


_INT8 = np.dtype(np.int8)
_JOIN = bytearray().join  # joins straight into a new bytearray: one copy, and the array is writable


def _as_array(parts: list[bytes]) -> np.ndarray:
    return np.frombuffer(_JOIN(parts), _INT8)


def encode_observation(view: SeatView, history: bool = False) -> np.ndarray:
    """The observation vector (int8) of ``view``; a fresh, writable array every call."""
    parts = _encode(
        view.rules,
        view.seat,
        view.hand,
        view.hand_counts,
        view.boneyard_left,
        view.layout,
        view.lacks,
        view.scores,
        view.round_index,
        view.to_act,
        view.drawn,
        view.leader,
    )
    if history:
        parts.append(_history_bytes(view.moves, view.seat, view.rules.num_players))
    return _as_array(parts)


def encode_seat(state: State, seat: int, history: bool = False) -> np.ndarray:
    """``encode_observation(state.view(seat), history)``, read straight from the state.

    It reads the seat's own hand and the public parts only (hand sizes, not
    hands; the drawn tile only for the seat that drew it), exactly the
    :class:`SeatView` contents.
    """
    acting = seat == state.to_act and not state.finished
    parts = _encode(
        state.rules,
        seat,
        state.hands[seat],
        [h.bit_count() for h in state.hands],
        len(state.boneyard) - state.bone_pos,
        state.layout,
        state.lacks,
        state.scores,
        state.round_index,
        state.to_act,
        state.drawn if acting else -1,
        state.deal.leader,
    )
    if history:
        parts.append(_history_bytes([divmod(m, 128) for m in state.moves], seat, state.rules.num_players))
    return _as_array(parts)


def action_mask(legal) -> np.ndarray:
    """A fresh int8 mask of length 114 with the given actions set."""
    mask = bytearray(NUM_ACTIONS)
    for action in legal:
        mask[action] = 1
    return np.frombuffer(mask, _INT8)
