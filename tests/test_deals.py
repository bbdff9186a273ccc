"""Seeded deals: the written-out shuffle deals exactly what the generator's own shuffle dealt."""

from __future__ import annotations

import random
import threading

import pytest

from allfives_env.core import make_rules
from allfives_env.core.deal import (
    _shuffle,
    allowed_leaders,
    descending_double,
    seeded_deal,
    seeded_deals,
    seeded_tiles,
)
from allfives_env.core.scoring import block_award, domino_award
from allfives_env.core.tiles import NUM_TILES


@pytest.mark.parametrize("length", [NUM_TILES, NUM_TILES - 1, 2, 1, 0])
def test_shuffle_matches_the_generators_own(length):
    for seed in range(3000):
        ours, theirs = list(range(length)), list(range(length))
        a, b = random.Random(f"s{seed}"), random.Random(f"s{seed}")
        _shuffle(a, ours)
        b.shuffle(theirs)
        assert ours == theirs
        assert a.random() == b.random()  # the generator is left in the same place


def reference_deal(rules, seed, round_index):
    """The deal as first written, on the generator's own shuffle (hands and boneyard; the lot follows)."""
    rng = random.Random(f"allfives/{seed}/{round_index}")
    n, size = rules.num_players, rules.hand_size
    tiles = list(range(NUM_TILES))
    if rules.opening == "descending":
        opener = rng.randrange(n)
        double = descending_double(round_index)
        tiles.remove(double)
        rng.shuffle(tiles)
        tiles.insert(opener * size, double)
    else:
        rng.shuffle(tiles)
    hands = tuple(tuple(tiles[s * size : (s + 1) * size]) for s in range(n))
    return hands, tuple(tiles[n * size :]), rng.random()


@pytest.mark.parametrize(
    "rules",
    [
        make_rules("pagat", num_players=2),
        make_rules("pagat", num_players=4),
        make_rules("fives", num_players=3),
        make_rules("fives", num_players=4, opening="descending"),
    ],
    ids=str,
)
def test_seeded_deals_are_unchanged(rules):
    for seed in range(400):
        for round_index in (0, 1, 7):
            deal = seeded_deal(rules, seed, round_index, None)
            hands, boneyard, lot = reference_deal(rules, seed, round_index)
            assert (deal.hands, deal.boneyard) == (hands, boneyard)
            leaders, _ = allowed_leaders(rules, round_index, hands, None)
            assert deal.leader == leaders[int(lot * len(leaders))]  # the lot is the generator's next random()


RULE_SETS = [
    make_rules("pagat", num_players=2),
    make_rules("pagat", num_players=3),
    make_rules("pagat", num_players=4),
    make_rules("fives", num_players=2),
    make_rules("fives", num_players=4, opening="descending"),
]


def previous_results(rules, rng):
    """A mix of last-round results (none, dominoes, blocks) with random remaining pips."""
    n = rules.num_players
    pips = [rng.randrange(0, 40) for _ in range(n)]
    return rng.choice([None, domino_award(rules, rng.randrange(n), pips), block_award(rules, pips)])


@pytest.mark.parametrize("rules", RULE_SETS, ids=str)
def test_seeded_deals_deal_what_each_seed_deals_alone(rules):
    rng = random.Random(7)
    seeds = [rng.choice([rng.randrange(10**6), rng.randrange(2**63), 0, 2**63 - 1]) for _ in range(300)]
    indices = [rng.randrange(30) for _ in seeds]
    previous = [previous_results(rules, rng) for _ in seeds]
    dealt = seeded_deals(rules, seeds, indices, previous)
    assert dealt == [seeded_deal(rules, *request) for request in zip(seeds, indices, previous, strict=True)]
    flat = seeded_tiles(rules, seeds, indices, previous)
    assert flat.deals(rules) == dealt
    assert len(flat.orders) == NUM_TILES * len(seeds) and len(flat.leaders) == len(flat.lead_tiles) == len(seeds)
    for i, (deal, seed, index, prev) in enumerate(zip(dealt, seeds, indices, previous, strict=True)):
        hands, boneyard, lot = reference_deal(rules, seed, index)
        leaders, lead_tile = allowed_leaders(rules, index, hands, prev)
        assert (deal.hands, deal.boneyard, deal.leader) == (hands, boneyard, leaders[int(lot * len(leaders))])
        assert flat.orders[NUM_TILES * i : NUM_TILES * (i + 1)] == [t for hand in hands for t in hand] + list(boneyard)
        assert (flat.leaders[i], flat.lead_tiles[i]) == (deal.leader, lead_tile)


def test_seeded_deals_in_threads_are_unchanged():
    rules = make_rules("pagat", num_players=2)
    seeds = list(range(200))
    expected = seeded_deals(rules, seeds, [1] * 200, [None] * 200)
    results = [None] * 4

    def deal(slot):
        for _ in range(20):
            results[slot] = seeded_deals(rules, seeds, [1] * 200, [None] * 200)

    threads = [threading.Thread(target=deal, args=(slot,)) for slot in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 4


def test_seeded_deals_need_one_round_and_result_per_seed():
    rules = make_rules("pagat", num_players=2)
    with pytest.raises(ValueError):
        seeded_deals(rules, [1, 2], [0], [None, None])
