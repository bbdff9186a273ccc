"""Placement scores, rounding and hand awards (docs/rules.md, sections 1-3)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .rules import Rules
from .tiles import END_COUNT, NUM_TILES, NUM_VALUES


def placement_points(end_total: int) -> int:
    """What a placement scores: the end total if it is a positive multiple of 5."""
    return end_total if end_total > 0 and end_total % 5 == 0 else 0


#: No end total reaches this: four ends, none counting more than a double six (12).
END_TOTAL_LIMIT = 49
#: POINTS_FOR_TOTAL[t] is ``placement_points(t)``, as a table for loops that score thousands of candidates.
POINTS_FOR_TOTAL: tuple[int, ...] = tuple(placement_points(total) for total in range(END_TOTAL_LIMIT))
#: SCORING_TILES[v][covered]: the mask of the tiles that score when placed on an end showing ``v`` while the
#: other ends add up to ``covered`` (see ``Layout.covered_total``).
SCORING_TILES: tuple[tuple[int, ...], ...] = tuple(
    tuple(
        sum(1 << t for t in range(NUM_TILES) if END_COUNT[t][v] >= 0 and placement_points(covered + END_COUNT[t][v]))
        for covered in range(END_TOTAL_LIMIT)
    )
    for v in range(NUM_VALUES)
)


def zero_sum_gain(gains: Sequence, side: int) -> float:
    """``side``'s gain minus the mean gain of the other sides: over all sides these sum to zero.

    ``gains`` holds each side's points gained over some stretch of play; this
    is what a zero-sum points reward pays ``side`` for that stretch.
    """
    gain = gains[side]
    return gain - (sum(gains) - gain) / (len(gains) - 1)


def match_rewards(rules: Rules, winners: Sequence[int]) -> tuple[float, ...]:
    """Per side: +1 to a lone winner, -1 to every other side; 0 to all when no side or several sides won."""
    if len(winners) != 1:
        return (0.0,) * rules.num_sides
    return tuple(1.0 if side == winners[0] else -1.0 for side in range(rules.num_sides))


def round_to_five(points: int) -> int:
    """Nearest multiple of 5: a remainder of 1 or 2 rounds down, 3 or 4 up."""
    return (points + 2) // 5 * 5


@dataclass(frozen=True)
class RoundResult:
    """How a round ended and what its hand award gave each side."""

    end: str  # "domino", "block" or "target"
    winner: int | None  # the side that won the round alone
    award: int  # the award made (for a split, the total split); 0 if none
    gains: tuple  # points added to each side by the award
    split: tuple[int, ...] | None = None  # the two sides of a three-player split
    domino_seat: int | None = None
    seat_pips: tuple[int, ...] = ()  # each seat's remaining pips when the round ended


def side_pips(rules: Rules, seat_pips: list[int]) -> list[int]:
    totals = [0] * rules.num_sides
    for seat, pips in enumerate(seat_pips):
        totals[rules.side_of[seat]] += pips
    return totals


def domino_award(rules: Rules, seat: int, seat_pips: list[int]) -> RoundResult:
    """The seat placed its last tile: its side takes the opponents' pips, rounded once."""
    side_of = rules.side_of
    side = side_of[seat]
    award = round_to_five(sum([p for s, p in zip(side_of, seat_pips, strict=True) if s != side]))
    gains = tuple([award if s == side else 0 for s in range(rules.num_sides)])
    return RoundResult("domino", side, award, gains, domino_seat=seat, seat_pips=tuple(seat_pips))


def block_award(rules: Rules, seat_pips: list[int]) -> RoundResult:
    """No one can place and the boneyard is empty: the lowest remainder wins."""
    totals = side_pips(rules, seat_pips)
    low = min(totals)
    lowest = [side for side, pips in enumerate(totals) if pips == low]
    if len(lowest) == 1:
        side = lowest[0]
        opponents = sum(totals) - low
        # fives pays the difference; pagat pays the opponents' pips outright.
        award = round_to_five(opponents - low if rules.rules == "fives" else opponents)
        return RoundResult("block", side, award, _gain(rules, {side: award}), seat_pips=tuple(seat_pips))
    if rules.rules == "pagat" and rules.num_sides == 3 and len(lowest) == 2:
        third = next(side for side in range(3) if side not in lowest)
        award = round_to_five(totals[third])
        half = award // 2 if award % 2 == 0 else award / 2
        return RoundResult(
            "block",
            None,
            award,
            _gain(rules, {lowest[0]: half, lowest[1]: half}),
            split=tuple(lowest),
            seat_pips=tuple(seat_pips),
        )
    return RoundResult("block", None, 0, _gain(rules, {}), seat_pips=tuple(seat_pips))


def _gain(rules: Rules, gains: dict) -> tuple:
    return tuple(gains.get(side, 0) for side in range(rules.num_sides))
