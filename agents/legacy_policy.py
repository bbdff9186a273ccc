"""Format-1 policy checkpoints, read-only: the private per-decision encoding and actor they were trained on.

Policies saved before the network read the environments' observation
contract (checkpoint format 1, feature version 1) scored each legal action
from a state vector (the scaled observation plus a few sums) and one feature
row per action (points now, the end total left, going out, how the next seat
may answer, how the own hand fits). This module keeps exactly that encoding
and that actor so such files still play as they did; it holds no training
code, and every rule question (end totals, placement points, what a tile adds
to an end) is asked of the core.
"""

from __future__ import annotations

import os
from math import comb

import numpy as np

from allfives_env.core import DRAW, PASS, PIPS, SeatView
from allfives_env.core.layout import Layout
from allfives_env.core.scoring import POINTS_FOR_TOTAL, placement_points
from allfives_env.core.tiles import ALL_TILES_MASK, END_COUNT, IS_DOUBLE, OTHER_HALF, SUIT_MASK, TILES
from allfives_env.views.observation import FIELDS, OBSERVATION_SIZE, encode_observation

from .checkpoint_file import CheckpointError
from .policy_net import weights_digest

#: The checkpoint format version this module reads, and the only feature version it knows.
LEGACY_VERSION = 1
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
#: kind 4, tile 2, slot 4, halves 7, points 2, end total 6, open after 7, going out 2, wins 1, next seat 6, own hand 4
ACTION_SIZE = 45

_TILE_BITS = tuple(1 << t for t in range(28))
#: Per value v: (bit, tile, what the end counts once the tile is placed on v) for the 7 tiles showing v.
_BY_VALUE = tuple(tuple((1 << t, t, END_COUNT[t][v]) for t in range(28) if OTHER_HALF[t][v] >= 0) for v in range(7))
_PIPS_BYTE = tuple(
    tuple(sum(PIPS[8 * k + i] for i in range(8) if b >> i & 1 and 8 * k + i < 28) for b in range(256)) for k in range(4)
)


def _bits(mask: int):
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _mask_pips(mask: int) -> int:
    p = _PIPS_BYTE
    return p[0][mask & 255] + p[1][mask >> 8 & 255] + p[2][mask >> 16 & 255] + p[3][mask >> 24]


def _replies(layout: Layout, tiles: int) -> tuple[int, dict[int, int]]:
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


def _expected_best(points: list[int], p: float) -> float:
    """E[max] of the points when each is available independently with chance p (none: 0)."""
    expected, miss = 0.0, 1.0
    for value in sorted(points, reverse=True):
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


def encode_state(view: SeatView) -> np.ndarray:
    """The format-1 state vector (float32, :data:`STATE_SIZE`)."""
    obs = encode_observation(view).astype(np.float32) * _OBS_SCALE
    extra = np.zeros(_EXTRA_STATE, dtype=np.float32)
    unseen = ALL_TILES_MASK & ~view.hand & ~view.layout.played
    extra[list(_bits(unseen))] = 1.0
    extra[28] = _mask_pips(view.hand) / 60.0
    count = unseen.bit_count()
    extra[29] = _mask_pips(unseen) / count / 12.0 if count else 0.0
    return np.concatenate([obs, extra])


def encode_actions(view: SeatView) -> np.ndarray:
    """One format-1 feature row (float32, :data:`ACTION_SIZE`) per action of ``view.legal``, in that order."""
    rules = view.rules
    me = view.seat
    nxt = (me + 1) % rules.num_players
    layout = view.layout
    hand = view.hand
    unseen = ALL_TILES_MASK & ~hand & ~layout.played
    unseen_count = unseen.bit_count()
    unseen_pips = _mask_pips(unseen)
    opponents_held = sum(c for s, c in enumerate(view.hand_counts) if rules.side_of[s] != rules.side_of[me])
    candidates = unseen
    for v in range(7):
        if view.lacks[nxt] >> v & 1:
            candidates &= ~SUIT_MASK[v]
    pool = candidates.bit_count()
    next_held = min(view.hand_counts[nxt], pool)
    own_score = view.scores[rules.side_of[me]]
    next_score = view.scores[rules.side_of[nxt]]
    target = rules.target
    lead = 1.0 if layout.lead < 0 else 0.0
    rows = np.zeros((len(view.legal), ACTION_SIZE), dtype=np.float32)
    for i, action in enumerate(view.legal):
        row = rows[i]
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
        low, high = TILES[tile]
        row[0], row[3] = 1.0, lead
        row[4], row[5] = PIPS[tile] / 12.0, 1.0 if IS_DOUBLE[tile] else 0.0
        row[6 + slot] = row[10 + low] = row[10 + high] = 1.0
        row[17], row[18] = points / 35.0, 1.0 if points else 0.0
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
            fit, best = _replies(after, candidates)
            scores = list(best.values())
            row[35] = 1.0 - _chance_none(pool, len(scores), next_held)
            row[36] = max(scores, default=0) / 35.0
            row[37] = _chance_none(pool, fit.bit_count(), next_held)
            row[38] = len(scores) / 10.0
            row[39] = _expected_best(scores, next_held / pool) / 35.0
            winning = sum(1 for b in scores if next_score + b >= target)
            row[40] = 1.0 - _chance_none(pool, winning, next_held)
        if left:
            fit, best = _replies(after, left)
            row[41] = fit.bit_count() / 10.0
            row[42] = len(best) / 5.0
            row[43] = max(best.values(), default=0) / 35.0
            row[44] = _mask_pips(left) / 60.0
    return rows


class LegacyActor:
    """A format-1 actor as plain numpy: state trunk, then one shared head scoring each action row."""

    def __init__(self, weights: dict[str, np.ndarray], hidden: int, action_hidden: int, name: str) -> None:
        shapes = {
            "trunk.0.weight": (hidden, STATE_SIZE),
            "trunk.0.bias": (hidden,),
            "trunk.2.weight": (hidden, hidden),
            "trunk.2.bias": (hidden,),
            "state_in.weight": (action_hidden, hidden),
            "state_in.bias": (action_hidden,),
            "action_in.weight": (action_hidden, ACTION_SIZE),
            "head.1.weight": (action_hidden, action_hidden),
            "head.1.bias": (action_hidden,),
            "score.weight": (1, action_hidden),
            "score.bias": (1,),
        }
        for key, shape in shapes.items():
            if key not in weights or tuple(weights[key].shape) != shape:
                found = tuple(weights[key].shape) if key in weights else "missing"
                raise CheckpointError(
                    f"checkpoint {name} does not fit the format-1 network: {key} is {found}, not {shape}"
                )
        p = {k: np.asarray(weights[k], dtype=np.float64) for k in shapes}
        self.w1, self.b1 = p["trunk.0.weight"].T, p["trunk.0.bias"]
        self.w2, self.b2 = p["trunk.2.weight"].T, p["trunk.2.bias"]
        self.ws, self.bs = p["state_in.weight"].T, p["state_in.bias"]
        self.wa = p["action_in.weight"].T
        self.wh, self.bh = p["head.1.weight"].T, p["head.1.bias"]
        self.wo, self.bo = p["score.weight"][0], p["score.bias"][0]

    def logits(self, state: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Logits [K] of one decision: state [S], action rows [K, A]."""
        h = np.maximum(state @ self.w1 + self.b1, 0.0)
        h = np.maximum(h @ self.w2 + self.b2, 0.0)
        z = np.maximum(h @ self.ws + self.bs + actions @ self.wa, 0.0)
        z = np.maximum(z @ self.wh + self.bh, 0.0)
        return z @ self.wo + self.bo

    def legal_logits(self, view: SeatView) -> tuple[list[int], list[float]]:
        """The legal actions in id order and the logit of each (the policy agent's interface)."""
        scored = zip(view.legal, self.logits(encode_state(view), encode_actions(view)).tolist(), strict=True)
        pairs = sorted(scored, key=lambda pair: pair[0])
        return [a for a, _ in pairs], [x for _, x in pairs]


def legacy_actor(data: dict, path: str | os.PathLike) -> LegacyActor:
    """The actor of a format-1 checkpoint dict, after the checks that format always had."""
    name = repr(str(path))
    if data.get("feature_version") != FEATURE_VERSION:
        raise CheckpointError(
            f"checkpoint {name} has format version 1 but feature version {data.get('feature_version')!r}; "
            f"format-1 files were trained on feature version {FEATURE_VERSION}; train a new policy with train.py"
        )
    weights = data.get("weights")
    if not isinstance(weights, dict) or weights_digest(weights) != data.get("weights_sha256"):
        raise CheckpointError(f"checkpoint {name} is corrupt: its weights do not match their SHA-256")
    model = data.get("model")
    if not isinstance(model, dict) or not all(
        isinstance(model.get(k), int) and 1 <= model[k] <= 4096 for k in ("hidden", "action_hidden")
    ):
        raise CheckpointError(f"checkpoint {name} lacks network sizes in range (1 to 4096): {model!r}")
    arrays = {k: v.detach().to("cpu").numpy() for k, v in weights.items()}
    return LegacyActor(arrays, model["hidden"], model["action_hidden"], name)
