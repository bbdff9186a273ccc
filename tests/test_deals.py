"""Seeded deals: the written-out shuffle deals exactly what the generator's own shuffle dealt."""

from __future__ import annotations

import random

import pytest

from allfives_env.core import make_rules
from allfives_env.core.deal import _shuffle, descending_double, seeded_deal
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
            hands, boneyard, _lot = reference_deal(rules, seed, round_index)
            assert (deal.hands, deal.boneyard) == (hands, boneyard)
