"""The layout's four ends as a value, and what a placement does to them (the core's ``Layout``, compiled).

An :class:`Ends` holds, per slot W, E, N, S, the value to match (-1: closed)
and what the end counts towards the end total, with the spinner's value
and ``spinner_ends`` (bit s: the end at slot s is the spinner itself). It is
an immutable value, so a look-ahead (the action features, the search's
rollout policy, the heuristic) tries a placement by making a new one: in
compiled code that costs a few registers, not a copy of the table. The
engine keeps the same four pairs in each table's record.
"""

from __future__ import annotations

from collections import namedtuple

from .jit import jit, lowest_bit
from .lookup import COUNT_ON, HIGH, LOW, OTHER, SUIT, TILE_DOUBLE, TILE_PIPS

#: values, counts: 4-tuples by slot; spinner: its value or -1; spinner_ends: a bit per slot.
Ends = namedtuple("Ends", ["values", "counts", "spinner", "spinner_ends"])


@jit(inline=True)
def put(items, index, value):
    """``items`` (a 4-tuple) with ``items[index]`` replaced."""
    return (
        value if index == 0 else items[0],
        value if index == 1 else items[1],
        value if index == 2 else items[2],
        value if index == 3 else items[3],
    )


@jit
def empty_ends():
    """No tile down: every end closed."""
    return Ends((-1, -1, -1, -1), (0, 0, 0, 0), -1, 0)


@jit(inline=True)
def lead_ends(tile):
    """The lead alone: its lower half faces W, its higher E; it counts its pips once, a lone spinner included."""
    low, high = LOW[tile], HIGH[tile]
    if TILE_DOUBLE[tile]:
        return Ends((low, high, -1, -1), (low, high, 0, 0), low, 3)
    return Ends((low, high, -1, -1), (low, high, 0, 0), -1, 0)


@jit(inline=True)
def place(ends, tile, slot):
    """The ends once ``tile`` is placed at the open end ``slot`` (after the lead; the caller knows it fits)."""
    value = ends.values[slot]
    counts = put(ends.counts, slot, COUNT_ON[tile, value])
    values = ends.values
    spinner, spinner_ends = ends.spinner, ends.spinner_ends
    bit = 1 << slot
    if spinner_ends & bit:
        spinner_ends ^= bit
        if spinner_ends:  # a led spinner keeps one line side: it stays a terminal double
            counts = put(counts, lowest_bit(spinner_ends), 2 * spinner)
        else:  # both line sides covered: the branches open and count nothing yet
            values = put(put(values, 2, spinner), 3, spinner)
    outer = OTHER[tile, value]
    if TILE_DOUBLE[tile] and spinner < 0:
        spinner, spinner_ends = outer, bit
    return Ends(put(values, slot, outer), counts, spinner, spinner_ends)


@jit(inline=True)
def placed(ends, tile, slot):
    """The ends once ``tile`` is placed at ``slot``, the lead included (an empty layout: ``slot`` is W)."""
    if ends.values[0] < 0 and ends.values[1] < 0:
        return lead_ends(tile)
    return place(ends, tile, slot)


@jit(inline=True)
def end_total(ends):
    """The sum of the counts of all ends, as scored after a placement."""
    c = ends.counts
    return c[0] + c[1] + c[2] + c[3]


@jit(inline=True)
def covered_total(ends, slot):
    """What the other ends add up to once a tile covers ``slot`` (the core's ``Layout.covered_total``)."""
    c = ends.counts
    total = c[0] + c[1] + c[2] + c[3] - c[slot]
    spinner_ends = ends.spinner_ends
    rest = spinner_ends & ~(1 << slot)
    if rest and rest != spinner_ends:
        total += 2 * ends.spinner - c[lowest_bit(rest)]
    return total


@jit(inline=True)
def open_values(ends):
    """Bit v set when some open end shows value v."""
    bits = 0
    for slot in range(4):
        v = ends.values[slot]
        if v >= 0:
            bits |= 1 << v
    return bits


@jit(inline=True)
def playable(ends):
    """The tiles that fit some open end (a mask)."""
    v = ends.values
    return SUIT[v[0] + 1] | SUIT[v[1] + 1] | SUIT[v[2] + 1] | SUIT[v[3] + 1]


@jit(inline=True)
def fits(ends, tile, slot):
    """Whether ``tile`` can be placed at ``slot``."""
    v = ends.values[slot]
    return v >= 0 and OTHER[tile, v] >= 0


@jit
def mask_pips(mask):
    """The pips of the tiles in a mask."""
    pips = 0
    while mask:
        pips += TILE_PIPS[lowest_bit(mask)]
        mask &= mask - 1
    return pips
