"""Per-action features: one row of small integers per action id, from one seat's own view.

A policy that scores every legal action with one shared head learns fastest
when each action comes with what a strong player weighs about it: the points
the placement scores, the end total it leaves, whether it goes out or reaches
the target, what the next seat could do on the ends it leaves (given the
values that seat is known to lack), and how the rest of the own hand fits
them. Every feature is an exact non-negative integer (int8): counts rather
than probabilities, so a network can form the ratios it needs and a batched
implementation can reproduce every value bit for bit.

:data:`ACTION_FEATURE_FIELDS` is the authoritative layout of a row; the
README's table is printed from it. Rows of illegal actions are all zeros, and
every legal row is not (its ``kind`` is set), so the rows' support is the
action mask.

Definitions, for the observer ``me`` and the next seat clockwise ``nxt``:

- *unseen*: tiles neither in the observer's hand nor in the layout;
- *pool*: the unseen tiles that show no value ``nxt`` is known to lack;
- the features after a placement are read on the layout as it would stand
  after it (the core's :meth:`~allfives_env.core.Layout.end_total_after` and
  :meth:`~allfives_env.core.Layout.covered_total` do the arithmetic); a tile
  *fits* if it matches some open end, and *scores* if some placement of it
  makes the end total a positive multiple of 5. Its *best* points are the
  most any one placement of it scores. The ``next_*`` and ``own_*`` fields
  are filled for every placement, also one that ends the round or the match;
- draw and pass rows hold only their ``kind``.

:func:`action_features` encodes a :class:`SeatView`; :func:`encode_seat_actions`
gives the same array straight from a state (for the environments' speed), and
the tests hold the two equal.
"""

from __future__ import annotations

import numpy as np

from ..core.layout import Layout
from ..core.rules import Rules
from ..core.scoring import SCORING_TILES, placement_points
from ..core.state import SeatView, State
from ..core.tiles import (
    ALL_TILES_MASK,
    DRAW,
    END_COUNT,
    IS_DOUBLE,
    NUM_ACTIONS,
    NUM_TILES,
    PIPS,
    SUIT_MASK,
    TILES,
    mask_to_tiles,
)

#: (name, width, description, high): one row's fields in order; every low is 0.
ACTION_FEATURE_FIELDS: list[tuple[str, int, str, int]] = [
    ("kind", 3, "one-hot: placement, draw, pass", 1),
    ("lead", 1, "1 if the placement is the round's lead", 1),
    ("slot", 4, "one-hot of the placement's slot W, E, N, S (a lead is W)", 1),
    ("tile_values", 7, "1 for each value the placed tile shows", 1),
    ("tile_pips", 1, "the placed tile's pips", 12),
    ("tile_double", 1, "1 if the placed tile is a double", 1),
    ("points", 1, "the points the placement scores", 35),
    ("scores", 1, "1 if it scores", 1),
    ("end_total", 1, "the end total it leaves", 36),
    ("end_total_mod5", 5, "one-hot of that end total mod 5", 1),
    ("open_after", 7, "1 for each value some open end shows after it", 1),
    ("goes_out", 1, "1 if it empties the observer's hand", 1),
    (
        "out_award",
        1,
        "if it goes out: opponents' tiles x unseen pips / unseen tiles / 5, rounded half up (the award "
        "expected, in units of 5); else 0",
        50,
    ),
    ("reaches_target", 1, "1 if its points bring the observer's side to the target", 1),
    ("next_held", 1, "tiles the next seat holds", 21),
    ("next_pool", 1, "pool: unseen tiles showing no value the next seat is known to lack", 27),
    ("next_fit", 1, "pool tiles that fit an end after it", 27),
    ("next_scoring", 1, "pool tiles that would score after it", 27),
    ("next_best", 1, "the most points one pool tile scores after it", 35),
    ("next_winning", 1, "pool tiles whose points after it bring the next seat's side to the target", 27),
    ("own_left", 1, "tiles the observer holds after it", 20),
    ("own_fit", 1, "of those, tiles that fit an end after it", 20),
    ("own_scoring", 1, "of those, tiles that would score after it", 20),
    ("own_best", 1, "the most points one of those scores after it", 35),
]

ACTION_FEATURE_OFFSETS: dict[str, int] = {}
_o = 0
for _name, _width, _, _ in ACTION_FEATURE_FIELDS:
    ACTION_FEATURE_OFFSETS[_name] = _o
    _o += _width
#: K, the width of one row.
ACTION_FEATURE_SIZE = _o
ACTION_FEATURES_SHAPE = (NUM_ACTIONS, ACTION_FEATURE_SIZE)


def action_features_high() -> np.ndarray:
    """The largest value of each feature, shape (114, K) int8, for the observation space (every low is 0)."""
    row = np.concatenate([np.full(width, high, dtype=np.int8) for _, width, _, high in ACTION_FEATURE_FIELDS])
    return np.tile(row, (NUM_ACTIONS, 1))


# -- tables ------------------------------------------------------------------------------------


def _static_row(action: int, lead: bool) -> bytes:
    """kind .. tile_double of a placement (16 bytes)."""
    tile, slot = action >> 2, action & 3
    low, high = TILES[tile]
    values = bytes(v in (low, high) for v in range(7))
    slots = bytes(s == slot for s in range(4))
    return bytes((1, 0, 0, lead)) + slots + values + bytes((PIPS[tile], IS_DOUBLE[tile]))


_STATIC = tuple(tuple(_static_row(a, lead) for a in range(DRAW)) for lead in (False, True))
_STATIC_SIZE = ACTION_FEATURE_OFFSETS["points"]
_DRAW_ROW = bytes((0, 1, 0)) + bytes(ACTION_FEATURE_SIZE - 3)
_PASS_ROW = bytes((0, 0, 1)) + bytes(ACTION_FEATURE_SIZE - 3)
#: _TOTAL[t]: points .. end_total_mod5 (8 bytes) of a placement that leaves the end total t.
_TOTAL = tuple(
    bytes((placement_points(t), placement_points(t) > 0, t)) + bytes(i == t % 5 for i in range(5)) for t in range(37)
)
_BITS7 = tuple(bytes((m >> i) & 1 for i in range(7)) for m in range(128))
_BIT = tuple(1 << t for t in range(NUM_TILES))


def _by_value() -> tuple:
    """Per value v: (bit, what the new end counts) for the 7 tiles showing v, the largest count first."""
    return tuple(
        tuple(
            sorted(((1 << t, END_COUNT[t][v]) for t in range(NUM_TILES) if END_COUNT[t][v] >= 0), key=lambda e: -e[1])
        )
        for v in range(7)
    )


_BY_VALUE = _by_value()


def _subsets() -> tuple:
    """Per value v: every subset of the tiles showing v (as a mask) -> its (count, bit) pairs, largest count first."""
    table = []
    for entries in _BY_VALUE:
        subsets = {}
        for pick in range(1 << len(entries)):
            chosen = tuple(e[::-1] for i, e in enumerate(entries) if pick >> i & 1)
            subsets[sum(bit for _, bit in chosen)] = chosen
        table.append(subsets)
    return tuple(table)


_SUBSETS = _subsets()


def _lacked(values: int) -> int:
    """The tiles showing any value of the 7-bit mask ``values``."""
    mask = 0
    for v in range(7):
        if values >> v & 1:
            mask |= SUIT_MASK[v]
    return mask


_LACKED = tuple(_lacked(m) for m in range(128))


def _replies(after: Layout, pool: int, next_need, own: int) -> tuple[int, ...]:
    """On layout ``after``: (fit, scoring, best, reaching ``next_need``) over the tiles of ``pool``, then
    (fit, scoring, best) over the tiles of ``own``; each end's covered total is asked once for both."""
    fit = scoring = reach = best = 0
    own_fit = own_scoring = own_best = 0
    values = after.values
    for slot in range(4):
        v = values[slot]
        if v < 0:
            continue
        suit_mask = SUIT_MASK[v]
        suit = pool & suit_mask
        mine = own & suit_mask
        if not suit and not mine:
            continue
        base = after.covered_total(slot)
        scores_here = SCORING_TILES[v][base]
        if suit:
            fit |= suit
            hits = suit & scores_here
            if hits:
                scoring |= hits
                ranked = _SUBSETS[v][hits]
                top = base + ranked[0][0]
                if top > best:
                    best = top
                if top >= next_need:
                    for count, bit in ranked:
                        if base + count < next_need:
                            break
                        reach |= bit
        if mine:
            own_fit |= mine
            hits = mine & scores_here
            if hits:
                own_scoring |= hits
                top = base + _SUBSETS[v][hits][0][0]
                if top > own_best:
                    own_best = top
    return (
        fit.bit_count(),
        scoring.bit_count(),
        best,
        reach.bit_count(),
        own.bit_count(),
        own_fit.bit_count(),
        own_scoring.bit_count(),
        own_best,
    )


# -- the encoder ---------------------------------------------------------------------------------


def _rows(
    rules: Rules,
    me: int,
    hand: int,
    counts,
    layout: Layout,
    lacks,
    scores,
    legal,
) -> bytearray:
    size = ACTION_FEATURE_SIZE
    out = bytearray(NUM_ACTIONS * size)
    if not legal:
        return out
    n = rules.num_players
    nxt = (me + 1) % n
    side_of = rules.side_of
    my_side = side_of[me]
    target = rules.target
    own_need = target - scores[my_side]
    next_need = target - scores[side_of[nxt]]
    unseen = ALL_TILES_MASK & ~hand & ~layout.played
    pool = unseen & ~_LACKED[lacks[nxt]]
    pool_count = pool.bit_count()
    next_held = counts[nxt]
    lead = layout.lead < 0
    static = _STATIC[lead]
    award = -1  # the going-out award, computed once if some placement goes out
    for action in legal:
        base = action * size
        if action >= DRAW:
            out[base : base + size] = _DRAW_ROW if action == DRAW else _PASS_ROW
            continue
        tile, slot = action >> 2, action & 3
        total = layout.end_total_after(tile, slot)
        points = placement_points(total)
        after = layout.copy()
        after.place(tile, slot)
        left = hand & ~_BIT[tile]
        opened = 0
        for v in after.values:
            if v >= 0:
                opened |= 1 << v
        out_award = 0
        if not left:
            if award < 0:
                award = _award(rules, me, counts, unseen)
            out_award = award
        out[base : base + size] = (
            static[action]
            + _TOTAL[total]
            + _BITS7[opened]
            + bytes((not left, out_award, points > 0 and points >= own_need, next_held, pool_count))
            + bytes(_replies(after, pool, next_need, left))
        )
    return out


def _award(rules: Rules, me: int, counts, unseen: int) -> int:
    """Opponents' tiles x mean unseen pips, in units of 5, rounded half up (0 with nothing unseen)."""
    my_side = rules.side_of[me]
    held = sum(c for s, c in enumerate(counts) if rules.side_of[s] != my_side)
    tiles = unseen.bit_count()
    if not tiles:
        return 0
    pips = sum(PIPS[t] for t in mask_to_tiles(unseen))
    return (2 * held * pips + 5 * tiles) // (10 * tiles)


_INT8 = np.dtype(np.int8)


def _as_array(rows: bytearray) -> np.ndarray:
    return np.ndarray(ACTION_FEATURES_SHAPE, _INT8, rows)  # over the bytes, no copy; writable


def action_features(view: SeatView) -> np.ndarray:
    """The (114, K) int8 feature rows of ``view``'s actions; zero rows for illegal actions; a fresh array."""
    return _as_array(
        _rows(view.rules, view.seat, view.hand, view.hand_counts, view.layout, view.lacks, view.scores, view.legal)
    )


def encode_seat_actions(state: State, seat: int) -> np.ndarray:
    """``action_features(state.view(seat))``, read straight from the state (the seat's own hand and public parts)."""
    acting = seat == state.to_act and not state.finished
    return _as_array(
        _rows(
            state.rules,
            seat,
            state.hands[seat],
            [h.bit_count() for h in state.hands],
            state.layout,
            state.lacks,
            state.scores,
            state.legal_actions() if acting else (),
        )
    )
