"""What the other seats' plays this round say about the tiles they hold.

A seat that could have scored and did not probably could not. The search
bots deal the hidden tiles uniformly among the deals that respect the known
lacks (draws and passes); :class:`PlayModel` then weighs each deal by how
likely it makes the other seats' placements this round, under a simple model
of play: a seat picks among its legal placements with probability
proportional to ``exp(beta * points)``, ``points`` being what the placement
scores. Fitted by maximum likelihood to the free placements of the bots
(``research/fit_play_model.py``, tuning seeds), ``beta`` is 0.2 for
``search``, 0.3 for ``trained`` and 0.35 for ``heuristic`` (0.25 pooled): each
takes the most points on offer in 70-84% of the positions where some
placement scores. The default, 0.3, lies among them.

Only placements the seat chose freely count: a lead is skipped, and so is a
placement of a tile just drawn (it must be played). The seat's hand at an
earlier placement is its hand in the deal plus the tiles it placed since;
that holds only while it has not drawn since, so placements before its last
draw are skipped too. The weight of a deal is the product over the counted
placements of ``1 / Z``, ``Z`` summing ``exp(beta * points)`` over every
placement that hand allowed: the played placement's own term is the same in
every deal, so it cancels when the weights are normalised.
"""

from __future__ import annotations

import math

from allfives_env.core import DRAW, PASS, SeatView
from allfives_env.core.layout import Layout
from allfives_env.core.scoring import POINTS_FOR_TOTAL
from allfives_env.core.tiles import NUM_TILES

#: The model's points weight, among the bots' maximum-likelihood fits (see the module docstring).
DEFAULT_BETA = 0.3


class PlayModel:
    """Weights of deals of the hidden tiles, from the other seats' free placements this round.

    ``beta = 0`` reads nothing: every deal weighs 1 (the searches' default).
    """

    def __init__(self, view: SeatView, beta: float = DEFAULT_BETA) -> None:
        if isinstance(beta, bool) or not isinstance(beta, int | float) or not 0 <= beta < math.inf:
            raise ValueError(f"beta={beta!r} is not allowed; allowed: a finite number >= 0 (per point)")
        #: One entry per counted placement: (seat, tiles it placed from then on, playable mask, term of each tile).
        self.placements: list[tuple[int, int, int, list[float]]] = []
        if beta == 0:
            return
        moves = view.moves
        drew_after = [False] * len(view.hand_counts)
        placed_since = [0] * len(view.hand_counts)
        layouts = _layouts_before(moves)
        for index in range(len(moves) - 1, -1, -1):  # newest first, so "since" is known at each placement
            seat, action = moves[index]
            if action == DRAW:
                drew_after[seat] = True
                continue
            if action == PASS:
                continue
            placed_since[seat] |= 1 << (action >> 2)
            layout = layouts[index]
            just_drew = index > 0 and moves[index - 1] == (seat, DRAW)
            if seat == view.seat or drew_after[seat] or layout.empty or just_drew:
                continue
            self.placements.append((seat, placed_since[seat], layout.playable_mask(), _terms(layout, beta)))

    def weight(self, hands: list[int]) -> float:
        """The deal's weight, up to a factor shared by every deal (``hands``: each seat's tiles as a mask)."""
        weight = 1.0
        for seat, placed, playable, terms in self.placements:
            total = 0.0
            tiles = (hands[seat] | placed) & playable
            while tiles:
                low = tiles & -tiles
                tiles ^= low
                total += terms[low.bit_length() - 1]
            weight /= total
        return weight


def _layouts_before(moves: tuple[tuple[int, int], ...]) -> list[Layout]:
    """The layout before each move of the round (drawing and passing leave it as it was)."""
    layout = Layout()
    before = []
    for _, action in moves:
        before.append(layout)
        if action < DRAW:
            layout = layout.copy()
            layout.place(action >> 2, action & 3)
    return before


def _terms(layout: Layout, beta: float) -> list[float]:
    """For each tile, the sum of ``exp(beta * points)`` over the ends it fits on ``layout`` (0 if none)."""
    terms = [0.0] * NUM_TILES
    for tile in range(NUM_TILES):
        for slot in layout.fits(tile):
            terms[tile] += math.exp(beta * POINTS_FOR_TOTAL[layout.end_total_after(tile, slot)])
    return terms
