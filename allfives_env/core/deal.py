"""Deals and leaders: who holds what and who leads, round by round.

A seeded deal depends only on (match seed, round number), never on the moves
played, which is what lets duplicate evaluation replay the same deals under
every seat rotation. The leader rules are written once, as the set of seats
allowed to lead; a seeded round draws its leader uniformly from that set (the
neutral lot), and a given deal (a record, a fixed reset) is checked against it.
"""

from __future__ import annotations

import random
import secrets
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from hashlib import sha512

from .rules import Rules
from .scoring import RoundResult
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


#: Bits drawn per swap of the shuffle below: the bit length of (position + 1).
_SHUFFLE_BITS = tuple((i + 1).bit_length() for i in range(NUM_TILES))


def _shuffle(rng: random.Random, tiles: list[int]) -> None:
    """Fisher-Yates with rejection sampling on ``getrandbits``.

    This is the algorithm of CPython's ``Random.shuffle``, written out so that
    a seed deals the same tiles on every Python version, and about twice as
    fast (deals are on the batched engine's hot path).
    """
    getrandbits = rng.getrandbits
    for i in range(len(tiles) - 1, 0, -1):
        bits = _SHUFFLE_BITS[i]
        j = getrandbits(bits)
        while j > i:
            j = getrandbits(bits)
        tiles[i], tiles[j] = tiles[j], tiles[i]


#: (position, bits) per swap of the shuffle, in the order the swaps are made.
_SWAPS = tuple((i, _SHUFFLE_BITS[i]) for i in range(NUM_TILES - 1, 0, -1))
_LOCAL = threading.local()  # one generator per thread, reseeded for every deal


def _generator() -> random.Random:
    try:
        return _LOCAL.generator
    except AttributeError:
        _LOCAL.generator = random.Random()
        return _LOCAL.generator


def _key(seed: int, round_index: int) -> int:
    """What ``random.Random(f"allfives/{seed}/{round_index}")`` seeds itself with.

    A text seed becomes the integer of its bytes followed by their SHA-512
    (the generator's documented version-2 seeding); reseeding one generator
    with that integer costs half of building a new one, which seeds twice.
    """
    text = f"allfives/{seed}/{round_index}".encode()
    return int.from_bytes(text + sha512(text).digest(), "big")


def seeded_deal(rules: Rules, seed: int, round_index: int, previous: RoundResult | None) -> Deal:
    """Shuffle and lot from a generator keyed by (seed, round) alone."""
    return seeded_tiles(rules, (seed,), (round_index,), (previous,)).deals(rules)[0]


def seeded_deals(
    rules: Rules, seeds: Sequence[int], round_indices: Sequence[int], previous: Sequence[RoundResult | None]
) -> list[Deal]:
    """``seeded_deal`` of each (seed, round index, previous result): the same deals, made in one loop."""
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
    """The seeded deal of each (seed, round index, previous result), as flat lists.

    The deals of :func:`seeded_deal`, made in one loop on one generator per
    thread (reseeded for each deal), without a :class:`Deal` value per deal;
    the shuffle is :func:`_shuffle` written inline.
    """
    n, size = rules.num_players, rules.hand_size
    bounds = tuple((s * size, (s + 1) * size) for s in range(n))
    descending = rules.opening == "descending"
    rng = _generator()
    reseed = super(random.Random, rng).seed  # what Random.seed does with an integer (and gauss is not used)
    getrandbits, lot = rng.getrandbits, rng.random
    out = SeededTiles()
    orders, leaders_out, lead_tiles = out.orders, out.leaders, out.lead_tiles
    for seed, round_index, prev in zip(seeds, round_indices, previous, strict=True):
        reseed(_key(seed, round_index))
        tiles = list(range(NUM_TILES))
        if descending:
            opener = rng.randrange(n)
            double = descending_double(round_index)
            tiles.remove(double)
            _shuffle(rng, tiles)
            tiles.insert(opener * size, double)
        else:
            for i, bits in _SWAPS:
                j = getrandbits(bits)
                while j > i:
                    j = getrandbits(bits)
                tiles[i], tiles[j] = tiles[j], tiles[i]
        draw = lot()
        leaders, lead_tile = allowed_leaders(rules, round_index, [tiles[lo:hi] for lo, hi in bounds], prev)
        orders += tiles
        leaders_out.append(leaders[int(draw * len(leaders))])
        lead_tiles.append(lead_tile)
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
