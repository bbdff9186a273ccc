"""The layout: the line, the single spinner, its four arms and their ends.

Each slot (W, E, N, S) holds the value an incoming tile must match (``-1``
when that end is not open) and what the end counts towards the end total.
The spinner is tracked by ``spinner_ends``, the arms whose outer tile is the
spinner; once neither line side shows it, its branches N and S open.
An arm's tile list is never changed in place (a placement gives the arm a
new list), so a copy shares the lists and stays cheap.
"""

from __future__ import annotations

from .tiles import DOUBLE_ID, END_COUNT, IS_DOUBLE, OTHER_HALF, PIPS, SUIT_MASK, TILES, E, N, S, W


class Layout:
    __slots__ = ("values", "counts", "spinner", "spinner_ends", "played", "arms", "lead")

    def __init__(self) -> None:
        self.values = [-1, -1, -1, -1]
        self.counts = [0, 0, 0, 0]
        self.spinner = -1  # the spinner's value, -1 before any double
        self.spinner_ends = 0  # bit s set: the end at slot s is the spinner itself
        self.played = 0  # mask of tiles in the layout
        self.arms: list[list[int]] = [[], [], [], []]  # tiles placed on each arm, inner to outer
        self.lead = -1

    def copy(self) -> Layout:
        other = Layout.__new__(Layout)
        other.values = self.values[:]
        other.counts = self.counts[:]
        other.spinner = self.spinner
        other.spinner_ends = self.spinner_ends
        other.played = self.played
        other.arms = self.arms[:]  # the tile lists are shared: a placement replaces its list, never changes it
        other.lead = self.lead
        return other

    @property
    def empty(self) -> bool:
        return self.lead < 0

    @property
    def end_total(self) -> int:
        """The sum of the counts of all ends, as scored after a placement."""
        return sum(self.counts)

    def open_values(self) -> int:
        """Bit v set when some open end shows value v."""
        bits = 0
        for v in self.values:
            if v >= 0:
                bits |= 1 << v
        return bits

    def playable_mask(self) -> int:
        """Mask of all tiles that could be placed somewhere now."""
        mask = 0
        for v in self.values:
            if v >= 0:
                mask |= SUIT_MASK[v]
        return mask

    def fits(self, tile: int) -> list[int]:
        """The slots where ``tile`` can be placed (W alone for a lead)."""
        if self.lead < 0:
            return [W]
        return [slot for slot, v in enumerate(self.values) if v >= 0 and OTHER_HALF[tile][v] >= 0]

    def place(self, tile: int, slot: int) -> int:
        """Place a tile (the caller has checked that it fits); returns the new end total, which the placement scores on."""
        self.played |= 1 << tile
        if self.lead < 0:
            self._place_lead(tile)
            return PIPS[tile]
        values, counts = self.values, self.counts
        outer = OTHER_HALF[tile][values[slot]]
        counts[slot] = END_COUNT[tile][values[slot]]
        bit = 1 << slot
        if self.spinner_ends & bit:
            self.spinner_ends ^= bit
            if self.spinner_ends:  # a led spinner keeps one line side: it stays a terminal double
                counts[self.spinner_ends.bit_length() - 1] = 2 * self.spinner
            else:  # both line sides covered: the branches open and count nothing yet
                values[N] = values[S] = self.spinner
        if IS_DOUBLE[tile] and self.spinner < 0:
            self.spinner = outer
            self.spinner_ends = bit
        values[slot] = outer
        self.arms[slot] = self.arms[slot] + [tile]
        return counts[0] + counts[1] + counts[2] + counts[3]

    def _place_lead(self, tile: int) -> None:
        low, high = TILES[tile]
        self.lead = tile
        self.values[W], self.values[E] = low, high
        # A lone lead counts its pips once, a lone spinner included.
        self.counts[W], self.counts[E] = low, high
        if IS_DOUBLE[tile]:
            self.spinner = low
            self.spinner_ends = (1 << W) | (1 << E)

    # -- read-only questions for views and renderers ----------------------

    def covered_total(self, slot: int) -> int:
        """What the other ends add up to once a tile covers the open end at ``slot``.

        Covering one line side of a led spinner turns the other side into a
        terminal double (it counts both halves); covering the last side of a
        spinner opens its branches, which count nothing yet. So
        ``end_total_after(tile, slot) == covered_total(slot) + END_COUNT[tile][values[slot]]``.
        """
        counts = self.counts
        total = counts[0] + counts[1] + counts[2] + counts[3] - counts[slot]
        ends = self.spinner_ends
        rest = ends & ~(1 << slot)
        if rest and rest != ends:
            total += 2 * self.spinner - counts[rest.bit_length() - 1]
        return total

    def end_total_after(self, tile: int, slot: int) -> int:
        """The end total once ``tile`` is placed at ``slot`` (it must fit there; a lead counts its pips once)."""
        if self.lead < 0:
            return PIPS[tile]
        return self.covered_total(slot) + END_COUNT[tile][self.values[slot]]

    def branch_open(self) -> bool:
        return self.spinner >= 0 and self.values[N] >= 0

    def terminal_doubles(self) -> list[bool]:
        """Per slot (W, E, N, S): whether the open end there is a double that counts both halves.

        An arm's end is its outer tile. An arm with no tile yet ends at the
        lead (W and E) or at the spinner (N and S, which count nothing until
        a tile is placed there): a lone lead counts once, a led spinner with
        one side covered counts both halves on the other.
        """
        lead = self.lead
        if lead < 0:
            return [False, False, False, False]
        v_w, v_e, v_n, v_s = self.values
        west, east, north, south = self.arms
        led = IS_DOUBLE[lead] and self.spinner_ends != (1 << W) | (1 << E)  # the lead is an end that counts twice
        return [  # written out slot by slot: every observation asks this
            v_w >= 0 and (IS_DOUBLE[west[-1]] if west else led),
            v_e >= 0 and (IS_DOUBLE[east[-1]] if east else led),
            v_n >= 0 and bool(north) and IS_DOUBLE[north[-1]],
            v_s >= 0 and bool(south) and IS_DOUBLE[south[-1]],
        ]

    def terminal_double(self, slot: int) -> bool:
        """Whether the end at ``slot`` is a double that counts both halves (see :meth:`terminal_doubles`)."""
        return self.terminal_doubles()[slot]

    def spinner_tile(self) -> int:
        return DOUBLE_ID[self.spinner] if self.spinner >= 0 else -1
