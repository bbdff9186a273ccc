"""The greedy bot: take the most points now, shed the heaviest tile on a tie.

The core answers what a placement scores: :meth:`Layout.end_total_after`
gives the end total it would leave, without copying the layout, and
:func:`placement_points` what that total scores.
"""

from __future__ import annotations

from allfives_env.core import DRAW, PIPS, SeatView
from allfives_env.core.scoring import placement_points

from .base import Agent


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
            key = (placement_points(layout.end_total_after(action >> 2, action & 3)), PIPS[action >> 2])
            if best_key is None or key > best_key:
                best_key, best = key, [action]
            elif key == best_key:
                best.append(action)
        return best[0] if len(best) == 1 else self.rng.choice(best)
