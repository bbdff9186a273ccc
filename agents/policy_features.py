"""What the trained policy sees: a state vector per decision and a feature row per legal action.

The trainer and :class:`agents.policy_agent.PolicyAgent` both encode a
:class:`~allfives_env.core.SeatView` through :func:`encode_decision`, so the
policy plays exactly as it was trained. Everything here is computed from the
view alone: nothing hidden.

The state vector is the environment's ego-centric observation, scaled to
about [0, 1], plus a few sums. Each legal action gets its own row of
features that a strong player weighs: the points the placement scores now,
the end total it leaves, whether it goes out or wins the match, how likely
the next seat is to score or be blocked on the resulting ends (from the tiles
it may hold, given what it is known to lack), and how well the rest of the
own hand fits them. The network scores every row with one shared head, so
what it learns about one action carries over to all others.
"""

from __future__ import annotations

from math import comb

import numpy as np

from allfives_env.core import DRAW, PASS, PIPS, SeatView
from allfives_env.core.layout import Layout
from allfives_env.core.scoring import POINTS_FOR_TOTAL, placement_points
from allfives_env.core.tiles import ALL_TILES_MASK, END_COUNT, IS_DOUBLE, OTHER_HALF, SUIT_MASK, TILES
from allfives_env.views.observation import FIELDS, OBSERVATION_SIZE, encode_observation

#: Bumped whenever a feature changes meaning; a checkpoint records the version it was trained on.
FEATURE_VERSION = 1

# Divisors that bring each observation field to about [0, 1].
_FIELD_SCALE = {
    "hand_counts": 10.0,
    "boneyard": 14.0,
    "end_count": 12.0,
    "end_total": 36.0,
    "to_target": 100.0,
    "target": 50.0,
    "round": 10.0,
}
_OBS_SCALE = np.concatenate(
    [np.full(size, 1.0 / _FIELD_SCALE.get(name, 1.0), dtype=np.float32) for name, size, _ in FIELDS]
)
_EXTRA_STATE = 30  # unseen tiles (28), own hand pips, unseen pips per unseen tile
STATE_SIZE = OBSERVATION_SIZE + _EXTRA_STATE

ACTION_FIELDS: tuple[tuple[str, int], ...] = (
    ("kind", 4),  # place, draw, pass, lead
    ("tile", 2),  # pips / 12, is double
    ("slot", 4),  # one-hot W, E, N, S
    ("halves", 7),  # multi-hot of the tile's values
    ("points", 2),  # points now / 35, scores at all
    ("end_total", 6),  # end total left / 36, one-hot of it mod 5
    ("open_after", 7),  # values open after the placement
    ("going_out", 2),  # empties the hand, and the award it may bring / 50
    ("wins_match", 1),  # the points reach the target
    # next seat: P(it can score), its best points / 35, P(it cannot place), its scoring tiles / 10,
    # E[its best points] / 35, P(it can reach its target)
    ("next_seat", 6),
    ("own_hand", 4),  # own tiles left that fit / 10, that would score / 5, their best points / 35, pips left / 60
)
ACTION_SIZE = sum(size for _, size in ACTION_FIELDS)

_TILE_BITS = tuple(1 << t for t in range(28))


def _bits(mask: int):
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _by_value() -> tuple[tuple[tuple[int, int, int], ...], ...]:
    """Per value v: (bit, tile, what the end counts once the tile is placed on v) for the 7 tiles showing v."""
    table = []
    for v in range(7):
        row = []
        for t in range(28):
            outer = OTHER_HALF[t][v]
            if outer >= 0:
                row.append((1 << t, t, END_COUNT[t][v]))
        table.append(tuple(row))
    return tuple(table)


_BY_VALUE = _by_value()


def replies(layout: Layout, tiles: int) -> tuple[int, dict[int, int]]:
    """Over the tiles in mask ``tiles``: the mask of those that fit some end, and each scoring tile's best points."""
    fit = 0
    best: dict[int, int] = {}
    for slot in range(4):
        v = layout.values[slot]
        if v < 0 or not tiles & SUIT_MASK[v]:
            continue
        base = layout.covered_total(slot)
        for bit, t, count in _BY_VALUE[v]:
            if tiles & bit:
                fit |= bit
                points = POINTS_FOR_TOTAL[base + count]
                if points > best.get(t, 0):
                    best[t] = points
    return fit, best


def expected_best(points: list[int], p: float) -> float:
    """E[max] of the points when each is available independently with chance p (none: 0)."""
    points = sorted(points, reverse=True)
    expected, miss = 0.0, 1.0
    for value in points:
        expected += value * p * miss
        miss *= 1.0 - p
    return expected


def _chance_none(pool: int, good: int, drawn: int) -> float:
    """The chance that ``drawn`` tiles taken from ``pool`` include none of ``good``."""
    if drawn <= 0 or good <= 0:
        return 1.0
    if drawn > pool - good:
        return 0.0
    return comb(pool - good, drawn) / comb(pool, drawn)


def mask_pips(mask: int) -> int:
    """The pips of the tiles in a mask, by byte-wise table look-up."""
    return (
        _PIPS_BYTE[0][mask & 255]
        + _PIPS_BYTE[1][mask >> 8 & 255]
        + _PIPS_BYTE[2][mask >> 16 & 255]
        + _PIPS_BYTE[3][mask >> 24]
    )


_PIPS_BYTE = tuple(
    tuple(sum(PIPS[8 * k + i] for i in range(8) if b >> i & 1 and 8 * k + i < 28) for b in range(256)) for k in range(4)
)


def encode_state(view: SeatView) -> np.ndarray:
    """The state vector (float32, :data:`STATE_SIZE`)."""
    obs = encode_observation(view).astype(np.float32) * _OBS_SCALE
    extra = np.zeros(_EXTRA_STATE, dtype=np.float32)
    unseen = ALL_TILES_MASK & ~view.hand & ~view.layout.played
    extra[list(_bits(unseen))] = 1.0
    extra[28] = mask_pips(view.hand) / 60.0
    count = unseen.bit_count()
    extra[29] = mask_pips(unseen) / count / 12.0 if count else 0.0
    return np.concatenate([obs, extra])


_ZERO_ROW = [0.0] * ACTION_SIZE


def encode_actions(view: SeatView) -> np.ndarray:
    """One feature row (float32, :data:`ACTION_SIZE`) per action of ``view.legal``, in that order."""
    rules = view.rules
    me = view.seat
    nxt = (me + 1) % rules.num_players
    layout = view.layout
    hand = view.hand
    unseen = ALL_TILES_MASK & ~hand & ~layout.played
    unseen_count = unseen.bit_count()
    unseen_pips = mask_pips(unseen)
    opponents_held = sum(c for s, c in enumerate(view.hand_counts) if rules.side_of[s] != rules.side_of[me])
    lacked = view.lacks[nxt]
    candidates = unseen
    for v in range(7):
        if lacked >> v & 1:
            candidates &= ~SUIT_MASK[v]
    pool = candidates.bit_count()
    next_held = min(view.hand_counts[nxt], pool)
    own_score = view.scores[rules.side_of[me]]
    next_score = view.scores[rules.side_of[nxt]]
    target = rules.target
    lead = 1.0 if layout.lead < 0 else 0.0
    rows = []
    for action in view.legal:
        row = _ZERO_ROW[:]
        rows.append(row)
        if action == DRAW:
            row[1] = 1.0
            continue
        if action == PASS:
            row[2] = 1.0
            continue
        tile, slot = action >> 2, action & 3
        after = layout.copy()
        after.place(tile, slot)
        total = after.end_total
        points = placement_points(total)
        left = hand & ~_TILE_BITS[tile]
        row[0] = 1.0
        row[3] = lead
        row[4] = PIPS[tile] / 12.0
        row[5] = 1.0 if IS_DOUBLE[tile] else 0.0
        row[6 + slot] = 1.0
        low, high = TILES[tile]
        row[10 + low] = 1.0
        row[10 + high] = 1.0
        row[17] = points / 35.0
        row[18] = 1.0 if points else 0.0
        row[19] = total / 36.0
        row[20 + total % 5] = 1.0
        for v in after.values:
            if v >= 0:
                row[25 + v] = 1.0
        wins = own_score + points >= target
        if not left:
            row[32] = 1.0
            if unseen_count:
                row[33] = opponents_held * unseen_pips / unseen_count / 50.0
        row[34] = 1.0 if wins else 0.0
        if left and not wins and next_held:
            fit, best = replies(after, candidates)
            scores = list(best.values())
            row[35] = 1.0 - _chance_none(pool, len(scores), next_held)
            row[36] = max(scores, default=0) / 35.0
            row[37] = _chance_none(pool, fit.bit_count(), next_held)
            row[38] = len(scores) / 10.0
            row[39] = expected_best(scores, next_held / pool) / 35.0
            winning = sum(1 for b in scores if next_score + b >= target)
            row[40] = 1.0 - _chance_none(pool, winning, next_held)
        if left:
            fit, best = replies(after, left)
            row[41] = fit.bit_count() / 10.0
            row[42] = len(best) / 5.0
            row[43] = max(best.values(), default=0) / 35.0
            row[44] = mask_pips(left) / 60.0
    return np.array(rows, dtype=np.float32)


def encode_decision(view: SeatView) -> tuple[np.ndarray, np.ndarray]:
    """The state vector and the action rows of one decision of the seat to act."""
    return encode_state(view), encode_actions(view)
