"""The tables' state as arrays, and the moves of the hot path in array form.

:class:`Tables` holds ``num_envs`` rounds in progress, one row per table: the
hands as 0/1 tile rows per seat, the boneyard in draw order, the layout's
ends, the scores. It answers legality for every table at once and applies a
batch of placements, draws and passes, following the core's
:class:`~allfives_env.core.state.State` step for step (the equality tests
hold the two together). What ends a round is only *detected* here; the hand
award, the next deal and its leader are left to the caller, who asks the
core (:mod:`allfives_env.vector.rounds`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..core.rules import Rules
from ..core.tiles import DRAW, NUM_ACTIONS, NUM_SLOTS, NUM_TILES, PASS
from ..views.observation import HISTORY_LENGTH
from .blocks import put_block
from .tables import (
    DOUBLE,
    FIT_WORDS,
    HIGH,
    KEY_SHIFT,
    LEAD_KEY,
    LOW,
    OPEN_BITS,
    OTHER,
    PLAYABLE,
    PLAYABLE_BITS,
    POINTS,
    SPREAD,
    TILE_ONE_HOT,
    TILE_PIPS,
)

_EMPTY = np.zeros(0, dtype=np.intp)
_OTHER_FLAT = OTHER.ravel()  # [tile * 7 + value]
_PLAYABLE_FLAT = PLAYABLE.ravel()  # [key * 28 + tile]


def to_target(target: float, scores: np.ndarray) -> np.ndarray:
    """Points still needed in units of 2.5, rounded up and clipped to 0..127 exactly as the views do."""
    need = target - scores
    need /= 2.5
    need += 0.999
    np.floor(need, out=need)
    np.maximum(need, 0, out=need)
    np.minimum(need, 127, out=need)
    return need.astype(np.int8)


class RoundEnds(NamedTuple):
    """The tables whose round ended in one apply, by how (rows are table indices)."""

    domino: np.ndarray  # the seat on these tables placed its last tile
    domino_seat: np.ndarray
    block: np.ndarray  # no one can place and the boneyard is empty
    target: np.ndarray  # a placement took its side to the target: the match is over


#: The per-table arrays of :class:`Tables` (first axis: the table); everything else is derived from them.
PER_TABLE = (
    "hands", "hand_bits", "hand_count", "boneyard", "bone_pos", "played", "played_bits", "values", "keys",
    "counts", "end_double", "arm_started", "spinner", "spinner_ends", "lead", "required_lead", "to_act",
    "drawn", "lacks", "scores", "need", "round_index", "leader", "move_seat", "move_action", "move_count",
)  # fmt: skip


class Tables:
    """``num_envs`` tables of one rule set, every field an array with one row per table.

    The hot path reads and writes through flat views (``_f`` suffix) with
    computed flat indices and ``take``, which costs a fraction of numpy's
    multi-dimensional fancy indexing at these sizes, and finds rows with the
    ``nonzero`` method rather than the Python-level ``np.flatnonzero``.
    """

    def __init__(self, rules: Rules, num_envs: int) -> None:
        self.rules = rules
        b, n = num_envs, rules.num_players
        self.num_envs = b
        self.num_players = n
        self.rows = np.arange(b)
        self.seat_base = self.rows * n  # flat index of (table, seat 0) in the per-seat arrays
        self.bone_size = rules.boneyard_size
        self.side_of = np.array(rules.side_of, dtype=np.intp)
        self.num_sides = rules.num_sides
        self.next_seat = np.array([(s + 1) % n for s in range(n)], dtype=np.intp)
        self.hands = np.zeros((b, n, NUM_TILES), dtype=np.int8)
        self.hand_bits = np.zeros((b, n), dtype=np.int64)  # the same hands as 28-bit masks
        self.hand_count = np.zeros((b, n), dtype=np.int8)
        self.boneyard = np.zeros((b, max(1, self.bone_size)), dtype=np.intp)
        self.bone_pos = np.zeros(b, dtype=np.intp)
        self.played = np.zeros((b, NUM_TILES), dtype=np.int8)
        self.played_bits = np.zeros(b, dtype=np.int64)  # the same tiles as a 28-bit mask
        self.values = np.full((b, NUM_SLOTS), -1, dtype=np.int8)  # the value to match per slot, -1 closed
        self.keys = np.zeros(b, dtype=np.intp)  # the end key of ``values``, kept in step with it
        self.counts = np.zeros((b, NUM_SLOTS), dtype=np.int8)  # what each end adds to the end total
        self.end_double = np.zeros((b, NUM_SLOTS), dtype=np.int8)  # the end is a terminal double
        self.arm_started = np.zeros((b, NUM_SLOTS), dtype=np.int8)
        self.spinner = np.full(b, -1, dtype=np.intp)
        self.spinner_ends = np.zeros(b, dtype=np.intp)  # bit s: the end at slot s is the spinner itself
        self.lead = np.full(b, -1, dtype=np.intp)
        self.required_lead = np.full(b, -1, dtype=np.intp)
        self.to_act = np.zeros(b, dtype=np.intp)
        self.drawn = np.full(b, -1, dtype=np.intp)
        self.lacks = np.zeros((b, n), dtype=np.intp)  # bit v: the seat is known to hold no tile of value v
        self.scores = np.zeros((b, rules.num_sides), dtype=np.float64)
        self.need = np.zeros((b, rules.num_sides), dtype=np.int8)  # the observation's to_target: refresh_need()
        self.round_index = np.zeros(b, dtype=np.intp)
        self.leader = np.zeros(b, dtype=np.intp)
        self.move_seat = np.zeros((b, HISTORY_LENGTH), dtype=np.intp)
        self.move_action = np.zeros((b, HISTORY_LENGTH), dtype=np.intp)
        self.move_count = np.zeros(b, dtype=np.intp)
        # flat views of the same memory
        self.hand_rows = self.hands.reshape(b * n, NUM_TILES)
        self.hands_f = self.hands.reshape(-1)
        self.hand_bits_f = self.hand_bits.reshape(-1)
        self.hand_count_f = self.hand_count.reshape(-1)
        self.boneyard_f = self.boneyard.reshape(-1)
        self.played_f = self.played.reshape(-1)
        self.values_f = self.values.reshape(-1)
        self.counts_f = self.counts.reshape(-1)
        self.count_words = self.counts.view(np.uint32).reshape(b)  # the four counts of a table as one word
        self.value_words = self.values.view(np.uint32).reshape(b)  # likewise the values, end_double, arm_started
        self.end_double_words = self.end_double.view(np.uint32).reshape(b)
        self.arm_started_words = self.arm_started.view(np.uint32).reshape(b)
        self.end_double_f = self.end_double.reshape(-1)
        self.arm_started_f = self.arm_started.reshape(-1)
        self.lacks_f = self.lacks.reshape(-1)
        self.scores_f = self.scores.reshape(-1)
        self.move_seat_f = self.move_seat.reshape(-1)
        self.move_action_f = self.move_action.reshape(-1)

    def take(self, rows: np.ndarray) -> Tables:
        """New tables holding copies of these tables' ``rows``, in that order."""
        kept = Tables(self.rules, len(rows))
        for name in PER_TABLE:
            getattr(kept, name)[...] = getattr(self, name)[rows]
        return kept

    # -- questions ------------------------------------------------------------------

    def refresh_need(self) -> None:
        """Recompute every table's to_target bytes from the scores.

        Called once before the observations are encoded, not at each score
        change: one pass over all tables costs less than two fancy-indexed ones.
        """
        self.need[...] = to_target(self.rules.target, self.scores)

    def end_totals(self, rows: np.ndarray | None = None) -> np.ndarray:
        """The end total of each (listed) table: the four count bytes of its word summed by one multiply."""
        words = self.count_words if rows is None else self.count_words.take(rows)
        return (words * SPREAD) >> np.uint32(24)

    def _acting(self, rows: np.ndarray | None) -> tuple:
        if rows is None:
            return self.seat_base + self.to_act, self.drawn, self.lead, self.required_lead, self.keys, self.bone_pos
        return (
            rows * self.num_players + self.to_act.take(rows),
            self.drawn.take(rows),
            self.lead.take(rows),
            self.required_lead.take(rows),
            self.keys.take(rows),
            self.bone_pos.take(rows),
        )

    def candidates(self, rows: np.ndarray | None = None) -> np.ndarray:
        """(tables, 28): the tiles the seat to act may place if they fit: its hand, the drawn tile or the required lead."""
        seat_rows, drawn, lead, required, _, _ = self._acting(rows)
        cand = self.hand_rows.take(seat_rows, axis=0)
        special = np.flatnonzero((drawn >= 0) | ((lead < 0) & (required >= 0)))
        if special.size:
            tile = np.where(drawn[special] >= 0, drawn[special], required[special])
            cand[special] = 0
            cand[special, tile] = 1
        return cand

    def legal_mask(self, rows: np.ndarray | None = None) -> np.ndarray:
        """(tables, 114) int8: the legal actions: the placements that fit, else DRAW while the boneyard lasts,
        else PASS.
        """
        seat_rows, drawn, lead, required, keys, bone_pos = self._acting(rows)
        cand = self.hand_rows.take(seat_rows, axis=0)
        bits = self.hand_bits_f.take(seat_rows)
        leading = lead < 0
        forced = np.where(leading, required, drawn)  # no tile is drawn before the lead
        special = (forced >= 0).nonzero()[0]
        if special.size:  # one candidate: the drawn tile, or the double the lead must be
            tile = forced[special]
            cand[special] = TILE_ONE_HOT.take(tile + 1, axis=0)
            bits[special] = 1 << tile
        keys = np.where(leading, LEAD_KEY, keys)  # an empty layout: any candidate leads, at slot W
        words = FIT_WORDS.take(keys, axis=0)  # contiguous, so the gather and the product run as flat loops
        words *= cand.astype(np.uint32)  # a 0/1 candidate keeps or clears its tile's four slot bytes
        stuck = (bits & PLAYABLE_BITS.take(keys)) == 0
        mask = np.empty((len(words), NUM_ACTIONS), dtype=np.int8)
        put_block(mask, 0, words.view(np.int8))
        left = bone_pos < self.bone_size
        mask[:, DRAW] = stuck & left
        mask[:, PASS] = stuck & ~left
        return mask

    def seat_pips(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), n): each seat's remaining pips."""
        return self.hands.take(rows, axis=0).astype(np.int64) @ TILE_PIPS

    def _blocked(self, rows: np.ndarray) -> np.ndarray:
        """For tables whose boneyard is empty: no tile held by anyone fits an open end."""
        held = np.bitwise_or.reduce(self.hand_bits.take(rows, axis=0), axis=1)
        return (held & PLAYABLE_BITS.take(self.keys.take(rows))) == 0

    # -- the moves ---------------------------------------------------------------------

    def apply(self, rows: np.ndarray, actions: np.ndarray) -> RoundEnds:
        """Apply one legal action per listed table (the caller has checked legality)."""
        seats = self.to_act.take(rows)
        at = self.move_count.take(rows)
        flat = rows * HISTORY_LENGTH + at
        self.move_seat_f[flat] = seats
        self.move_action_f[flat] = actions
        self.move_count[rows] = at + 1
        placing = actions < DRAW
        if placing.all():
            return self._place(rows, seats, actions)
        ends = [self._place(rows[placing], seats[placing], actions[placing])]
        drawing = actions == DRAW
        if drawing.any():
            ends.append(self._draw(rows[drawing], seats[drawing]))
        passing = actions == PASS
        if passing.any():
            self._pass(rows[passing], seats[passing])
        return RoundEnds(*(np.concatenate(parts) for parts in zip(*ends, strict=True)))

    def _place(self, rows: np.ndarray, seats: np.ndarray, actions: np.ndarray) -> RoundEnds:
        tiles = actions >> 2
        slots = actions & 3
        bit = 1 << tiles
        seat_rows = rows * self.num_players + seats
        self.hands_f[seat_rows * NUM_TILES + tiles] = 0
        self.hand_bits_f[seat_rows] = self.hand_bits_f.take(seat_rows) ^ bit  # the placed tile was held
        left = self.hand_count_f.take(seat_rows) - 1
        self.hand_count_f[seat_rows] = left
        self.drawn[rows] = -1
        self.played_f[rows * NUM_TILES + tiles] = 1
        self.played_bits[rows] = self.played_bits.take(rows) | bit
        leading = self.lead.take(rows) < 0
        if leading.any():
            self._place_lead(rows[leading], tiles[leading])
            keep = ~leading
            self._place_end(rows[keep], tiles[keep], slots[keep])
        else:
            self._place_end(rows, tiles, slots)

        points = POINTS.take(self.end_totals(rows))
        scoring = points.nonzero()[0]
        going = np.ones(len(rows), dtype=bool)  # the tables whose round goes on
        target = _EMPTY
        if scoring.size:
            r = rows[scoring]
            at = r * self.num_sides + self.side_of.take(seats[scoring])
            now = self.scores_f.take(at) + points[scoring]
            self.scores_f[at] = now
            reached = now >= self.rules.target
            if reached.any():
                target = r[reached]
                going[scoring[reached]] = False
        out = going & (left == 0)
        domino, domino_seat = rows[out], seats[out]
        going &= ~out
        block = _EMPTY
        dry = (going & (self.bone_pos.take(rows) == self.bone_size)).nonzero()[0]
        if dry.size:
            blocked = dry[self._blocked(rows[dry])]
            block = rows[blocked]
        self.to_act[rows] = self.next_seat.take(seats)  # a table whose round ended is dealt again first
        return RoundEnds(domino, domino_seat, block, target)

    def _place_lead(self, rows: np.ndarray, tiles: np.ndarray) -> None:
        low, high = LOW.take(tiles), HIGH.take(tiles)
        self.lead[rows] = tiles
        at = rows * NUM_SLOTS
        self.values_f[at] = low
        self.values_f[at + 1] = high
        self.counts_f[at] = low  # a lone lead counts its pips once, a lone spinner included
        self.counts_f[at + 1] = high
        self.keys[rows] = (low.astype(np.intp) + 1) << KEY_SHIFT[0] | (high.astype(np.intp) + 1) << KEY_SHIFT[1]
        double = DOUBLE.take(tiles) == 1
        self.spinner[rows] = np.where(double, low, -1)
        self.spinner_ends[rows] = np.where(double, 3, 0)

    def _place_end(self, rows: np.ndarray, tiles: np.ndarray, slots: np.ndarray) -> None:
        at = rows * NUM_SLOTS + slots
        values = self.values_f.take(at).astype(np.intp)
        outer = _OTHER_FLAT.take(tiles * 7 + values)
        ends = self.spinner_ends.take(rows)
        bit = 1 << slots
        spinner = self.spinner.take(rows)
        hit = (ends & bit).nonzero()[0]  # placed on a line side of a led spinner
        if hit.size:
            ends[hit] ^= bit[hit]
            still = ends[hit] != 0
            half = hit[still]  # a led spinner keeps one line side: a terminal double
            if half.size:
                other = rows[half] * NUM_SLOTS + (ends[half] >> 1)
                self.counts_f[other] = 2 * spinner[half]
                self.end_double_f[other] = 1
            both = hit[~still]  # both line sides covered: the branches open
            if both.size:
                r, v = rows[both], spinner[both]
                self.values_f[r * NUM_SLOTS + 2] = v
                self.values_f[r * NUM_SLOTS + 3] = v
                self.keys[r] += (v + 1) << KEY_SHIFT[2] | (v + 1) << KEY_SHIFT[3]
        double = DOUBLE.take(tiles)
        first = (double & (spinner < 0)).nonzero()[0]
        if first.size:
            self.spinner[rows[first]] = outer[first]
            ends[first] = bit[first]
        self.spinner_ends[rows] = ends
        self.counts_f[at] = outer * (1 + double)
        self.keys[rows] += (outer - values) << KEY_SHIFT.take(slots)
        self.values_f[at] = outer
        self.end_double_f[at] = double
        self.arm_started_f[at] = 1

    def _block_check(self, rows: np.ndarray) -> np.ndarray:
        """The listed tables whose round is now blocked (boneyard empty and nothing fits)."""
        dry = rows[self.bone_pos.take(rows) == self.bone_size]
        if not dry.size:
            return _EMPTY
        return dry[self._blocked(dry)]

    def _draw(self, rows: np.ndarray, seats: np.ndarray) -> RoundEnds:
        keys = self.keys.take(rows)
        seat_rows = rows * self.num_players + seats
        # It could not place: it holds none of the open values, and the drawn tile may show any other.
        self.lacks_f[seat_rows] = OPEN_BITS.take(keys)
        pos = self.bone_pos.take(rows)
        tiles = self.boneyard_f.take(rows * self.boneyard.shape[1] + pos)
        self.bone_pos[rows] = pos + 1
        self.hands_f[seat_rows * NUM_TILES + tiles] = 1
        self.hand_bits_f[seat_rows] = self.hand_bits_f.take(seat_rows) | (1 << tiles)
        self.hand_count_f[seat_rows] = self.hand_count_f.take(seat_rows) + 1
        fits = _PLAYABLE_FLAT.take(keys * NUM_TILES + tiles) == 1
        self.drawn[rows[fits]] = tiles[fits]
        block = self._block_check(rows[~fits])
        return RoundEnds(_EMPTY, _EMPTY, block, _EMPTY)

    def _pass(self, rows: np.ndarray, seats: np.ndarray) -> None:
        seat_rows = rows * self.num_players + seats
        self.lacks_f[seat_rows] = self.lacks_f.take(seat_rows) | OPEN_BITS.take(self.keys.take(rows))
        self.to_act[rows] = self.next_seat.take(seats)

    # -- a new round ---------------------------------------------------------------------

    def start_rounds(
        self,
        rows: np.ndarray,
        hands: np.ndarray,
        boneyards: np.ndarray,
        leaders: np.ndarray,
        required: np.ndarray,
        round_index: np.ndarray,
    ) -> None:
        """Lay out new deals: ``hands`` (rows, n, hand size) and ``boneyards`` (rows, boneyard size) as tile ids."""
        n = self.num_players
        self.hands[rows] = 0
        seat_rows = (rows[:, None] * n + np.arange(n)).ravel()  # flat (table, seat) indices
        self.hands_f[(seat_rows[:, None] * NUM_TILES + hands.reshape(len(seat_rows), -1)).ravel()] = 1
        self.hand_bits_f[seat_rows] = np.bitwise_or.reduce(np.int64(1) << hands, axis=2).ravel()
        self.hand_count_f[seat_rows] = hands.shape[2]
        if self.bone_size:
            self.boneyard[rows] = boneyards
        self.bone_pos[rows] = 0
        self.played[rows] = 0
        self.played_bits[rows] = 0
        self.value_words[rows] = 0xFFFFFFFF  # four -1 bytes: every end closed
        self.keys[rows] = 0
        self.count_words[rows] = 0
        self.end_double_words[rows] = 0
        self.arm_started_words[rows] = 0
        self.spinner[rows] = -1
        self.spinner_ends[rows] = 0
        self.lead[rows] = -1
        self.required_lead[rows] = required
        self.to_act[rows] = leaders
        self.leader[rows] = leaders
        self.drawn[rows] = -1
        self.lacks_f[seat_rows] = 0
        self.round_index[rows] = round_index
        self.move_count[rows] = 0
