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
from .tables import DOUBLE, FIT, HIGH, KEY_WEIGHTS, LOW, OPEN_BITS, OTHER, PLAYABLE, TILE_PIPS

_EMPTY = np.zeros(0, dtype=np.intp)


class RoundEnds(NamedTuple):
    """The tables whose round ended in one apply, by how (rows are table indices)."""

    domino: np.ndarray  # the seat on these tables placed its last tile
    domino_seat: np.ndarray
    block: np.ndarray  # no one can place and the boneyard is empty
    target: np.ndarray  # a placement took its side to the target: the match is over


class Tables:
    """``num_envs`` tables of one rule set, every field an array with one row per table."""

    def __init__(self, rules: Rules, num_envs: int) -> None:
        self.rules = rules
        b, n = num_envs, rules.num_players
        self.num_envs = b
        self.rows = np.arange(b)
        self.bone_size = rules.boneyard_size
        self.side_of = np.array(rules.side_of, dtype=np.intp)
        self.next_seat = np.array([(s + 1) % n for s in range(n)], dtype=np.intp)
        self.hands = np.zeros((b, n, NUM_TILES), dtype=np.int8)
        self.hand_count = np.zeros((b, n), dtype=np.int8)
        self.boneyard = np.zeros((b, max(1, self.bone_size)), dtype=np.intp)
        self.bone_pos = np.zeros(b, dtype=np.intp)
        self.played = np.zeros((b, NUM_TILES), dtype=np.int8)
        self.values = np.full((b, NUM_SLOTS), -1, dtype=np.int8)  # the value to match per slot, -1 closed
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
        self.round_index = np.zeros(b, dtype=np.intp)
        self.leader = np.zeros(b, dtype=np.intp)
        self.move_seat = np.zeros((b, HISTORY_LENGTH), dtype=np.intp)
        self.move_action = np.zeros((b, HISTORY_LENGTH), dtype=np.intp)
        self.move_count = np.zeros(b, dtype=np.intp)

    # -- questions ------------------------------------------------------------------

    def end_keys(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Each table's end key (see :mod:`allfives_env.vector.tables`)."""
        values = self.values if rows is None else self.values[rows]
        return (values.astype(np.intp) + 1) @ KEY_WEIGHTS

    def candidates(self, rows: np.ndarray | None = None) -> np.ndarray:
        """(tables, 28): the tiles the seat to act may place if they fit: its hand, the drawn tile or the required lead."""
        if rows is None:
            rows = self.rows
            drawn, lead, required = self.drawn, self.lead, self.required_lead
        else:
            drawn, lead, required = self.drawn[rows], self.lead[rows], self.required_lead[rows]
        cand = self.hands[rows, self.to_act[rows]]
        special = np.flatnonzero((drawn >= 0) | ((lead < 0) & (required >= 0)))
        if special.size:
            tile = np.where(drawn[special] >= 0, drawn[special], required[special])
            cand[special] = 0
            cand[special, tile] = 1
        return cand

    def legal_mask(self, keys: np.ndarray | None = None, rows: np.ndarray | None = None) -> np.ndarray:
        """(tables, 114) int8: the placements that fit, else DRAW while the boneyard lasts, else PASS."""
        if keys is None:
            keys = self.end_keys(rows)
        cand = self.candidates(rows)
        b = len(cand)
        place = (FIT[keys] & cand[:, :, None]).reshape(b, NUM_TILES * NUM_SLOTS)
        lead = self.lead if rows is None else self.lead[rows]
        leads = np.flatnonzero(lead < 0)
        if leads.size:  # an empty layout: any candidate leads, at slot W
            place[leads, ::NUM_SLOTS] = cand[leads]
        mask = np.empty((b, NUM_ACTIONS), dtype=np.int8)
        mask[:, :DRAW] = place
        stuck = ~place.view(np.uint64).any(axis=1)
        left = (self.bone_pos if rows is None else self.bone_pos[rows]) < self.bone_size
        mask[:, DRAW] = stuck & left
        mask[:, PASS] = stuck & ~left
        return mask

    def seat_pips(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), n): each seat's remaining pips."""
        return self.hands[rows].astype(np.int64) @ TILE_PIPS

    def _blocked(self, rows: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """For tables whose boneyard is empty: no tile held by anyone fits an open end."""
        held = self.hands[rows].max(axis=1)
        return ~(held & PLAYABLE[keys]).view(np.uint32).any(axis=1)

    # -- the moves ---------------------------------------------------------------------

    def apply(self, rows: np.ndarray, actions: np.ndarray) -> RoundEnds:
        """Apply one legal action per listed table (the caller has checked legality)."""
        seats = self.to_act[rows]
        at = self.move_count[rows]
        self.move_seat[rows, at] = seats
        self.move_action[rows, at] = actions
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
        self.hands[rows, seats, tiles] = 0
        self.hand_count[rows, seats] -= 1
        self.drawn[rows] = -1
        self.played[rows, tiles] = 1
        leading = self.lead[rows] < 0
        if leading.any():
            self._place_lead(rows[leading], tiles[leading])
            keep = ~leading
            self._place_end(rows[keep], tiles[keep], slots[keep])
        else:
            self._place_end(rows, tiles, slots)

        totals = self.counts[rows].sum(axis=1, dtype=np.intp)
        scoring = np.flatnonzero((totals % 5 == 0) & (totals > 0))
        target = _EMPTY
        if scoring.size:
            r, sides = rows[scoring], self.side_of[seats[scoring]]
            self.scores[r, sides] += totals[scoring]
            reached = self.scores[r, sides] >= self.rules.target
            if reached.any():
                target = r[reached]
                on = np.ones(len(rows), dtype=bool)
                on[scoring[reached]] = False
                rows, seats = rows[on], seats[on]
        out = self.hand_count[rows, seats] == 0
        domino, domino_seat = rows[out], seats[out]
        if out.any():
            rows, seats = rows[~out], seats[~out]
        block = self._block_check(rows)
        if block.size:
            on = np.ones(self.num_envs, dtype=bool)
            on[block] = False
            keep = on[rows]
            rows, seats = rows[keep], seats[keep]
        self.to_act[rows] = self.next_seat[seats]
        return RoundEnds(domino, domino_seat, block, target)

    def _place_lead(self, rows: np.ndarray, tiles: np.ndarray) -> None:
        low, high = LOW[tiles], HIGH[tiles]
        self.lead[rows] = tiles
        self.values[rows, 0] = low
        self.values[rows, 1] = high
        self.counts[rows, 0] = low  # a lone lead counts its pips once, a lone spinner included
        self.counts[rows, 1] = high
        double = DOUBLE[tiles] == 1
        self.spinner[rows] = np.where(double, low, -1)
        self.spinner_ends[rows] = np.where(double, 3, 0)

    def _place_end(self, rows: np.ndarray, tiles: np.ndarray, slots: np.ndarray) -> None:
        values = self.values[rows, slots]
        outer = OTHER[tiles, values]
        ends = self.spinner_ends[rows]
        bit = 1 << slots
        hit = (ends & bit) != 0
        ends = ends ^ (bit * hit)
        spinner = self.spinner[rows]
        if hit.any():
            half = np.flatnonzero(hit & (ends != 0))  # a led spinner keeps one line side: a terminal double
            if half.size:
                other = ends[half] >> 1
                self.counts[rows[half], other] = 2 * spinner[half]
                self.end_double[rows[half], other] = 1
            both = np.flatnonzero(hit & (ends == 0))  # both line sides covered: the branches open
            if both.size:
                self.values[rows[both], 2] = spinner[both]
                self.values[rows[both], 3] = spinner[both]
        double = DOUBLE[tiles]
        first = np.flatnonzero((double == 1) & (spinner < 0))
        if first.size:
            self.spinner[rows[first]] = outer[first]
            ends[first] = bit[first]
        self.spinner_ends[rows] = ends
        self.counts[rows, slots] = outer * (1 + double)
        self.values[rows, slots] = outer
        self.end_double[rows, slots] = double
        self.arm_started[rows, slots] = 1

    def _block_check(self, rows: np.ndarray) -> np.ndarray:
        """The listed tables whose round is now blocked (boneyard empty and nothing fits)."""
        dry = rows[self.bone_pos[rows] == self.bone_size]
        if not dry.size:
            return _EMPTY
        return dry[self._blocked(dry, self.end_keys(dry))]

    def _draw(self, rows: np.ndarray, seats: np.ndarray) -> RoundEnds:
        keys = self.end_keys(rows)
        # It could not place: it holds none of the open values, and the drawn tile may show any other.
        self.lacks[rows, seats] = OPEN_BITS[keys]
        pos = self.bone_pos[rows]
        tiles = self.boneyard[rows, pos]
        self.bone_pos[rows] = pos + 1
        self.hands[rows, seats, tiles] = 1
        self.hand_count[rows, seats] += 1
        fits = PLAYABLE[keys, tiles] == 1
        self.drawn[rows[fits]] = tiles[fits]
        block = self._block_check(rows[~fits])
        return RoundEnds(_EMPTY, _EMPTY, block, _EMPTY)

    def _pass(self, rows: np.ndarray, seats: np.ndarray) -> None:
        self.lacks[rows, seats] |= OPEN_BITS[self.end_keys(rows)]
        self.to_act[rows] = self.next_seat[seats]

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
        n = self.rules.num_players
        self.hands[rows] = 0
        size = hands.shape[2]
        self.hands[np.repeat(rows, n * size), np.tile(np.repeat(np.arange(n), size), len(rows)), hands.ravel()] = 1
        self.hand_count[rows] = size
        if self.bone_size:
            self.boneyard[rows] = boneyards
        self.bone_pos[rows] = 0
        self.played[rows] = 0
        self.values[rows] = -1
        self.counts[rows] = 0
        self.end_double[rows] = 0
        self.arm_started[rows] = 0
        self.spinner[rows] = -1
        self.spinner_ends[rows] = 0
        self.lead[rows] = -1
        self.required_lead[rows] = required
        self.to_act[rows] = leaders
        self.leader[rows] = leaders
        self.drawn[rows] = -1
        self.lacks[rows] = 0
        self.round_index[rows] = round_index
        self.move_count[rows] = 0
