"""The seat to act's action feature rows, compiled: :mod:`allfives_env.views.action_features`, field for field.

For each legal placement the ends it would leave are one
:class:`~allfives_env.vector.layout.Ends` value, and the next seat's and the
observer's replies on them are counted over tile masks: the *pool* (unseen
tiles showing no value the next seat is known to lack) and the observer's
tiles left. Every value is an exact integer, so these rows equal the view's
byte for byte (``tests/test_vector.py`` compares them at every step).
"""

from __future__ import annotations

from .jit import jit, lowest_bit, popcount
from .layout import covered_total, end_total, open_values, placed
from .lookup import (
    AF_AWARD,
    AF_DOUBLE,
    AF_KIND,
    AF_LEAD,
    AF_MOD5,
    AF_NEXT_BEST,
    AF_NEXT_FIT,
    AF_NEXT_HELD,
    AF_NEXT_POOL,
    AF_NEXT_SCORING,
    AF_NEXT_WINNING,
    AF_OPEN,
    AF_OUT,
    AF_OWN_BEST,
    AF_OWN_FIT,
    AF_OWN_LEFT,
    AF_OWN_SCORING,
    AF_PIPS,
    AF_POINTS,
    AF_REACHES,
    AF_SCORES,
    AF_SLOT,
    AF_TOTAL,
    AF_VALUES,
    ALL_TILES,
    COUNT_ON,
    DRAW,
    HIGH,
    LACKED,
    LOW,
    PASS,
    POINTS,
    SUIT,
    TILE_DOUBLE,
    TILE_PIPS,
)
from .rules import ends_of


@jit
def write_features(t, c, mask, rows):
    """``rows`` (114, K), zero: the feature row of every legal action in ``mask``."""
    rows[DRAW, AF_KIND + 1] = mask[DRAW]
    rows[PASS, AF_KIND + 2] = mask[PASS]
    me = t.to_act
    nxt = c.seat_from[me, 1]
    hand = t.hands[me]
    own_need = c.target - t.scores[c.side_of[me]]
    next_need = c.target - t.scores[c.side_of[nxt]]
    unseen = ALL_TILES & ~hand & ~t.played
    pool = unseen & ~LACKED[t.lacks[nxt]]
    next_held = popcount(t.hands[nxt])
    leading = t.lead < 0
    ends = ends_of(t)
    award = -1  # the going-out award, worked out once if some placement goes out
    for action in range(DRAW):
        if not mask[action]:
            continue
        tile, slot = action >> 2, action & 3
        row = rows[action]
        row[AF_KIND] = 1
        row[AF_LEAD] = leading
        row[AF_SLOT + slot] = 1
        row[AF_VALUES + LOW[tile]] = 1
        row[AF_VALUES + HIGH[tile]] = 1
        row[AF_PIPS] = TILE_PIPS[tile]
        row[AF_DOUBLE] = TILE_DOUBLE[tile]
        after = placed(ends, tile, slot)
        total = end_total(after)
        points = POINTS[total]
        row[AF_POINTS] = points
        row[AF_SCORES] = points > 0
        row[AF_TOTAL] = total
        row[AF_MOD5 + total % 5] = 1
        opened = open_values(after)
        for v in range(7):
            row[AF_OPEN + v] = opened >> v & 1
        left = hand & ~(1 << tile)
        row[AF_OUT] = left == 0
        if left == 0:
            if award < 0:
                award = _going_out_award(t, c, me, unseen)
            row[AF_AWARD] = award
        row[AF_REACHES] = points > 0 and points >= own_need
        row[AF_NEXT_HELD] = next_held
        row[AF_NEXT_POOL] = popcount(pool)
        _write_replies(row, after, pool, next_need, left)


@jit
def _write_replies(row, after, pool, next_need, own):
    """On the ends ``after``: the next seat's replies from ``pool``, then the observer's from ``own``."""
    fit = scoring = reach = 0
    best = 0
    own_fit = own_scoring = 0
    own_best = 0
    for slot in range(4):
        v = after.values[slot]
        if v < 0:
            continue
        suit = SUIT[v + 1]
        theirs, mine = pool & suit, own & suit
        if not theirs and not mine:
            continue
        base = covered_total(after, slot)
        fit |= theirs
        own_fit |= mine
        tiles = (theirs | mine) & suit
        while tiles:
            tile = lowest_bit(tiles)
            tiles &= tiles - 1
            total = base + COUNT_ON[tile, v]
            if not POINTS[total]:
                continue
            if theirs >> tile & 1:
                scoring |= 1 << tile
                best = max(best, total)
                if total >= next_need:
                    reach |= 1 << tile
            if mine >> tile & 1:
                own_scoring |= 1 << tile
                own_best = max(own_best, total)
    row[AF_NEXT_FIT] = popcount(fit)
    row[AF_NEXT_SCORING] = popcount(scoring)
    row[AF_NEXT_BEST] = best
    row[AF_NEXT_WINNING] = popcount(reach)
    row[AF_OWN_LEFT] = popcount(own)
    row[AF_OWN_FIT] = popcount(own_fit)
    row[AF_OWN_SCORING] = popcount(own_scoring)
    row[AF_OWN_BEST] = own_best


@jit
def _going_out_award(t, c, me, unseen):
    """Opponents' tiles x mean unseen pips, in units of 5, rounded half up (0 with nothing unseen)."""
    held = 0
    for seat in range(c.num_players):
        if c.side_of[seat] != c.side_of[me]:
            held += popcount(t.hands[seat])
    tiles = popcount(unseen)
    if tiles == 0:
        return 0
    pips = 0
    while unseen:
        pips += TILE_PIPS[lowest_bit(unseen)]
        unseen &= unseen - 1
    return (2 * held * pips + 5 * tiles) // (10 * tiles)
