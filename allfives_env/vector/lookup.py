"""The numbers the kernels read: the core's tile tables and the views' field offsets, as arrays and constants.

Nothing here is decided anew: every table is copied from
:mod:`allfives_env.core.tiles`, :mod:`allfives_env.core.scoring` and the
views' field layouts, so the compiled engine reads the same numbers as the
core. numba freezes these module globals into the compiled code (and the
cache is keyed by their values, see :mod:`allfives_env.vector.jit`).
"""

from __future__ import annotations

from functools import reduce
from operator import or_

import numpy as np

from ..core.scoring import END_TOTAL_LIMIT, POINTS_FOR_TOTAL
from ..core.stream import DEAL_TAG as _DEAL_TAG
from ..core.stream import GOLDEN as _GOLDEN
from ..core.stream import MATCH_TAG as _MATCH_TAG
from ..core.stream import MIX1 as _MIX1
from ..core.stream import MIX2 as _MIX2
from ..core.tiles import (
    DOUBLE_ID,
    DRAW,
    END_COUNT,
    IS_DOUBLE,
    NUM_ACTIONS,
    NUM_TILES,
    OTHER_HALF,
    PASS,
    PIPS,
    SUIT_MASK,
)
from ..core.tiles import TILES as _TILES
from ..views.action_features import ACTION_FEATURE_OFFSETS as _AO
from ..views.action_features import ACTION_FEATURE_SIZE
from ..views.observation import HISTORY_LENGTH, HISTORY_WIDTH, MAX_SEATS, OBSERVATION_SIZE, history_row
from ..views.observation import OFFSETS as _OO
from ..views.state_vector import STATE_OFFSETS as _SO
from ..views.state_vector import STATE_SIZE

__all__ = ["DRAW", "PASS", "NUM_ACTIONS", "NUM_TILES", "MAX_SEATS", "OBSERVATION_SIZE", "STATE_SIZE"]

ALL_TILES = (1 << NUM_TILES) - 1

# -- tiles ---------------------------------------------------------------------------------------------------
LOW = np.array([a for a, _ in _TILES], dtype=np.int64)
HIGH = np.array([b for _, b in _TILES], dtype=np.int64)
TILE_PIPS = np.array(PIPS, dtype=np.int64)
TILE_DOUBLE = np.array(IS_DOUBLE, dtype=np.int64)
#: DOUBLE_OF[v]: the tile id of v-v.
DOUBLE_OF = np.array(DOUBLE_ID, dtype=np.int64)
#: SUIT[v + 1]: the tiles showing value v (a mask); SUIT[0], for a closed end (-1), holds none.
SUIT = np.array([0, *SUIT_MASK], dtype=np.int64)
#: OTHER[t, v]: the half of tile t left showing after matching v (-1 if t lacks v).
OTHER = np.array(OTHER_HALF, dtype=np.int64)
#: COUNT_ON[t, v]: what the new end counts once t is placed on an end showing v (both halves of a double).
COUNT_ON = np.array(END_COUNT, dtype=np.int64)
#: POINTS[end total]: what a placement leaving that end total scores.
POINTS = np.array(POINTS_FOR_TOTAL, dtype=np.int64)
TOTAL_LIMIT = END_TOTAL_LIMIT
#: LACKED[m]: the tiles showing any value of the 7-bit mask m.
LACKED = np.array([reduce(or_, (SUIT_MASK[v] for v in range(7) if m >> v & 1), 0) for m in range(128)], dtype=np.int64)
#: SUIT_TILES[v, k]: the 7 tiles showing v, in id order.
SUIT_TILES = np.array([[t for t in range(NUM_TILES) if SUIT_MASK[v] >> t & 1] for v in range(7)], dtype=np.int64)

#: BYTES_OF_BITS[m]: an 8-bit mask as 8 bytes of 0/1 (the lowest bit first), in one 8-byte word.
BYTES_OF_BITS = np.array([sum((m >> i & 1) << 8 * i for i in range(8)) for m in range(256)], dtype=np.uint64)

# -- the counter-based stream (allfives_env.core.stream) -------------------------------------------------------
GOLDEN = np.uint64(_GOLDEN)
MIX1 = np.uint64(_MIX1)
MIX2 = np.uint64(_MIX2)
DEAL_TAG = np.uint64(_DEAL_TAG)
MATCH_TAG = np.uint64(_MATCH_TAG)

# -- observation offsets (allfives_env.views.observation.FIELDS) ----------------------------------------------
OBS_HAND, OBS_PLAYED, OBS_HAND_COUNTS, OBS_BONEYARD = _OO["hand"], _OO["played"], _OO["hand_counts"], _OO["boneyard"]
OBS_LAYOUT = _OO["end_open"]
OBS_LACKS, OBS_TO_TARGET, OBS_TARGET, OBS_ROUND = _OO["lacks"], _OO["to_target"], _OO["target"], _OO["round"]
OBS_MUST_PLACE, OBS_DRAWN, OBS_TO_ACT, OBS_LEADER = (
    _OO["must_place_drawn"],
    _OO["drawn_tile"],
    _OO["to_act"],
    _OO["leader"],
)
OBS_PARTNER, OBS_PRESENT, OBS_FIVES = _OO["partner"], _OO["seat_present"], _OO["rules_fives"]
# The hand and the played tiles make 56 bytes from an 8-byte boundary, in rows of a multiple of 8 bytes:
# the observation's encoder writes them as seven 8-byte words.
assert (
    OBS_HAND % 8 == 0
    and OBS_PLAYED == OBS_HAND + 28
    and OBSERVATION_SIZE % 8 == 0
    and HISTORY_WIDTH * HISTORY_LENGTH % 8 == 0
)
HISTORY_ROWS_KEPT = HISTORY_LENGTH
HISTORY_ROW = HISTORY_WIDTH
#: HISTORY[rel * 114 + action]: the history row of a move by relative seat ``rel``.
HISTORY = np.array(
    [list(history_row(rel, action)) for rel in range(MAX_SEATS) for action in range(NUM_ACTIONS)], dtype=np.int8
)

# -- the layout block, shared by the observation and the state vector (offsets from its start) ------------------
LAYOUT_OPEN = 0
LAYOUT_VALUE = _OO["end_value"] - OBS_LAYOUT
LAYOUT_COUNT = _OO["end_count"] - OBS_LAYOUT
LAYOUT_DOUBLE = _OO["end_double"] - OBS_LAYOUT
LAYOUT_BRANCH = _OO["branch_started"] - OBS_LAYOUT
LAYOUT_SPINNER = _OO["spinner"] - OBS_LAYOUT
LAYOUT_TOTAL = _OO["end_total"] - OBS_LAYOUT
assert _SO["end_total"] - _SO["end_open"] == LAYOUT_TOTAL  # one block, byte for byte, in both vectors

# -- state vector offsets (allfives_env.views.state_vector.STATE_FIELDS) --------------------------------------
STATE_HANDS, STATE_BONEYARD_TILES, STATE_PLAYED = _SO["hands"], _SO["boneyard_tiles"], _SO["played"]
STATE_HAND_COUNTS, STATE_BONEYARD, STATE_LAYOUT = _SO["hand_counts"], _SO["boneyard"], _SO["end_open"]
STATE_LACKS, STATE_TO_TARGET, STATE_TARGET, STATE_ROUND = _SO["lacks"], _SO["to_target"], _SO["target"], _SO["round"]
STATE_MUST_PLACE, STATE_DRAWN, STATE_TO_ACT, STATE_LEADER = (
    _SO["must_place_drawn"],
    _SO["drawn_tile"],
    _SO["to_act"],
    _SO["leader"],
)
STATE_PARTNERSHIPS, STATE_PRESENT, STATE_FIVES = _SO["partnerships"], _SO["seat_present"], _SO["rules_fives"]

# -- action feature offsets (allfives_env.views.action_features.ACTION_FEATURE_FIELDS) -------------------------
FEATURE_SIZE = ACTION_FEATURE_SIZE
AF_KIND, AF_LEAD, AF_SLOT, AF_VALUES, AF_PIPS, AF_DOUBLE = (
    _AO["kind"],
    _AO["lead"],
    _AO["slot"],
    _AO["tile_values"],
    _AO["tile_pips"],
    _AO["tile_double"],
)
AF_POINTS, AF_SCORES, AF_TOTAL, AF_MOD5, AF_OPEN = (
    _AO["points"],
    _AO["scores"],
    _AO["end_total"],
    _AO["end_total_mod5"],
    _AO["open_after"],
)
AF_OUT, AF_AWARD, AF_REACHES = _AO["goes_out"], _AO["out_award"], _AO["reaches_target"]
AF_NEXT_HELD, AF_NEXT_POOL, AF_NEXT_FIT, AF_NEXT_SCORING, AF_NEXT_BEST, AF_NEXT_WINNING = (
    _AO["next_held"],
    _AO["next_pool"],
    _AO["next_fit"],
    _AO["next_scoring"],
    _AO["next_best"],
    _AO["next_winning"],
)
AF_OWN_LEFT, AF_OWN_FIT, AF_OWN_SCORING, AF_OWN_BEST = (
    _AO["own_left"],
    _AO["own_fit"],
    _AO["own_scoring"],
    _AO["own_best"],
)
