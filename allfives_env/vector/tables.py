"""Lookup tables for the batched engine, derived once from the core's tile tables.

The four open ends of a layout are packed into one *end key*,
``sum((value[slot] + 1) << 3 * (3 - slot))`` (value ``-1`` for a closed end,
so 8**4 keys), and every question the hot path asks about the ends (which
tile fits which slot, which values are open, the end_open and end_value
observation bytes) becomes one gather by that key. Every table is computed
from :mod:`allfives_env.core.tiles`, the one authority on tiles.
"""

from __future__ import annotations

import numpy as np

from ..core.scoring import POINTS_FOR_TOTAL
from ..core.tiles import IS_DOUBLE, NUM_ACTIONS, NUM_SLOTS, NUM_TILES, NUM_VALUES, OTHER_HALF, PIPS, TILES
from ..views.observation import HISTORY_WIDTH, MAX_SEATS, history_row

NUM_KEYS = 8**NUM_SLOTS

LOW = np.array([a for a, _ in TILES], dtype=np.int8)
HIGH = np.array([b for _, b in TILES], dtype=np.int8)
DOUBLE = np.array(IS_DOUBLE, dtype=np.int8)
TILE_PIPS = np.array(PIPS, dtype=np.int64)
#: POINTS[end total]: what a placement leaving that end total scores (the core's table).
POINTS = np.array(POINTS_FOR_TOTAL, dtype=np.int64)
#: OTHER[t, v]: the half of tile t left showing after matching v (-1 if t lacks v).
OTHER = np.array(OTHER_HALF, dtype=np.int8)


def _key_values() -> np.ndarray:
    keys = np.arange(NUM_KEYS)
    return np.stack([(keys >> 3 * (NUM_SLOTS - 1 - slot) & 7) - 1 for slot in range(NUM_SLOTS)], axis=1)


KEY_VALUES = _key_values()  # (4096, 4): the slot values of each key
_has = np.zeros((NUM_TILES, NUM_VALUES + 1), dtype=bool)  # [tile, value + 1]
_has[:, 1:] = OTHER >= 0
#: FIT[key, tile, slot]: 1 if the tile can be placed at that slot (a placement's action id is tile * 4 + slot).
FIT = np.ascontiguousarray(_has[:, KEY_VALUES + 1].transpose(1, 0, 2)).astype(np.int8)
#: LEAD_KEY: one row past the end keys in FIT_WORDS and PLAYABLE_BITS, for an empty layout, where
#: every tile fits and a lead is placed at slot W (the lead's layout has key 0, every end closed).
LEAD_KEY = NUM_KEYS
_LEAD_FIT = np.zeros((1, NUM_TILES, NUM_SLOTS), dtype=np.int8)
_LEAD_FIT[:, :, 0] = 1
#: FIT_WORDS[key, tile]: FIT's four slot bytes of one tile read as one uint32, so a whole
#: placement mask is one gather times the 0/1 candidate tiles.
FIT_WORDS = np.concatenate([FIT, _LEAD_FIT]).view(np.uint32).reshape(NUM_KEYS + 1, NUM_TILES)
SPREAD = np.uint32(0x01010101)  # times a word of four bytes: their sum in the top byte
#: PLAYABLE[key, tile]: 1 if the tile fits some open end; PLAYABLE_BITS[key]: the same as a 28-bit mask.
PLAYABLE = FIT.max(axis=2)
PLAYABLE_BITS = np.append((PLAYABLE.astype(np.int64) << np.arange(NUM_TILES)).sum(axis=1), (1 << NUM_TILES) - 1)
#: KEY_SHIFT[slot]: where a slot's value + 1 sits in the end key.
KEY_SHIFT = np.array([3 * (NUM_SLOTS - 1 - slot) for slot in range(NUM_SLOTS)], dtype=np.intp)
#: OPEN_BITS[key]: bit v set when some open end shows value v.
OPEN_BITS = np.array([sum(1 << v for v in set(row) if v >= 0) for row in KEY_VALUES.tolist()], dtype=np.int64)
#: OPEN_VALUES[key]: the observation's end_open (4) then end_value (4 x 7 one-hot) bytes.
OPEN_VALUES = np.zeros((NUM_KEYS, NUM_SLOTS + NUM_SLOTS * NUM_VALUES), dtype=np.int8)
for _slot in range(NUM_SLOTS):
    _v = KEY_VALUES[:, _slot]
    OPEN_VALUES[:, _slot] = _v >= 0
    _rows = np.flatnonzero(_v >= 0)
    OPEN_VALUES[_rows, NUM_SLOTS + NUM_VALUES * _slot + _v[_rows]] = 1

#: BITS7[mask]: a 7-bit value mask as 7 flags.
BITS7 = ((np.arange(128)[:, None] >> np.arange(NUM_VALUES)) & 1).astype(np.int8)
#: TILE_ONE_HOT[tile + 1]: one-hot of a tile, all zeros for -1.
TILE_ONE_HOT = np.eye(NUM_TILES + 1, NUM_TILES, -1, dtype=np.int8)
#: DRAWN[drawn + 1]: must_place_drawn, then the one-hot drawn_tile (all zeros for -1, no drawn tile).
DRAWN = np.concatenate([(np.arange(NUM_TILES + 1) > 0)[:, None].astype(np.int8), TILE_ONE_HOT], axis=1)
#: SPINNER[spinner + 1]: the spinner field (a flag, then one-hot of its value).
SPINNER = np.zeros((NUM_VALUES + 1, NUM_VALUES + 1), dtype=np.int8)
SPINNER[1:, 0] = 1
SPINNER[1:, 1:] = np.eye(NUM_VALUES, dtype=np.int8)
SEAT_ONE_HOT = np.eye(MAX_SEATS, dtype=np.int8)


def _history_rows() -> np.ndarray:
    """HISTORY_ROWS[rel * 114 + action]: one history row; the last row (all zeros) pads the unused moves."""
    rows = np.zeros((MAX_SEATS * NUM_ACTIONS + 1, HISTORY_WIDTH), dtype=np.int8)
    for rel in range(MAX_SEATS):
        for action in range(NUM_ACTIONS):
            rows[rel * NUM_ACTIONS + action] = np.frombuffer(history_row(rel, action), dtype=np.int8)
    return rows


HISTORY_ROWS = _history_rows()
HISTORY_PAD = MAX_SEATS * NUM_ACTIONS
