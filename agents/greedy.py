"""The greedy bot: take the most points now, shed the heaviest tile on a tie.

It also holds :func:`total_after`, the end total a placement would leave,
computed from the layout's ends without copying it; the heuristic and the
search bot's rollouts score thousands of candidate placements with it.
"""

from __future__ import annotations

from allfives_env.core import DRAW, PIPS, SeatView
from allfives_env.core.layout import Layout
from allfives_env.core.tiles import IS_DOUBLE, OTHER_HALF

from .base import Agent


def total_after(layout: Layout, action: int) -> int:
    """The end total after placing ``action`` (a legal placement) on ``layout``.

    Mirrors :meth:`Layout.place`: the placed end counts the new outer half
    (both halves for a double); covering one line side of a led spinner makes
    the other side a terminal double that counts both halves.
    """
    tile = action >> 2
    if layout.lead < 0:
        return PIPS[tile]
    slot = action & 3
    counts = layout.counts
    outer = OTHER_HALF[tile][layout.values[slot]]
    total = counts[0] + counts[1] + counts[2] + counts[3] - counts[slot]
    total += 2 * outer if IS_DOUBLE[tile] else outer
    rest = layout.spinner_ends & ~(1 << slot)
    if rest != layout.spinner_ends and rest:
        other = rest.bit_length() - 1
        total += 2 * layout.spinner - counts[other]
    return total


def points_after(layout: Layout, action: int) -> int:
    """What the placement scores at once (0 unless the end total is a positive multiple of 5)."""
    total = total_after(layout, action)
    return total if total > 0 and total % 5 == 0 else 0


class GreedyAgent(Agent):
    """Most immediate points; ties shed the tile with the most pips, then a seeded coin."""

    name = "greedy"

    def act(self, view: SeatView) -> int:
        legal = view.legal
        if len(legal) == 1 or legal[0] >= DRAW:
            return legal[0]
        layout = view.layout
        best_key, best = None, []
        for action in legal:
            key = (points_after(layout, action), PIPS[action >> 2])
            if best_key is None or key > best_key:
                best_key, best = key, [action]
            elif key == best_key:
                best.append(action)
        return best[0] if len(best) == 1 else self.rng.choice(best)
