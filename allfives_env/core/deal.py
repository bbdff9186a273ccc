"""Deals and leaders: who holds what and who leads, round by round.

A seeded deal depends only on (match seed, round number), never on the moves
played, which is what lets duplicate evaluation replay the same deals under
every seat rotation. The leader rules are written once, as the set of seats
allowed to lead; a seeded round draws its leader uniformly from that set (the
neutral lot), and a given deal (a record, a fixed reset) is checked against it.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field

from .rules import Rules
from .scoring import RoundResult
from .stream import MASK32, Stream, deal_key
from .tiles import DOUBLE_ID, IS_DOUBLE, NUM_TILES, PIPS, TILE_TEXT, tile_from_text

#: The largest match seed: 128 bits, the range every environment's ``reset`` takes.
MAX_SEED = 2**128 - 1


def fresh_seed() -> int:
    """A match seed from the operating system's randomness, drawn from the whole range 0..MAX_SEED.

    A match's deals follow from its seed alone. A seed drawn from a small range
    (2**31, say) can be found by trying every one against the tiles a seat
    holds, and then every hidden hand is known; 2**128 seeds cannot be tried.
    """
    return secrets.randbelow(MAX_SEED + 1)


@dataclass(frozen=True)
class Deal:
    hands: tuple[tuple[int, ...], ...]
    boneyard: tuple[int, ...]  # in draw order
    leader: int

    def to_json(self) -> dict:
        return {
            "hands": [[TILE_TEXT[t] for t in hand] for hand in self.hands],
            "boneyard": [TILE_TEXT[t] for t in self.boneyard],
            "leader": self.leader,
        }


class DealError(ValueError):
    """A deal that the rules do not allow."""


def descending_double(round_index: int) -> int:
    """The double that opens a round in the descending mode: 6-6, 5-5, ... 0-0, again."""
    return DOUBLE_ID[6 - round_index % 7]


def allowed_leaders(rules: Rules, round_index: int, hands, previous: RoundResult | None) -> tuple[tuple[int, ...], int]:
    """The seats that may lead this round, and the tile the lead must be (-1: any).

    ``hands`` are tile-id sequences per seat; ``previous`` is the last round's
    result (None in round 0).
    """
    n = rules.num_players
    everyone = tuple(range(n))
    if rules.rules == "pagat":
        if previous is not None and previous.domino_seat is not None:
            return (previous.domino_seat,), -1
        return everyone, -1
    if rules.opening == "descending":
        double = descending_double(round_index)
        return tuple(s for s in everyone if double in hands[s]), double
    # fives, winners' choice
    if previous is not None and previous.winner is not None:
        if previous.domino_seat is not None:
            return (previous.domino_seat,), -1
        seats = rules.seats_of(previous.winner)
        least = min(previous.seat_pips[s] for s in seats)
        return tuple(s for s in seats if previous.seat_pips[s] == least), -1
    doubles = [t for hand in hands for t in hand if IS_DOUBLE[t]]
    if doubles:
        highest = max(doubles)
        return tuple(s for s in everyone if highest in hands[s]), highest
    pips = [sum(PIPS[t] for t in hand) for hand in hands]
    return tuple(s for s in everyone if pips[s] == max(pips)), -1


def _shuffle(stream: Stream, tiles: list[int]) -> None:
    """Fisher-Yates from the last position down: position ``i`` swaps with ``stream.below(i + 1)``.

    The stream's values are read straight from its buffer, the common case
    (no value skipped) without a call per swap: deals are on the core's hot path.
    """
    buffer = stream.buffer
    at = stream.position
    for i in range(len(tiles) - 1, 0, -1):
        bound = i + 1
        product = buffer[at] * bound if at < len(buffer) else 0
        if product & MASK32 < bound:  # a value that may be skipped, or the buffer's end: the stream decides
            stream.position = at
            j = stream.below(bound)
            buffer, at = stream.buffer, stream.position
        else:
            at += 1
            j = product >> 32
        tiles[i], tiles[j] = tiles[j], tiles[i]
    stream.position = at


def _dealt(rules: Rules, seed: int, round_index: int, previous: RoundResult | None) -> tuple[list[int], int, int]:
    """One seeded deal: the 28 tiles (the hands seat by seat, then the boneyard in draw order), the leader and the
    tile the lead must be (-1: any).

    Its numbers come from the stream of ``deal_key(seed, round_index)``, in
    this order: in the descending opening the opener's seat (uniform), then
    the shuffle of the tiles (the opener's double left out, then put first in
    its hand), then the lot among the seats :func:`allowed_leaders` allows.
    """
    stream = Stream(deal_key(seed, round_index))
    n, size = rules.num_players, rules.hand_size
    tiles = list(range(NUM_TILES))
    if rules.opening == "descending":
        opener = stream.below(n)
        double = descending_double(round_index)
        tiles.remove(double)
        _shuffle(stream, tiles)
        tiles.insert(opener * size, double)
    else:
        _shuffle(stream, tiles)
    leaders, lead_tile = allowed_leaders(
        rules, round_index, [tiles[s * size : (s + 1) * size] for s in range(n)], previous
    )
    return tiles, leaders[stream.below(len(leaders))], lead_tile


def seeded_deal(rules: Rules, seed: int, round_index: int, previous: RoundResult | None) -> Deal:
    """The deal of round ``round_index`` of the match with seed ``seed``: a function of the two alone (and, for the
    leader, of the last round's result)."""
    tiles, leader, _ = _dealt(rules, seed, round_index, previous)
    n, size = rules.num_players, rules.hand_size
    return Deal(tuple(tuple(tiles[s * size : (s + 1) * size]) for s in range(n)), tuple(tiles[n * size :]), leader)


def seeded_deals(
    rules: Rules, seeds: Sequence[int], round_indices: Sequence[int], previous: Sequence[RoundResult | None]
) -> list[Deal]:
    """``seeded_deal`` of each (seed, round index, previous result)."""
    return seeded_tiles(rules, seeds, round_indices, previous).deals(rules)


@dataclass
class SeededTiles:
    """Seeded deals as flat lists, for a caller that lays them out as arrays (the batched engine).

    Deal ``i`` is ``orders[28 * i : 28 * (i + 1)]``: the hands seat by seat,
    then the boneyard in draw order; ``leaders[i]`` leads, and the lead must
    be ``lead_tiles[i]`` (-1: any tile), as :func:`allowed_leaders` says.
    """

    orders: list[int] = field(default_factory=list)
    leaders: list[int] = field(default_factory=list)
    lead_tiles: list[int] = field(default_factory=list)

    def deals(self, rules: Rules) -> list[Deal]:
        """The same deals as :class:`Deal` values."""
        n, size = rules.num_players, rules.hand_size
        orders = self.orders
        return [
            Deal(
                tuple(tuple(orders[at + s * size : at + (s + 1) * size]) for s in range(n)),
                tuple(orders[at + n * size : at + NUM_TILES]),
                leader,
            )
            for at, leader in zip(range(0, len(orders), NUM_TILES), self.leaders, strict=True)
        ]


def seeded_tiles(
    rules: Rules, seeds: Sequence[int], round_indices: Sequence[int], previous: Sequence[RoundResult | None]
) -> SeededTiles:
    """The seeded deal of each (seed, round index, previous result), as flat lists."""
    out = SeededTiles()
    for seed, round_index, prev in zip(seeds, round_indices, previous, strict=True):
        tiles, leader, lead_tile = _dealt(rules, seed, round_index, prev)
        out.orders += tiles
        out.leaders.append(leader)
        out.lead_tiles.append(lead_tile)
    return out


def check_deal(rules: Rules, deal: Deal, round_index: int, previous: RoundResult | None) -> None:
    """Raise DealError unless the deal is the 28 tiles in the right sizes with an allowed leader."""
    n = rules.num_players
    if len(deal.hands) != n:
        raise DealError(f"the deal has {len(deal.hands)} hands; {rules.rules} with {n} players needs {n}")
    for seat, hand in enumerate(deal.hands):
        if len(hand) != rules.hand_size:
            raise DealError(
                f"hand {seat} has {len(hand)} tiles; {rules.rules} with {n} players deals {rules.hand_size}"
            )
    if len(deal.boneyard) != rules.boneyard_size:
        raise DealError(
            f"the boneyard has {len(deal.boneyard)} tiles; {rules.rules} with {n} players leaves {rules.boneyard_size}"
        )
    seen: set[int] = set()
    for t in [t for hand in deal.hands for t in hand] + list(deal.boneyard):
        if t in seen:
            raise DealError(f"tile {TILE_TEXT[t]} is dealt twice; a deal is the 28 tiles of a double-six set once each")
        seen.add(t)
    if isinstance(deal.leader, bool) or not isinstance(deal.leader, int) or not 0 <= deal.leader < n:
        raise DealError(f"leader {deal.leader!r} is not a seat; allowed: 0..{n - 1}")
    leaders, _ = allowed_leaders(rules, round_index, deal.hands, previous)
    if deal.leader not in leaders:
        raise DealError(f"leader {deal.leader} is not allowed by the rules here; allowed: {list(leaders)}")


def deal_from_json(data) -> Deal:
    """Read ``{"hands": [[tile text]], "boneyard": [tile text], "leader": seat}``."""
    if not isinstance(data, dict):
        raise DealError(f"a deal must be an object with hands, boneyard and leader, not {type(data).__name__}")
    for key in ("hands", "boneyard", "leader"):
        if key not in data:
            raise DealError(f"the deal has no {key!r}; it needs hands, boneyard and leader")
    hands = data["hands"]
    if not isinstance(hands, list) or not all(isinstance(h, list) for h in hands):
        raise DealError("hands must be a list of lists of tile texts such as '3-6'")
    if not isinstance(data["boneyard"], list):
        raise DealError("boneyard must be a list of tile texts such as '3-6'")
    try:
        parsed = tuple(tuple(tile_from_text(t) for t in hand) for hand in hands)
        boneyard = tuple(tile_from_text(t) for t in data["boneyard"])
    except ValueError as err:
        raise DealError(str(err)) from None
    return Deal(parsed, boneyard, data["leader"])
