"""A learned model of where the tiles a seat cannot see lie, and deals of them drawn from it.

A seat sees its own hand and the layout; every other tile is in another
hand or in the boneyard. The search bots deal those hidden tiles before each
play-out, and a uniform deal ignores what the other seats showed by their
play: a seat that left points on the table probably lacked the tile that
would have scored them, a seat that shed a heavy double early probably holds
few heavy tiles, and so on. The known lacks (from draws and passes) are hard
facts that every deal respects; everything softer is what this model learns.

For each hidden tile and each place it may lie (each other seat, relative to
the viewer, and the boneyard) :func:`tile_features` describes, from the view
alone, the tile, the place, and what that seat's free placements of this
round say about the tile: how often the tile would have fitted, scored, or
scored more than what the seat chose, split at the seat's last draw (before
it, the seat's hand was not what it is now). A small network scores each
(tile, place) row; a softmax over the tile's possible places, with the
place's size as a prior, gives the tile's distribution, and a few Sinkhorn
passes make every place's expected number of tiles its true size. The model
is trained on matches where the truth is known (:mod:`allfives_train.belief`).

:meth:`BeliefModel.dealer` draws deals from those marginals: place by place
(the most constrained first), each seat takes its tiles by weighted sampling
without replacement, a tile's weight being the odds that it lies there; the
boneyard keeps the rest in a random order. Every deal respects the hand
sizes, the boneyard size and the known lacks, exactly as
:func:`agents.search.sample_hidden` does.

The weights are a small ``.npz`` file (no pickled objects, checked with a
SHA-256 of its arrays), so a search can read its beliefs without torch.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import zipfile
from functools import lru_cache
from pathlib import Path

import numpy as np

from allfives_env.core import DRAW, PASS, SeatView
from allfives_env.core.layout import Layout
from allfives_env.core.scoring import POINTS_FOR_TOTAL
from allfives_env.core.tiles import IS_DOUBLE, NUM_TILES, NUM_VALUES, PIPS, SUIT_MASK, TILES

from .heuristic import ALL_TILES, lacked_tiles
from .search import SamplingError, sample_hidden

BELIEF_FORMAT = "allfives-belief"
BELIEF_VERSION = 1
SHIPPED = Path(__file__).resolve().parent / "checkpoints" / "belief.npz"
MAX_PLACES = 4  # three other seats and the boneyard
SINKHORN_PASSES = 8
EVIDENCE = 5  # per bucket of placements: fitted, scored more, scored as much, points missed, scored
#: The per-row features, in order (the file records them; a model trained on others is refused).
FEATURES: tuple[str, ...] = (
    "pips",
    "double",
    *(f"shows_{v}" for v in range(NUM_VALUES)),
    "fits_now",
    "points_now",
    "hidden",
    "own_hand",
    "boneyard",
    "next_seat",
    "second_seat",
    "third_seat",
    "partner",
    "share",
    "draws",
    "free_since_draw",
    "free_before_draw",
    *(f"since_{name}" for name in ("fitted", "more", "as_much", "missed", "scored")),
    *(f"before_{name}" for name in ("fitted", "more", "as_much", "missed", "scored")),
    "shared_values_played",
    "hand_size",
)
NUM_FEATURES = len(FEATURES)


class BeliefError(ValueError):
    """A belief file that cannot be used; the message is one line naming the file and the problem."""


# -- what the view says ------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _tile_table() -> np.ndarray:
    """Per tile: its pips, whether it is a double, and the values it shows."""
    table = np.zeros((NUM_TILES, 2 + NUM_VALUES), np.float32)
    for tile, (a, b) in enumerate(TILES):
        table[tile, 0] = PIPS[tile] / 12
        table[tile, 1] = IS_DOUBLE[tile]
        table[tile, 2 + a] = 1
        table[tile, 2 + b] = 1
    return table


def best_points(layout: Layout) -> np.ndarray:
    """Per tile: the most points one placement of it scores on ``layout``; -1 where it fits nowhere."""
    best = np.full(NUM_TILES, -1, np.int64)
    for slot, value in enumerate(layout.values):
        if value < 0:
            continue
        tiles = SUIT_MASK[value]
        while tiles:
            low = tiles & -tiles
            tiles ^= low
            tile = low.bit_length() - 1
            best[tile] = max(best[tile], POINTS_FOR_TOTAL[layout.end_total_after(tile, slot)])
    return best


def _evidence(view: SeatView) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per seat and tile, the evidence of its free placements this round, split at its last draw.

    Returns ``(since, before, placements, draws)``: the evidence ``[n, 28, EVIDENCE]`` of the
    placements since the seat's last draw and of those before it, the number of free placements
    in each ``[n, 2]``, and each seat's draws this round ``[n]``.
    """
    n = len(view.hand_counts)
    current = np.zeros((n, NUM_TILES, EVIDENCE), np.float32)
    older = np.zeros((n, NUM_TILES, EVIDENCE), np.float32)
    placements = np.zeros((n, 2), np.float32)
    draws = np.zeros(n, np.float32)
    layout = Layout()
    previous = None
    for seat, action in view.moves:
        if action == DRAW:
            draws[seat] += 1
            older[seat] += current[seat]
            current[seat] = 0
            placements[seat, 1] += placements[seat, 0]
            placements[seat, 0] = 0
        elif action != PASS:
            tile, slot = action >> 2, action & 3
            free = not layout.empty and previous != (seat, DRAW)
            if free:
                best = best_points(layout)
                chosen = POINTS_FOR_TOTAL[layout.end_total_after(tile, slot)]
                fitted = best >= 0
                current[seat, :, 0] += fitted
                current[seat, :, 1] += best > chosen
                current[seat, :, 2] += fitted & (best == chosen)
                current[seat, :, 3] += np.maximum(best - chosen, 0) / 5
                current[seat, :, 4] += best > 0
                placements[seat, 0] += 1
            layout.place(tile, slot)
        previous = (seat, action)
    return current, older, placements, draws


def places_of(view: SeatView) -> list[int]:
    """The places a hidden tile may lie, in the model's order: the other seats from the next one on, then -1."""
    n = len(view.hand_counts)
    return [(view.seat + k) % n for k in range(1, n)] + [-1]


def tile_features(view: SeatView) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The model's input for ``view``: ``(hidden tiles [H], sizes [P], allowed [H, P], rows [H, P, F])``.

    ``sizes`` holds each place's number of hidden tiles (seats as the view
    shows them, then the boneyard); ``allowed`` is False where a tile cannot
    lie (a known lack, or a place with no room).
    """
    hidden_mask = ALL_TILES & ~view.hand & ~view.layout.played
    hidden = np.array([t for t in range(NUM_TILES) if hidden_mask >> t & 1], np.int64)
    places = places_of(view)
    sizes = np.array([view.hand_counts[p] if p >= 0 else view.boneyard_left for p in places], np.float32)
    allowed = np.zeros((len(hidden), len(places)), bool)
    for j, p in enumerate(places):
        if sizes[j] <= 0:
            continue
        fits = hidden_mask if p < 0 else hidden_mask & ~lacked_tiles(view.lacks[p])
        allowed[:, j] = [(fits >> int(t)) & 1 for t in hidden]
    since, before, placements, draws = _evidence(view)
    layout_best = best_points(view.layout) if not view.layout.empty else np.full(NUM_TILES, -1)
    rows = np.zeros((len(hidden), len(places), NUM_FEATURES), np.float32)
    count = max(1, len(hidden))
    rows[:, :, 0:9] = _tile_table()[hidden][:, None, :]
    rows[:, :, 9] = (layout_best[hidden] >= 0)[:, None]
    rows[:, :, 10] = (np.maximum(layout_best[hidden], 0) / 20)[:, None]
    rows[:, :, 11] = count / 21
    rows[:, :, 12] = view.hand_counts[view.seat] / 21
    side_of = view.rules.side_of
    for j, p in enumerate(places):
        rows[:, j, 18] = sizes[j] / count
        if p < 0:
            rows[:, j, 13] = 1
            continue
        rows[:, j, 14 + j] = 1
        rows[:, j, 17] = side_of[p] == side_of[view.seat]
        rows[:, j, 19] = draws[p] / 7
        rows[:, j, 20:22] = placements[p] / 10
        rows[:, j, 22:27] = since[p][hidden] / 5
        rows[:, j, 27:32] = before[p][hidden] / 5
        rows[:, j, 32] = _shared_values(view, p)[hidden] / 3
        rows[:, j, 33] = view.hand_counts[p] / 21
    return hidden, sizes, allowed, rows


def _shared_values(view: SeatView, seat: int) -> np.ndarray:
    """Per tile: how many of the tiles ``seat`` placed this round share a value with it."""
    shared = np.zeros(NUM_TILES, np.float32)
    for s, action in view.moves:
        if s == seat and action < DRAW:
            a, b = TILES[action >> 2]
            shared += ((_tile_table()[:, 2 + a] + _tile_table()[:, 2 + b]) > 0).astype(np.float32)
    return shared


def true_places(view: SeatView, hands: list[int], boneyard: int, hidden: np.ndarray) -> np.ndarray:
    """Where each hidden tile really lies, as an index into :func:`places_of` (training labels)."""
    places = places_of(view)
    out = np.full(len(hidden), -1, np.int64)
    for j, p in enumerate(places):
        mask = boneyard if p < 0 else hands[p]
        out[[bool(mask >> int(t) & 1) for t in hidden]] = j
    if (out < 0).any():
        raise ValueError("a hidden tile is in no other hand and not in the boneyard")
    return out


# -- the model ----------------------------------------------------------------------------------


def sinkhorn(probs: np.ndarray, sizes: np.ndarray, allowed: np.ndarray, passes: int = SINKHORN_PASSES) -> np.ndarray:
    """``probs`` [H, P] rescaled so each tile's row sums to 1 and each place's column to its size (nearly)."""
    p = np.where(allowed, probs, 0.0)
    for _ in range(passes):
        column = p.sum(0)
        p = p * np.where(column > 0, sizes / np.maximum(column, 1e-12), 0.0)
        p = p / np.maximum(p.sum(1, keepdims=True), 1e-12)
    return p


class BeliefModel:
    """Marginals of the hidden tiles' places from a seat's view, and deals drawn from them."""

    def __init__(self, weights: dict[str, np.ndarray], meta: dict | None = None) -> None:
        self.layers = [(weights[f"w{i}"].astype(np.float64), weights[f"b{i}"].astype(np.float64))
                       for i in range(len(weights) // 2)]  # fmt: skip
        self.meta = dict(meta or {})

    def row_logits(self, rows: np.ndarray) -> np.ndarray:
        """The network's score of each (tile, place) row [..., F] -> [...]."""
        h = rows.astype(np.float64)
        for i, (w, b) in enumerate(self.layers):
            h = h @ w + b
            if i < len(self.layers) - 1:
                h = np.maximum(h, 0.0)
        return h[..., 0]

    def marginals(self, view: SeatView, balanced: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(hidden tiles [H], places [P], probabilities [H, P])``: where each hidden tile lies.

        With ``balanced`` the Sinkhorn passes make each place's expected count its size.
        """
        hidden, sizes, allowed, rows = tile_features(view)
        probs = tile_softmax(self.row_logits(rows), sizes, allowed)
        if balanced:
            probs = sinkhorn(probs, sizes, allowed)
        return hidden, np.array(places_of(view)), probs

    def dealer(self, view: SeatView) -> Dealer:
        """A sampler of deals for this decision (the model runs once; each deal then costs microseconds)."""
        hidden, places, probs = self.marginals(view)
        return Dealer(view, hidden, places, probs)


def tile_softmax(logits: np.ndarray, sizes: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Per tile, a softmax over its allowed places of ``logits`` plus the log of each place's size."""
    z = np.where(allowed, logits + np.log(np.maximum(sizes, 1e-9)), -np.inf)
    z = z - z.max(1, keepdims=True)
    e = np.where(allowed, np.exp(z), 0.0)
    return e / e.sum(1, keepdims=True)


class Dealer:
    """Deals of one view's hidden tiles drawn from the model's marginals; see the module docstring."""

    def __init__(self, view: SeatView, hidden: np.ndarray, places: np.ndarray, probs: np.ndarray) -> None:
        self.view = view
        self.hidden = hidden
        self.bits = np.left_shift(1, hidden).astype(np.int64)
        self.places = places
        allowed = probs > 0
        # The seats with the fewest spare candidates choose first, so a weighted fill rarely dead-ends.
        self.seat_order = sorted(
            (j for j, p in enumerate(places) if p >= 0 and view.hand_counts[p] > 0),
            key=lambda j: (int(allowed[:, j].sum()) - view.hand_counts[places[j]], j),
        )
        # A tile's weight at a seat: the odds that it lies there rather than anywhere else (0: it cannot).
        self.weights = np.where(allowed, probs / np.maximum(1.0 - probs, 1e-9), 0.0)

    def deals(self, rng: random.Random, count: int) -> tuple[np.ndarray, np.ndarray]:
        """``count`` deals: hand masks [count, 4] (the viewer's own hand included) and boneyards [count, B] in draw
        order, as :func:`agents.rollout.add_deal_arrays` reads them. Seeded by ``rng``."""
        view = self.view
        gen = np.random.default_rng(rng.getrandbits(64))
        hands = np.zeros((count, 4), np.int64)
        hands[:, view.seat] = view.hand
        free = np.ones((count, len(self.hidden)), bool)
        ok = np.ones(count, bool)
        for j in self.seat_order:
            seat, size = int(self.places[j]), view.hand_counts[self.places[j]]
            # Weighted sampling without replacement: the ``size`` largest keys log(u) / weight.
            with np.errstate(divide="ignore"):
                keys = np.log(gen.random((count, len(self.hidden)))) / self.weights[:, j]
            keys[~free] = -np.inf
            taken = np.argpartition(-keys, size - 1, axis=1)[:, :size]
            ok &= np.isfinite(np.take_along_axis(keys, taken, 1)).all(1)
            hands[:, seat] = self.bits[taken].sum(1)
            np.put_along_axis(free, taken, False, 1)
        boneyards = np.zeros((count, max(1, view.rules.boneyard_size)), np.int8)
        if view.boneyard_left:
            keys = np.where(free, gen.random(free.shape), 2.0)
            order = np.argsort(keys, axis=1)[:, : view.boneyard_left]
            ok &= np.take_along_axis(free, order, 1).all(1)
            boneyards[:, : view.boneyard_left] = self.hidden[order]
        for d in np.flatnonzero(~ok).tolist():  # a dead end of the weighted fill (rare): a uniform deal instead
            deal_hands, boneyard = sample_hidden(view, rng)
            hands[d] = deal_hands + [0] * (4 - len(deal_hands))
            boneyards[d, : len(boneyard)] = boneyard
        return hands, boneyards

    def deal(self, rng: random.Random) -> tuple[list[int], tuple[int, ...]]:
        """One deal as :func:`agents.search.sample_hidden` gives it: (hand masks for every seat, boneyard)."""
        hands, boneyards = self.deals(rng, 1)
        n = len(self.view.hand_counts)
        return [int(h) for h in hands[0, :n]], tuple(int(t) for t in boneyards[0, : self.view.boneyard_left])


# -- files --------------------------------------------------------------------------------------


def digest(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 over the arrays' names, shapes, types and bytes."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(name.encode())
        h.update(str((a.shape, a.dtype.str)).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def save_belief(path: str | os.PathLike, weights: dict[str, np.ndarray], meta: dict) -> Path:
    """Write a belief file: the weights, what they were trained on, and their SHA-256."""
    arrays = {k: np.asarray(v, np.float32) for k, v in weights.items()}
    header = {"format": BELIEF_FORMAT, "version": BELIEF_VERSION, "features": list(FEATURES),
              "sha256": digest(arrays), **meta}  # fmt: skip
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as f:
        np.savez(f, header=np.array(json.dumps(header, sort_keys=True)), **arrays)
    os.replace(tmp, path)
    return path


def load_belief(path: str | os.PathLike | None = None) -> BeliefModel:
    """The belief model in ``path`` (default: the shipped one); BeliefError (one line) if it cannot be used."""
    path = Path(SHIPPED if path is None else path)
    name = repr(str(path))
    if not path.is_file():
        raise BeliefError(f"belief file {name} does not exist or is not a file")
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as error:
        raise BeliefError(f"belief file {name} cannot be read (not an .npz of arrays, or truncated): {error}") from None
    try:
        header = json.loads(str(arrays.pop("header")))
    except (KeyError, ValueError):
        raise BeliefError(f"belief file {name} has no readable header") from None
    if not isinstance(header, dict) or header.get("format") != BELIEF_FORMAT:
        raise BeliefError(f"belief file {name} is not an allfives belief model")
    if header.get("version") != BELIEF_VERSION:
        raise BeliefError(f"belief file {name} has version {header.get('version')!r}; this code reads {BELIEF_VERSION}")
    if header.get("features") != list(FEATURES):
        raise BeliefError(f"belief file {name} was trained on other features than this code computes")
    if digest(arrays) != header.get("sha256"):
        raise BeliefError(f"belief file {name} is corrupt: its arrays do not match their SHA-256")
    layers = len(arrays) // 2
    shapes_ok = (
        layers >= 1
        and set(arrays) == {f"{k}{i}" for i in range(layers) for k in "wb"}
        and arrays["w0"].shape[0] == NUM_FEATURES
        and arrays[f"w{layers - 1}"].shape[1] == 1
        and all(arrays[f"w{i}"].shape[1] == arrays[f"b{i}"].shape[0] for i in range(layers))
        and all(arrays[f"w{i}"].shape[1] == arrays[f"w{i + 1}"].shape[0] for i in range(layers - 1))
    )
    if not shapes_ok:
        raise BeliefError(f"belief file {name} does not hold a network of the expected shape")
    if not all(np.isfinite(a).all() for a in arrays.values()):
        raise BeliefError(f"belief file {name} holds values that are not finite")
    return BeliefModel(arrays, {k: v for k, v in header.items() if k not in ("format", "version", "features")})


@lru_cache(maxsize=1)
def shipped_belief() -> BeliefModel:
    """The belief model shipped with the package, loaded once per process (it is read-only)."""
    return load_belief(SHIPPED)


def deals_agree(view: SeatView, hands: list[int], boneyard: tuple[int, ...]) -> bool:
    """True when a deal contradicts nothing the view knows: sizes, own hand, the layout and the lacks."""
    if hands[view.seat] != view.hand or len(boneyard) != view.boneyard_left:
        return False
    seen = view.hand | view.layout.played
    everything = seen
    for seat, mask in enumerate(hands):
        if seat == view.seat:
            continue
        if mask.bit_count() != view.hand_counts[seat] or mask & everything or mask & lacked_tiles(view.lacks[seat]):
            return False
        everything |= mask
    bone_mask = 0
    for tile in boneyard:
        if bone_mask >> tile & 1 or everything >> tile & 1:
            return False
        bone_mask |= 1 << tile
    return everything | bone_mask == ALL_TILES


__all__ = [
    "BeliefError",
    "BeliefModel",
    "Dealer",
    "SamplingError",
    "deals_agree",
    "load_belief",
    "save_belief",
    "shipped_belief",
    "tile_features",
]
