"""A table's legal-action mask, observation and global state vector, written into rows of the output arrays.

The layouts are the views' (:data:`allfives_env.views.observation.FIELDS`,
:data:`allfives_env.views.state_vector.STATE_FIELDS`), field for field, as
:mod:`allfives_env.vector.lookup` gives their offsets. The observation is
the seat to act's and holds only what that seat may know: its own hand, the
drawn tile it must place, and the table's public parts. An observation
starts as a copy of its observer's template (the bytes that depend on the
rules alone), the mask and the state vector as zeros, so that only the bytes
that are set are written.
"""

from __future__ import annotations

import numpy as np

from .jit import jit, lowest_bit, popcount
from .lookup import (
    BYTES_OF_BITS,
    DRAW,
    HISTORY,
    HISTORY_ROW,
    LAYOUT_BRANCH,
    LAYOUT_COUNT,
    LAYOUT_DOUBLE,
    LAYOUT_SPINNER,
    LAYOUT_TOTAL,
    LAYOUT_VALUE,
    NUM_ACTIONS,
    OBS_BONEYARD,
    OBS_DRAWN,
    OBS_HAND,
    OBS_HAND_COUNTS,
    OBS_LACKS,
    OBS_LAYOUT,
    OBS_LEADER,
    OBS_MUST_PLACE,
    OBS_ROUND,
    OBS_TO_TARGET,
    OBSERVATION_SIZE,
    PASS,
    STATE_BONEYARD,
    STATE_BONEYARD_TILES,
    STATE_DRAWN,
    STATE_FIVES,
    STATE_HAND_COUNTS,
    STATE_HANDS,
    STATE_LACKS,
    STATE_LAYOUT,
    STATE_LEADER,
    STATE_MUST_PLACE,
    STATE_PARTNERSHIPS,
    STATE_PLAYED,
    STATE_PRESENT,
    STATE_ROUND,
    STATE_TARGET,
    STATE_TO_ACT,
    STATE_TO_TARGET,
    SUIT,
)


@jit(inline=True)
def write_mask(t, c, row):
    """The seat to act's legal actions as 0/1 bytes into a zero ``row``; returns them as bits too.

    Returns (count, low, high): action ``a``'s bit is bit ``a`` of ``low``
    (a < 64) or bit ``a - 64`` of ``high``, which is how the next step checks
    its actions without reading the tables.
    """
    hand = t.hands[t.to_act]
    fits = (0, 0, 0, 0)  # per slot, the tiles that may be placed there
    if t.lead < 0:
        fits = (1 << t.required_lead if t.required_lead >= 0 else hand, 0, 0, 0)
    else:
        candidates = 1 << t.drawn if t.drawn >= 0 else hand
        v = t.values
        fits = (
            candidates & SUIT[v[0] + 1],
            candidates & SUIT[v[1] + 1],
            candidates & SUIT[v[2] + 1],
            candidates & SUIT[v[3] + 1],
        )
    tiles = fits[0] | fits[1] | fits[2] | fits[3]
    if not tiles:
        action = DRAW if t.bone_pos < c.bone_size else PASS
        row[action] = 1
        return 1, np.uint64(0), np.uint64(1) << np.uint64(action - 64)
    low, high = np.uint64(0), np.uint64(0)
    count = 0
    while tiles:
        tile = lowest_bit(tiles)
        tiles &= tiles - 1
        nibble = 0
        for slot in range(4):
            bit = fits[slot] >> tile & 1
            row[4 * tile + slot] = bit
            nibble |= bit << slot
        count += popcount(nibble)
        if tile < 16:
            low |= np.uint64(nibble) << np.uint64(4 * tile)
        else:
            high |= np.uint64(nibble) << np.uint64(4 * tile - 64)
    return count, low, high


@jit(inline=True)
def _bits(row, at, mask):
    while mask:
        row[at + lowest_bit(mask)] = 1
        mask &= mask - 1


@jit(inline=True)
def _seven_bits(row, at, mask):
    """A 7-bit value mask as 7 bytes: stores without branches, as these masks have a bit or two."""
    for v in range(7):
        row[at + v] = mask >> v & 1


@jit(inline=True)
def _two_masks(words, at, first, second):
    """Two 28-tile masks as 56 bytes of 0/1 into ``words`` (a row seen as 8-byte words) from word ``at`` on: a
    table lookup per 8 bits, so no loop stops at each set bit."""
    both = np.int64(first) | np.int64(second) << 28
    for j in range(7):
        words[at + j] = BYTES_OF_BITS[both >> 8 * j & 255]


@jit(inline=True)
def write_layout(t, row, at):
    """The layout block, end_open .. end_total (51 bytes), at ``row[at:]`` (already zero)."""
    total = 0
    for slot in range(4):
        v = t.values[slot]
        if v >= 0:
            row[at + slot] = 1
            row[at + LAYOUT_VALUE + 7 * slot + v] = 1
        row[at + LAYOUT_COUNT + slot] = t.counts[slot]
        row[at + LAYOUT_DOUBLE + slot] = t.end_double[slot]
        total += t.counts[slot]
    row[at + LAYOUT_BRANCH] = t.arm_started[2]
    row[at + LAYOUT_BRANCH + 1] = t.arm_started[3]
    if t.spinner >= 0:
        row[at + LAYOUT_SPINNER] = 1
        row[at + LAYOUT_SPINNER + 1 + t.spinner] = 1
    row[at + LAYOUT_TOTAL] = total


@jit(inline=True)
def write_observation(t, c, row):
    """The seat to act's observation (with its history rows where ``c.history``) into ``row``, which is zero past
    the observation (the history rows), and anything before it: it starts as a copy of the observer's template."""
    n = c.num_players
    me = t.to_act
    template = c.template[me]
    for i in range(OBSERVATION_SIZE):
        row[i] = template[i]
    _two_masks(row.view(np.uint64), OBS_HAND // 8, t.hands[me], t.played)  # hand, then played
    for rel in range(n):
        seat = c.seat_from[me, rel]
        row[OBS_HAND_COUNTS + rel] = popcount(t.hands[seat])
        _seven_bits(row, OBS_LACKS + 7 * rel, t.lacks[seat])
    row[OBS_BONEYARD] = c.bone_size - t.bone_pos
    write_layout(t, row, OBS_LAYOUT)
    for rel in range(c.num_sides):
        row[OBS_TO_TARGET + rel] = t.need[c.side_from[me, rel]]
    row[OBS_ROUND] = min(127, t.round_index)
    if t.drawn >= 0:
        row[OBS_MUST_PLACE] = 1
        row[OBS_DRAWN + t.drawn] = 1
    row[OBS_LEADER + c.rel_from[me, t.leader]] = 1
    if c.history:
        for k in range(t.move_count):
            code = t.moves[k]
            first = c.rel_from[me, code >> 7] * NUM_ACTIONS + (code & 127)
            at = OBSERVATION_SIZE + HISTORY_ROW * k
            for i in range(HISTORY_ROW):
                row[at + i] = HISTORY[first, i]


@jit
def write_state(t, c, row):
    """The global state vector (every hand, the boneyard's tiles; absolute seats and sides) into a zero ``row``."""
    n = c.num_players
    for seat in range(n):
        _bits(row, STATE_HANDS + 28 * seat, t.hands[seat])
    for seat in range(n):
        row[STATE_HAND_COUNTS + seat] = popcount(t.hands[seat])
        _seven_bits(row, STATE_LACKS + 7 * seat, t.lacks[seat])
        row[STATE_PRESENT + seat] = 1
    base = n * c.hand_size
    boneyard = 0
    for k in range(t.bone_pos, c.bone_size):
        boneyard |= 1 << t.deal[base + k]
    _bits(row, STATE_BONEYARD_TILES, boneyard)
    _bits(row, STATE_PLAYED, t.played)
    row[STATE_BONEYARD] = c.bone_size - t.bone_pos
    write_layout(t, row, STATE_LAYOUT)
    for side in range(c.num_sides):
        row[STATE_TO_TARGET + side] = t.need[side]
    row[STATE_TARGET] = c.target_byte
    row[STATE_ROUND] = min(127, t.round_index)
    if t.drawn >= 0:
        row[STATE_MUST_PLACE] = 1
        row[STATE_DRAWN + t.drawn] = 1
    row[STATE_TO_ACT + t.to_act] = 1
    row[STATE_LEADER + t.leader] = 1
    row[STATE_PARTNERSHIPS] = c.partnerships
    row[STATE_FIVES] = c.fives
