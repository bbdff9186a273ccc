"""Seeded deals: the counter-based stream and the shuffle, against a reference written from the spec, and test vectors.

The reference below follows the text of docs/rules.md ("Randomness") line by
line, with no shared code: the stream's 32-bit values, Lemire's bounded
numbers with their rare skip, Fisher-Yates from the last position down, the
opener of the descending opening, then the lot. The vectors pin the deals
down, so that the compiled engine and any later backend can be checked
against the same numbers.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from allfives_env.core import make_rules
from allfives_env.core.deal import _shuffle, allowed_leaders, descending_double, seeded_deal, seeded_deals, seeded_tiles
from allfives_env.core.scoring import block_award, domino_award
from allfives_env.core.stream import Stream, deal_key, next_match_seed, values
from allfives_env.core.tiles import NUM_TILES, TILE_TEXT

M64 = 2**64 - 1


def spec_mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
    return z ^ (z >> 31)


def spec_key(*words):
    key = 0
    for word in words:
        key = spec_mix(((key ^ word) + 0x9E3779B97F4A7C15) % 2**64)
    return key


def spec_values(key):
    """The stream's 32-bit values, forever."""
    m = 0
    while True:
        z = spec_mix((key + (m + 1) * 0x9E3779B97F4A7C15) % 2**64)
        yield z >> 32
        yield z % 2**32
        m += 1


def spec_below(stream, bound):
    while True:
        product = next(stream) * bound
        if product % 2**32 >= 2**32 % bound:
            return product // 2**32


def spec_deal(rules, seed, round_index, previous):
    stream = spec_values(spec_key(int.from_bytes(b"deal", "big"), seed % 2**64, seed // 2**64, round_index))
    n, size = rules.num_players, rules.hand_size
    tiles = list(range(NUM_TILES))
    opener = spec_below(stream, n) if rules.opening == "descending" else None
    if opener is not None:
        tiles.remove(descending_double(round_index))
    for i in range(len(tiles) - 1, 0, -1):
        j = spec_below(stream, i + 1)
        tiles[i], tiles[j] = tiles[j], tiles[i]
    if opener is not None:
        tiles.insert(opener * size, descending_double(round_index))
    hands = tuple(tuple(tiles[s * size : (s + 1) * size]) for s in range(n))
    leaders, _ = allowed_leaders(rules, round_index, hands, previous)
    return hands, tuple(tiles[n * size :]), leaders[spec_below(stream, len(leaders))]


RULE_SETS = [
    make_rules("pagat", num_players=2),
    make_rules("pagat", num_players=3),
    make_rules("pagat", num_players=4),
    make_rules("fives", num_players=2),
    make_rules("fives", num_players=3),
    make_rules("fives", num_players=4, opening="descending"),
    make_rules("fives", num_players=4, partnerships=True),
]


def previous_results(rules, rng):
    """A mix of last-round results (none, dominoes, blocks) with random remaining pips."""
    n = rules.num_players
    pips = [rng.randrange(0, 40) for _ in range(n)]
    return rng.choice([None, domino_award(rules, rng.randrange(n), pips), block_award(rules, pips)])


@pytest.mark.parametrize("rules", RULE_SETS, ids=str)
def test_seeded_deals_follow_the_spec(rules):
    rng = random.Random(7)
    seeds = [rng.choice([rng.randrange(10**6), rng.randrange(2**63), rng.randrange(2**128), 0, 2**128 - 1])
             for _ in range(300)]  # fmt: skip
    indices = [rng.choice([0, 1, 6, 7, rng.randrange(400)]) for _ in seeds]
    previous = [previous_results(rules, rng) for _ in seeds]
    dealt = seeded_deals(rules, seeds, indices, previous)
    flat = seeded_tiles(rules, seeds, indices, previous)
    assert flat.deals(rules) == dealt
    for i, (deal, seed, index, prev) in enumerate(zip(dealt, seeds, indices, previous, strict=True)):
        hands, boneyard, leader = spec_deal(rules, seed, index, prev)
        assert (deal.hands, deal.boneyard, deal.leader) == (hands, boneyard, leader)
        assert deal == seeded_deal(rules, seed, index, prev)
        assert flat.orders[NUM_TILES * i : NUM_TILES * (i + 1)] == [t for hand in hands for t in hand] + list(boneyard)
        assert flat.lead_tiles[i] == allowed_leaders(rules, index, hands, prev)[1]


def test_the_stream_skips_the_values_lemires_method_skips():
    stream = Stream(12345)
    stream.buffer[:4] = [0, 0, 5 << 28, 7]  # 0 * 28 mod 2**32 = 0 < 2**32 mod 28 = 4: skipped, twice
    assert stream.below(28) == (5 << 28) * 28 >> 32 and stream.position == 3
    stream = Stream(12345)
    stream.buffer[0] = 0  # a power of two skips nothing
    assert stream.below(16) == 0 and stream.position == 1


@pytest.mark.parametrize(("skip_at", "buffered"), [(0, 30), (5, 30), (25, 30), (None, 20), (19, 20)])
def test_the_shuffle_skips_like_the_stream(skip_at, buffered):
    """The shuffle reads the buffer inline; a value to skip, and the buffer's end, take the stream's own path."""
    ours, theirs = Stream(99), Stream(99)
    for stream in (ours, theirs):
        del stream.buffer[buffered:]
        if skip_at is not None:
            stream.buffer[skip_at] = 0
    tiles, expected = list(range(NUM_TILES)), list(range(NUM_TILES))
    _shuffle(ours, tiles)
    for i in range(NUM_TILES - 1, 0, -1):
        j = theirs.below(i + 1)
        expected[i], expected[j] = expected[j], expected[i]
    assert tiles == expected and ours.position == theirs.position == NUM_TILES - (skip_at is None)
    assert ours.buffer == theirs.buffer


def test_values_start_anywhere_even():
    assert values(777, 10, start=4) == values(777, 14)[4:]


def test_deals_are_uniform_enough():
    """Where the 28 tiles land over 28,000 deals: each (tile, position) count near 1,000 (a chi-square bound)."""
    rules = make_rules("fives", num_players=2)
    counts = Counter()
    for seed in range(28_000):
        deal = seeded_deal(rules, seed, 0, None)
        for position, tile in enumerate(t for hand in deal.hands for t in hand):
            counts[tile, position] += 1
    expected = 28_000 / NUM_TILES
    chi2 = sum((counts[t, p] - expected) ** 2 / expected for t in range(NUM_TILES) for p in range(14))
    assert chi2 < 500  # 392 cells (27 x 13 = 351 degrees of freedom): 500 is far in the tail


# -- test vectors (docs/rules.md lists the same) --------------------------------------------------------

VECTORS = [  # (rules, seed, round, hands, boneyard, leader), round 0 or after no result (previous None)
    (
        make_rules("pagat", num_players=2),
        0,
        0,
        ["3-5 0-0 4-6 4-5 5-6 2-3 0-2 3-4 4-4", "1-2 6-6 1-1 0-1 1-3 1-6 2-4 2-2 0-4"],
        "2-5 0-5 3-6 5-5 0-6 1-5 2-6 3-3 0-3 1-4",
        1,
    ),
    (
        make_rules("pagat", num_players=4),
        2**128 - 1,
        7,
        ["5-6 0-1 3-4 3-5 4-5", "0-2 5-5 1-2 0-0 2-2", "4-6 0-6 1-6 0-3 1-4", "0-4 4-4 2-3 1-1 0-5"],
        "1-5 2-4 2-6 3-3 1-3 2-5 3-6 6-6",
        0,
    ),
    (
        make_rules("fives", num_players=3),
        123456789,
        1,
        [
            "0-0 1-4 2-5 0-4 0-2 0-3 0-5 4-5 6-6",
            "2-3 0-6 1-6 3-4 3-5 1-5 2-6 0-1 3-6",
            "2-2 4-6 3-3 2-4 1-1 5-6 5-5 1-2 1-3",
        ],
        "4-4",
        0,
    ),
    (
        make_rules("fives", num_players=4, opening="descending"),
        42,
        3,
        [
            "3-3 2-2 2-4 3-5 2-3 4-5 5-5",
            "1-1 2-5 1-3 0-1 0-5 3-6 0-0",
            "1-6 4-6 1-2 4-4 0-6 3-4 1-4",
            "5-6 0-4 1-5 2-6 6-6 0-2 0-3",
        ],
        "",
        0,
    ),
]


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: f"{v[0].rules}-{v[0].num_players}-{v[1]}-{v[2]}")
def test_deal_vectors(vector):
    rules, seed, round_index, hands, boneyard, leader = vector
    deal = seeded_deal(rules, seed, round_index, None)
    assert [" ".join(TILE_TEXT[t] for t in hand) for hand in deal.hands] == hands
    assert (" ".join(TILE_TEXT[t] for t in deal.boneyard), deal.leader) == (boneyard, leader)


def test_stream_vectors():
    key = deal_key(0, 0)
    assert key == 0x0ADBE6E0CDD6005F
    assert values(key, 4) == [0x648473F8, 0x217C9DBC, 0xBA522D69, 0xB4CA020E]
    assert (next_match_seed(0, 1), next_match_seed(2**128 - 1, 2)) == (7009598949240164449, 5398883535977665594)


def test_next_match_seeds():
    assert next_match_seed(0, 1) == spec_key(int.from_bytes(b"match", "big"), 0, 0, 1) >> 1
    seeds = {next_match_seed(seed, k) for seed in (0, 1, 2**64, 2**128 - 1) for k in range(1, 200)}
    assert len(seeds) == 4 * 199 and all(0 <= s < 2**63 for s in seeds)


def test_keys_use_every_word_of_the_seed():
    assert len({deal_key(seed, 0) for seed in (1, 2**64, 2**64 + 1, 2**127, 2**128 - 1)}) == 5
    assert deal_key(5, 1) != deal_key(5, 2) and deal_key(2**64 * 5, 1) != deal_key(5, 2**64)


def test_the_rules_page_lists_these_vectors():
    page = (Path(__file__).resolve().parent.parent / "docs" / "rules.md").read_text()
    for _, seed, round_index, hands, boneyard, leader in VECTORS:
        shown_seed = "2^128 - 1" if seed == 2**128 - 1 else str(seed)
        row = " | ".join(
            [shown_seed, str(round_index), " / ".join(f"`{hand}`" for hand in hands), f"`{boneyard}`" if boneyard
             else "(none)", str(leader)]
        )  # fmt: skip
        assert f"| {row} |" in page, row
    assert "`0x0ADBE6E0CDD6005F`" in page and "7009598949240164449" in page and "5398883535977665594" in page
