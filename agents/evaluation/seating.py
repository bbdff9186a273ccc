"""Seeds and seating of a duplicate evaluation: which entry sits where, and which deals each match gets.

Duplicate match k has its own match seed, derived from (``seed``, k); its
deals depend only on that seed and the round number, so it is played once
under every seat rotation of the line-up and each agent meets the same deals
from every seat: the luck of the deal cancels.

The line-up is a list of agent specs; each position in it is an *entry* (the
same spec may appear twice, e.g. for a self-play check). Without
partnerships there must be one entry per seat. With four-seat partnerships
there are two forms: two entries, each playing both seats of one team (entry
0 in seats 0 and 2, entry 1 in seats 1 and 3), or four entries in seat order
(entries 0 and 2 are partners, as are 1 and 3). Call the entry in seat j of
rotation 0 the entry of slot j; in rotation r the entry of slot j sits in
seat (j + r) mod n, for r = 0 .. rotations - 1, where rotations is the
number of distinct seatings: n for one entry per seat (each entry plays
every seat once), 2 for two teams at four seats (rotation 1 swaps the teams'
seats; rotating by 2 would repeat rotation 0).

Rotations keep the line-up's cyclic order: at three seats, entry 1 always
plays right after entry 0, on the ends entry 0 leaves. At three or more
seats that order moves results by many points (an agent seated right after
a weak one plays on the ends it leaves), so ``seatings="all"`` plays every
distinct seat order instead: the rotations first, then the other orders
(6 at three seats, 24 at four without partnerships, 8 for four entries in
partnerships, where partners always sit opposite). Each entry then sits
right after each other entry (each opponent, in partnerships) equally often.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import permutations

from allfives_env.core import Rules

from ..seeding import derive_seed

#: The seatings a duplicate match is played under: the line-up's rotations, or every distinct seat order.
SEATINGS = ("rotations", "all")


def match_seed(seed: int, match: int) -> int:
    """The match seed of duplicate match ``match``: ``State(rules, seed=match_seed(seed, k))`` deals it."""
    return derive_seed(seed, "match", match)


@dataclass(frozen=True)
class Seating:
    """Where a line-up sits: ``pattern[j]`` is the entry in line-up slot j; seating r puts slot j in seat
    ``orders[r][j]`` (seating r is rotation r for the first rotations)."""

    pattern: tuple[int, ...]
    orders: tuple[tuple[int, ...], ...]

    @property
    def rotations(self) -> int:
        """How many seatings each duplicate match is played under (its games)."""
        return len(self.orders)

    @property
    def only_rotations(self) -> bool:
        """Whether the seatings are the line-up's rotations and nothing more."""
        n = len(self.pattern)
        return all(order == _rotation(r, n) for r, order in enumerate(self.orders))

    def entries_at_seats(self, rotation: int) -> tuple[int, ...]:
        """The entry in each seat under seating ``rotation``."""
        return _entries(self.pattern, self.orders[rotation])

    def seat_of_slot(self, slot: int, rotation: int) -> int:
        """The seat line-up slot ``slot`` takes under seating ``rotation``."""
        return self.orders[rotation][slot]


def seat_lineup(size: int, rules: Rules, seatings: str = "rotations") -> Seating:
    """The seating of a line-up of ``size`` entries; ValueError if the size does not fit the table."""
    if seatings not in SEATINGS:
        raise ValueError(f"seatings={seatings!r} is not allowed; allowed: {', '.join(map(repr, SEATINGS))}")
    n = rules.num_players
    if rules.partnerships:
        if size == 2:
            pattern = (0, 1, 0, 1)
        elif size == 4:
            pattern = (0, 1, 2, 3)
        else:
            raise ValueError(
                f"a line-up of {size} agents does not fit four seats in partnerships; give 2 (one per team, "
                "both partners play it) or 4 (in seat order: 0 and 2 are partners, 1 and 3 are partners)"
            )
    elif size == n:
        pattern = tuple(range(n))
    else:
        raise ValueError(
            f"a line-up of {size} agents does not fit {n} seats without partnerships; give {n} (one per seat)"
        )
    period = next(p for p in range(1, n + 1) if all(pattern[j] == pattern[(j + p) % n] for j in range(n)))
    orders = [_rotation(r, n) for r in range(period)]
    if seatings == "all":
        seen = {_entries(pattern, order) for order in orders}
        for order in permutations(range(n)):
            partners_opposite = not rules.partnerships or all(order[j + 2] == (order[j] + 2) % n for j in (0, 1))
            seats = _entries(pattern, order)
            if partners_opposite and seats not in seen:
                seen.add(seats)
                orders.append(order)
    return Seating(pattern, tuple(orders))


def _rotation(r: int, n: int) -> tuple[int, ...]:
    """The seat of each slot under rotation ``r`` of ``n`` seats."""
    return tuple((j + r) % n for j in range(n))


def _entries(pattern: tuple[int, ...], order: tuple[int, ...]) -> tuple[int, ...]:
    """The entry in each seat when slot j sits in seat ``order[j]``."""
    seats = [0] * len(pattern)
    for slot, seat in enumerate(order):
        seats[seat] = pattern[slot]
    return tuple(seats)


def entry_labels(lineup: Sequence[str]) -> list[str]:
    """Names to report entries by: the spec, with ``#2``, ``#3``... added when a spec repeats."""
    labels, seen = [], {}
    for spec in lineup:
        seen[spec] = seen.get(spec, 0) + 1
        labels.append(spec if seen[spec] == 1 else f"{spec}#{seen[spec]}")
    return labels
