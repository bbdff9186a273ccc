"""The heuristic bot: the strategy tips of the Fives rules, written as a score.

Every legal placement is scored by a sum of named terms (:data:`DEFAULT_WEIGHTS`)
and the highest score is played; draws and passes are always forced. The terms:

- ``points``: what the placement scores now; reaching the target wins outright.
- ``threat``: the next seat's (an opponent's) expected best reply on the new
  layout, over the tiles it could hold: the unseen tiles without a value it is
  known to lack, each held with probability ``hand size / candidates``.
  A reply that would reach its target counts as a win for it.
- ``block``: the chance that the next opponent holds nothing playable and must
  draw or pass.
- ``follow``: the best the own remaining hand could score on the new layout
  next turn (the opponent moves in between, so it is weighted down).
- ``versatile`` / ``stuck``: keep ends that the own hand can answer: the
  number of own tiles (capped) that fit the new ends, and a penalty when none
  does (a draw, more pips in hand).
- ``pips`` / ``double``: shed heavy tiles and doubles (doubles fit fewer ends),
  more urgently when some opponent is close to going out.
- ``partner`` / ``partner_lacks`` / ``support`` (partnerships only): the
  partner's expected best reply, the open values it is known to lack, and the
  open values it has played itself this round.
"""

from __future__ import annotations

from allfives_env.core import DRAW, PIPS, SeatView
from allfives_env.core.layout import Layout
from allfives_env.core.scoring import END_TOTAL_LIMIT, placement_points
from allfives_env.core.tiles import END_COUNT, IS_DOUBLE, SUIT_MASK, TILES, mask_to_tiles

from .base import Agent

ALL_TILES = (1 << 28) - 1
WIN = 200.0  # what reaching the target is worth, in points

# Tuned by duplicate matches against greedy (two-player pagat, 300 matches per setting).
DEFAULT_WEIGHTS: dict[str, float] = {
    "points": 1.0,
    "threat": 1.2,
    "block": 3.0,
    "follow": 0.1,
    "versatile": 0.5,
    "versatile_cap": 3.0,
    "stuck": 4.0,
    "pips": 0.1,
    "pips_urgency": 1.0,
    "double": 4.0,
    "partner": 0.3,
    "partner_lacks": 2.0,
    "support": 1.0,
}


def lacked_tiles(lacks: int) -> int:
    """Mask of the tiles showing any value in the 7-bit ``lacks`` mask."""
    mask = 0
    v = 0
    while lacks:
        if lacks & 1:
            mask |= SUIT_MASK[v]
        lacks >>= 1
        v += 1
    return mask


def candidate_pools(view: SeatView) -> list[tuple[int, float]]:
    """Per seat: (tiles it could hold, chance it holds each one), from what the view shows."""
    unseen = ALL_TILES & ~view.hand & ~view.layout.played
    pools = []
    for seat, count in enumerate(view.hand_counts):
        if seat == view.seat:
            pools.append((view.hand, 1.0))
            continue
        pool = unseen & ~lacked_tiles(view.lacks[seat])
        size = pool.bit_count()
        pools.append((pool, min(1.0, count / size) if size else 0.0))
    return pools


#: Per value and covered total (``Layout.covered_total``): (tile, its bit, points) for every tile showing that
#: value that scores there. Most totals score nothing, so a reply loop visits a tile or two, not seven.
SCORING_REPLIES = tuple(
    tuple(
        tuple(
            (t, 1 << t, placement_points(covered + END_COUNT[t][v]))
            for t in mask_to_tiles(SUIT_MASK[v])
            if placement_points(covered + END_COUNT[t][v])
        )
        for covered in range(END_TOTAL_LIMIT)
    )
    for v in range(7)
)


def best_reply(layout: Layout, tiles: int, score: float, target: float) -> list[float]:
    """The best value each tile in ``tiles`` could score on ``layout`` (target reached = WIN), positives only.

    Slot by slot, only the tiles that score on the total the other ends leave
    (the core's ``covered_total``) are tried: this runs for every candidate of
    every decision.
    """
    best: dict[int, int] = {}
    for slot, value in enumerate(layout.values):
        if value < 0 or not tiles & SUIT_MASK[value]:
            continue
        for tile, bit, points in SCORING_REPLIES[value][layout.covered_total(slot)]:
            if tiles & bit and points > best.get(tile, 0):
                best[tile] = points
    return [points + WIN if score + points >= target else points for points in best.values()]


def expected_best(values: list[float], p: float) -> float:
    """E[max] when each value is present independently with probability p (absent: 0)."""
    values.sort(reverse=True)
    expected, miss = 0.0, 1.0
    for value in values:
        expected += value * p * miss
        miss *= 1.0 - p
    return expected


def fitting(layout: Layout, tiles: int) -> int:
    """Mask of the tiles in ``tiles`` that fit some open end."""
    mask = 0
    for v in layout.values:
        if v >= 0:
            mask |= SUIT_MASK[v]
    return tiles & mask


class HeuristicAgent(Agent):
    """Scores each placement with the weighted terms above; ties go to a seeded coin."""

    name = "heuristic"

    def __init__(self, seed: int | None = None, weights: dict[str, float] | None = None) -> None:
        super().__init__(seed)
        unknown = set(weights or {}) - set(DEFAULT_WEIGHTS)
        if unknown:
            raise ValueError(f"unknown heuristic weights {sorted(unknown)}; allowed: {sorted(DEFAULT_WEIGHTS)}")
        self.weights = {**DEFAULT_WEIGHTS, **(weights or {})}

    def act(self, view: SeatView) -> int:
        legal = view.legal
        if len(legal) == 1 or legal[0] >= DRAW:
            return legal[0]
        best_score, best = None, []
        context = _Context(view)
        for action in legal:
            score = context.score(action, self.weights)
            if best_score is None or score > best_score + 1e-9:
                best_score, best = score, [action]
            elif abs(score - best_score) <= 1e-9:
                best.append(action)
        return best[0] if len(best) == 1 else self.rng.choice(best)


class _Context:
    """What every candidate's score shares: the view and the seats' candidate tiles."""

    def __init__(self, view: SeatView) -> None:
        rules = view.rules
        self.view = view
        self.pools = candidate_pools(view)
        n = rules.num_players
        self.next_seat = (view.seat + 1) % n
        self.partner = (view.seat + 2) % n if rules.partnerships else -1
        self.target = rules.target
        self.own_score = view.scores[rules.side_of[view.seat]]
        self.next_score = view.scores[rules.side_of[self.next_seat]]
        opponents = [view.hand_counts[s] for s in range(n) if rules.side_of[s] != rules.side_of[view.seat]]
        self.urgency = 1.0 / max(1, min(opponents))
        self.partner_shown = 0
        if self.partner >= 0:
            for seat, action in view.moves:
                if seat == self.partner and action < DRAW:
                    a, b = TILES[action >> 2]
                    self.partner_shown |= (1 << a) | (1 << b)

    def score(self, action: int, w: dict[str, float]) -> float:
        view = self.view
        tile = action >> 2
        layout = view.layout.copy()
        points = placement_points(layout.place(tile, action & 3))
        if self.own_score + points >= self.target:
            return WIN * 10 + points
        score = w["points"] * points
        hand = view.hand & ~(1 << tile)

        pool, p = self.pools[self.next_seat]
        replies = best_reply(layout, pool, self.next_score, self.target)
        score -= w["threat"] * expected_best(replies, p)
        playable = fitting(layout, pool).bit_count()
        score += w["block"] * (1.0 - p) ** playable

        if hand:
            own = best_reply(layout, hand, self.own_score + points, self.target)
            score += w["follow"] * (max(own) if own else 0.0)
            mine = fitting(layout, hand).bit_count()
            score += w["versatile"] * min(mine, w["versatile_cap"])
            if not mine:
                score -= w["stuck"]

        shed = 1.0 + w["pips_urgency"] * self.urgency
        score += shed * (w["pips"] * PIPS[tile] + (w["double"] if IS_DOUBLE[tile] else 0.0))

        if self.partner >= 0:
            pool, p = self.pools[self.partner]
            replies = best_reply(layout, pool, self.own_score + points, self.target)
            score += w["partner"] * expected_best(replies, p)
            open_values = layout.open_values()
            partner_lacks = view.lacks[self.partner]
            score -= w["partner_lacks"] * (open_values & partner_lacks).bit_count()
            score += w["support"] * (open_values & self.partner_shown & ~partner_lacks).bit_count()
        return score
