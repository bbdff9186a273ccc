"""Per-action features of every table's seat to act, computed over all legal placements at once.

The rows are those of :mod:`allfives_env.views.action_features`, field for
field (its :data:`ACTION_FEATURE_OFFSETS` place them, and the tests hold the
two equal on long random runs): for each legal placement the layout it would
leave is built as arrays, and the next seat's and the observer's replies on
it are counted with tile masks. Every legal (table, placement) pair is one
row of the arrays below, so the cost follows the number of legal placements,
not 114 actions per table.
"""

from __future__ import annotations

import numpy as np

from ..core.scoring import placement_points
from ..core.tiles import (
    ALL_TILES_MASK,
    DRAW,
    END_COUNT,
    IS_DOUBLE,
    NUM_ACTIONS,
    NUM_TILES,
    NUM_VALUES,
    PASS,
    PIPS,
    SUIT_MASK,
    TILES,
)
from ..views.action_features import ACTION_FEATURE_OFFSETS, ACTION_FEATURE_SIZE
from .arrays import Tables
from .tables import BITS7, DOUBLE, HIGH, LOW, OTHER

AO = ACTION_FEATURE_OFFSETS
_STATIC_SIZE = AO["points"]


def _static() -> np.ndarray:
    """[lead * 112 + action]: kind .. tile_double of a placement."""
    rows = np.zeros((2, DRAW, _STATIC_SIZE), dtype=np.int8)
    for lead in (0, 1):
        for action in range(DRAW):
            tile, slot = action >> 2, action & 3
            row = rows[lead, action]
            row[AO["kind"]] = 1
            row[AO["lead"]] = lead
            row[AO["slot"] + slot] = 1
            for v in set(TILES[tile]):
                row[AO["tile_values"] + v] = 1
            row[AO["tile_pips"]] = PIPS[tile]
            row[AO["tile_double"]] = IS_DOUBLE[tile]
    return rows.reshape(2 * DRAW, _STATIC_SIZE)


STATIC = _static()
#: TOTAL[t]: points, scores, end_total, end_total_mod5 of a placement that leaves the end total t.
TOTAL = np.array(
    [[placement_points(t), placement_points(t) > 0, t] + [int(i == t % 5) for i in range(5)] for t in range(37)],
    dtype=np.int8,
)

# Per end value, indexed by value + 1 so that row 0 (a closed end) holds nothing.
SUIT = np.array([0, *SUIT_MASK], dtype=np.int64)
#: RESIDUE[v + 1, r]: the tiles showing v whose new end counts r mod 5 when placed on v.
RESIDUE = np.zeros((NUM_VALUES + 1, 5), dtype=np.int64)
#: ZERO[v + 1]: the tiles showing v whose new end counts 0.
ZERO = np.zeros(NUM_VALUES + 1, dtype=np.int64)
#: SUIT_TILES[v + 1, k], SUIT_COUNTS[v + 1, k]: the 7 tiles showing v and what each counts placed on v.
SUIT_TILES = np.zeros((NUM_VALUES + 1, NUM_VALUES), dtype=np.int64)
SUIT_COUNTS = np.zeros((NUM_VALUES + 1, NUM_VALUES), dtype=np.int64)
for _v in range(NUM_VALUES):
    _tiles = [t for t in range(NUM_TILES) if END_COUNT[t][_v] >= 0]
    for _k, _t in enumerate(_tiles):
        _c = END_COUNT[_t][_v]
        RESIDUE[_v + 1, _c % 5] |= 1 << _t
        ZERO[_v + 1] |= (1 << _t) if _c == 0 else 0
        SUIT_TILES[_v + 1, _k] = _t
        SUIT_COUNTS[_v + 1, _k] = _c
#: LACKED[m]: the tiles showing any value of the 7-bit mask m.
LACKED = np.zeros(128, dtype=np.int64)
for _m in range(128):
    for _v in range(NUM_VALUES):
        if _m >> _v & 1:
            LACKED[_m] |= SUIT_MASK[_v]
_PIPS14 = np.array([sum(PIPS[t] for t in range(14) if m >> t & 1) for m in range(1 << 14)], dtype=np.int64)
_PIPS14_HIGH = np.array([sum(PIPS[t + 14] for t in range(14) if m >> t & 1) for m in range(1 << 14)], dtype=np.int64)
_COUNT14 = np.array([m.bit_count() for m in range(1 << 14)], dtype=np.int64)


def popcount(masks: np.ndarray) -> np.ndarray:
    """Set bits of each 28-bit mask (numpy's bitwise_count where it exists, else two table lookups)."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(masks)
    return _COUNT14.take(masks & 16383) + _COUNT14.take(masks >> 14 & 16383)


def tile_pips(masks: np.ndarray) -> np.ndarray:
    """The pips of the tiles of each 28-bit mask."""
    return _PIPS14.take(masks & 16383) + _PIPS14_HIGH.take(masks >> 14 & 16383)


def _or(masks: np.ndarray) -> np.ndarray:
    return np.bitwise_or.reduce(masks, axis=1)


def action_features(t: Tables, mask: np.ndarray) -> np.ndarray:
    """(num_envs, 114, K) int8: each table's action features for its seat to act (``mask`` is its legal mask)."""
    b, n = t.num_envs, t.num_players
    out = np.zeros((b, NUM_ACTIONS, ACTION_FEATURE_SIZE), dtype=np.int8)
    out[:, DRAW, AO["kind"] + 1] = mask[:, DRAW]
    out[:, PASS, AO["kind"] + 2] = mask[:, PASS]
    legal = np.flatnonzero(np.ascontiguousarray(mask[:, :DRAW]).view(bool))
    if not legal.size:
        return out
    r, action = np.divmod(legal, DRAW)
    tiles, slots = action >> 2, action & 3
    me = t.to_act.take(r)
    nxt = t.next_seat.take(me)
    hand = t.hand_bits_f.take(r * n + me)
    lead = t.lead.take(r) < 0
    values, counts, ends, spinner = _after(t, r, tiles, slots, lead)
    total = counts.sum(axis=1)
    open_bits = _or(np.where(values >= 0, 1 << np.maximum(values, 0), 0))

    left = hand & ~(np.int64(1) << tiles)
    unseen = ALL_TILES_MASK & ~hand & ~t.played_bits.take(r)
    pool = unseen & ~LACKED.take(t.lacks_f.take(r * n + nxt))
    points = TOTAL[total, 0]
    scores = t.scores_f
    sides = t.num_sides
    own_need = t.rules.target - scores.take(r * sides + t.side_of.take(me))
    next_need = t.rules.target - scores.take(r * sides + t.side_of.take(nxt))

    # The replies on the layout left behind: per open end, its covered total (what the other ends add up to).
    base = total[:, None] - counts
    spinner_both = np.flatnonzero(ends == 3)  # a led spinner still open on both line sides
    if spinner_both.size:
        sp = 2 * spinner[spinner_both]
        c = counts[spinner_both]
        base[spinner_both, 0] += sp - c[:, 1]
        base[spinner_both, 1] += sp - c[:, 0]
    v1 = values + 1
    suits = SUIT.take(v1)
    residue = RESIDUE.take(v1 * 5 + (-base) % 5)
    residue = np.where(base == 0, residue & ~ZERO.take(v1), residue)
    pool_suit = pool[:, None] & suits
    own_suit = left[:, None] & suits
    hits = pool_suit & residue
    own_hits = own_suit & residue
    suit_tiles = SUIT_TILES[v1]
    reach_score = base[:, :, None] + SUIT_COUNTS[v1]  # what each tile of the end's suit would score there
    hit = (hits[:, :, None] >> suit_tiles) & 1
    own_hit = (own_hits[:, :, None] >> suit_tiles) & 1
    best = (hit * reach_score).max(axis=(1, 2))
    own_best = (own_hit * reach_score).max(axis=(1, 2))
    winning = hit & (reach_score >= next_need[:, None, None])
    reach = _or((winning << suit_tiles).sum(axis=2))

    rows = np.empty((len(r), ACTION_FEATURE_SIZE), dtype=np.int8)
    rows[:, :_STATIC_SIZE] = STATIC.take(lead * DRAW + action, axis=0)
    rows[:, AO["points"] : AO["open_after"]] = TOTAL.take(total, axis=0)
    rows[:, AO["open_after"] : AO["goes_out"]] = BITS7.take(open_bits, axis=0)
    out_of_tiles = left == 0
    rows[:, AO["goes_out"]] = out_of_tiles
    rows[:, AO["out_award"]] = _award(t, r, me, unseen, out_of_tiles)
    rows[:, AO["reaches_target"]] = (points > 0) & (points >= own_need)
    rows[:, AO["next_held"]] = t.hand_count_f.take(r * n + nxt)
    rows[:, AO["next_pool"]] = popcount(pool)
    rows[:, AO["next_fit"]] = popcount(_or(pool_suit))
    rows[:, AO["next_scoring"]] = popcount(_or(hits))
    rows[:, AO["next_best"]] = best
    rows[:, AO["next_winning"]] = popcount(reach)
    rows[:, AO["own_left"]] = popcount(left)
    rows[:, AO["own_fit"]] = popcount(_or(own_suit))
    rows[:, AO["own_scoring"]] = popcount(_or(own_hits))
    rows[:, AO["own_best"]] = own_best
    out.reshape(b * NUM_ACTIONS, ACTION_FEATURE_SIZE)[r * NUM_ACTIONS + action] = rows
    return out


def _after(t: Tables, r: np.ndarray, tiles: np.ndarray, slots: np.ndarray, lead: np.ndarray) -> tuple:
    """The ends (values, counts, spinner_ends, spinner) each placement would leave, as the core's Layout.place."""
    values = t.values.take(r, axis=0).astype(np.int64)
    counts = t.counts.take(r, axis=0).astype(np.int64)
    ends = t.spinner_ends.take(r)
    spinner = t.spinner.take(r)
    pairs = np.arange(len(r))
    v = np.where(lead, 0, values[pairs, slots])
    outer = OTHER[tiles, v].astype(np.int64)
    bit = 1 << slots
    hit = ((ends & bit) != 0) & ~lead
    ends = ends ^ (bit * hit)
    half = np.flatnonzero(hit & (ends != 0))  # a led spinner keeps one line side: it counts both halves
    counts[half, ends[half] >> 1] = 2 * spinner[half]
    both = np.flatnonzero(hit & (ends == 0))  # both line sides covered: the branches open
    values[both, 2] = spinner[both]
    values[both, 3] = spinner[both]
    double = DOUBLE.take(tiles).astype(np.int64)
    first = np.flatnonzero((double == 1) & (spinner < 0) & ~lead)
    spinner = spinner.copy()
    spinner[first] = outer[first]
    ends[first] = bit[first]
    counts[pairs, slots] = outer * (1 + double)
    values[pairs, slots] = outer
    leads = np.flatnonzero(lead)
    if leads.size:
        low, high = LOW.take(tiles[leads]), HIGH.take(tiles[leads])
        values[leads] = -1
        counts[leads] = 0
        values[leads, 0] = counts[leads, 0] = low
        values[leads, 1] = counts[leads, 1] = high
        is_double = double[leads] == 1
        spinner[leads] = np.where(is_double, low, -1)
        ends[leads] = np.where(is_double, 3, 0)
    return values, counts, ends, spinner


def _award(t: Tables, r: np.ndarray, me: np.ndarray, unseen: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Going out: opponents' tiles x unseen pips / unseen tiles / 5, rounded half up (0 with nothing unseen)."""
    award = np.zeros(len(r), dtype=np.int64)
    going = np.flatnonzero(out)
    if not going.size:
        return award
    n = t.num_players
    rules = t.rules
    opponents = np.array([[rules.side_of[s] != rules.side_of[m] for s in range(n)] for m in range(n)], dtype=np.int64)
    held = (t.hand_count.take(r[going], axis=0) * opponents.take(me[going], axis=0)).sum(axis=1)
    hidden = unseen[going]
    tiles = popcount(hidden).astype(np.int64)
    pips = tile_pips(hidden)
    some = tiles > 0
    award[going[some]] = (2 * held[some] * pips[some] + 5 * tiles[some]) // (10 * tiles[some])
    return award
