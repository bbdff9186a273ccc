"""Placement scores, rounding and every hand award and tie rule (docs/rules.md sections 1-4), on the award functions."""

from __future__ import annotations

import pytest

from allfives_env.core import (
    block_award,
    domino_award,
    make_rules,
    match_rewards,
    placement_points,
    round_to_five,
    zero_sum_gain,
)
from allfives_env.core.scoring import END_TOTAL_LIMIT, POINTS_FOR_TOTAL, SCORING_TILES
from allfives_env.core.tiles import TILES

PAGAT = {n: make_rules("pagat", n) for n in (2, 3, 4)}
FIVES = {n: make_rules("fives", n) for n in (2, 3, 4)}
FIVES_PARTNERS = make_rules("fives", 4, partnerships=True)


@pytest.mark.parametrize("total", range(0, 37))
def test_placement_points(total):
    expected = total if total in (5, 10, 15, 20, 25, 30, 35) else 0
    assert placement_points(total) == expected


def test_the_points_table_is_placement_points():
    assert END_TOTAL_LIMIT > 36  # the largest end total a layout can show
    assert list(POINTS_FOR_TOTAL) == [placement_points(total) for total in range(END_TOTAL_LIMIT)]


def test_scoring_tiles_are_the_tiles_whose_placement_makes_a_positive_multiple_of_five():
    for v in range(7):
        for covered in range(END_TOTAL_LIMIT):
            expected = 0
            for t, (a, b) in enumerate(TILES):
                if v in (a, b):
                    count = 2 * a if a == b else a + b - v  # the new end shows the other half; a double both
                    if (covered + count) % 5 == 0 and covered + count > 0:
                        expected |= 1 << t
            assert SCORING_TILES[v][covered] == expected, (v, covered)


@pytest.mark.parametrize(
    "gains, expected",
    [
        ((10, 0), (10, -10)),
        ((10, 5, 0), (7.5, 0, -7.5)),
        ((0, 0, 0, 20), (-20 / 3, -20 / 3, -20 / 3, 20)),
        ((7.5, 7.5, 0), (3.75, 3.75, -7.5)),
    ],
)
def test_zero_sum_gain(gains, expected):
    got = [zero_sum_gain(gains, side) for side in range(len(gains))]
    assert got == pytest.approx(expected)
    assert sum(got) == pytest.approx(0)


def test_match_rewards():
    three = make_rules("pagat", 3)
    assert match_rewards(three, (1,)) == (-1.0, 1.0, -1.0)
    assert match_rewards(three, (0, 2)) == (0.0, 0.0, 0.0)  # a shared win pays no one
    assert match_rewards(three, ()) == (0.0, 0.0, 0.0)
    assert match_rewards(make_rules("pagat", 4, partnerships=True), (0,)) == (1.0, -1.0)


@pytest.mark.parametrize(
    "raw, rounded", [(12, 10), (13, 15), (2, 0), (0, 0), (3, 5), (5, 5), (17, 15), (18, 20), (22, 20)]
)
def test_rounding_examples(raw, rounded):
    assert round_to_five(raw) == rounded


@pytest.mark.parametrize("raw", range(0, 200))
def test_rounding_remainders(raw):
    remainder = raw % 5
    expected = raw - remainder if remainder <= 2 else raw + 5 - remainder
    assert round_to_five(raw) == expected


# -- dominoes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("left, award", [(13, 15), (3, 5), (2, 0)])
def test_example_3_pagat_two_player_domino(left, award):
    result = domino_award(PAGAT[2], 0, [0, left])
    assert (result.end, result.winner, result.award, result.gains) == ("domino", 0, award, (award, 0))
    assert result.domino_seat == 0


def test_pagat_three_player_domino_takes_both_others_rounded_once():
    result = domino_award(PAGAT[3], 1, [2, 0, 2])  # 2 + 2 = 4 -> 5; rounding each hand would give 0
    assert (result.winner, result.award, result.gains) == (1, 5, (0, 5, 0))


@pytest.mark.parametrize("rules", [PAGAT[4], FIVES_PARTNERS], ids=["pagat", "fives"])
def test_partnership_domino_excludes_the_partner(rules):
    result = domino_award(rules, 3, [6, 12, 11, 0])
    assert (result.winner, result.award, result.gains) == (1, 15, (0, 15))  # 6 + 11 = 17; partner's 12 ignored


@pytest.mark.parametrize("n", [2, 3, 4])
def test_fives_domino_without_partners(n):
    pips = [0, 8, 3, 4][:n]
    result = domino_award(FIVES[n], 0, pips)
    assert result.award == round_to_five(sum(pips))
    assert result.gains == (result.award,) + (0,) * (n - 1)


# -- pagat blocks -----------------------------------------------------------------------------


def test_pagat_block_unique_low_two_players():
    result = block_award(PAGAT[2], [22, 2])
    assert (result.end, result.winner, result.award, result.gains) == (
        "block",
        1,
        20,
        (0, 20),
    )  # own pips not subtracted


def test_pagat_block_unique_low_three_players():
    result = block_award(PAGAT[3], [22, 8, 4])
    assert (result.winner, result.award, result.gains, result.split) == (2, 30, (0, 0, 30), None)


def test_pagat_block_partnerships_compare_partner_sums():
    result = block_award(PAGAT[4], [16, 12, 35, 41])  # sides 51 v 53: side 0 wins though seat 1 holds least
    assert (result.winner, result.award, result.gains) == (0, 55, (55, 0))


@pytest.mark.parametrize("rules, pips", [(PAGAT[2], [10, 10]), (PAGAT[4], [11, 8, 7, 10])], ids=["2p", "partners"])
def test_pagat_block_tie_two_sides_no_award(rules, pips):
    result = block_award(rules, pips)
    assert (result.winner, result.award, result.split) == (None, 0, None)
    assert result.gains == (0, 0)


def test_example_4_pagat_three_player_split_in_halves():
    result = block_award(PAGAT[3], [2, 14, 2])
    assert result.winner is None
    assert result.award == 15
    assert result.split == (0, 2)
    assert result.gains == (7.5, 0, 7.5)


def test_pagat_three_player_split_whole_halves():
    result = block_award(PAGAT[3], [9, 3, 3])  # 9 -> 10, 5 each
    assert result.gains == (0, 5, 5) and result.split == (1, 2) and result.award == 10


def test_pagat_three_player_split_of_five():
    result = block_award(PAGAT[3], [4, 4, 5])  # 5 -> 2.5 each
    assert result.gains == (2.5, 2.5, 0)


def test_pagat_three_player_all_tied_no_award():
    result = block_award(PAGAT[3], [14, 14, 14])
    assert (result.winner, result.award, result.gains, result.split) == (None, 0, (0, 0, 0), None)


# -- fives blocks -----------------------------------------------------------------------------


def test_example_5_fives_three_player_difference():
    result = block_award(FIVES[3], [12, 10, 4])  # round(10 + 12 - 4) = round(18) = 20
    assert (result.winner, result.award, result.gains) == (2, 20, (0, 0, 20))


def test_fives_two_player_difference():
    assert block_award(FIVES[2], [25, 11]).gains == (0, 15)  # 14 -> 15
    assert block_award(FIVES[2], [6, 4]).gains == (0, 0)  # 2 -> 0, still the winner
    assert block_award(FIVES[2], [6, 4]).winner == 1


def test_fives_four_player_difference_sums_all_opponents():
    result = block_award(FIVES[4], [3, 9, 7, 12])
    assert (result.winner, result.award) == (0, round_to_five(9 + 7 + 12 - 3))


def test_fives_partnership_difference():
    result = block_award(FIVES_PARTNERS, [15, 6, 10, 5])  # 25 v 11: 14 -> 15 to side 1
    assert (result.winner, result.award, result.gains) == (1, 15, (0, 15))


@pytest.mark.parametrize(
    "rules, pips",
    [
        (FIVES[2], [9, 9]),
        (FIVES[3], [6, 12, 6]),
        (FIVES[3], [5, 5, 5]),
        (FIVES[4], [4, 4, 8, 8]),
        (FIVES_PARTNERS, [3, 5, 5, 3]),
    ],
    ids=["2p", "3p-two-low", "3p-all", "4p", "partners"],
)
def test_fives_block_tie_no_award(rules, pips):
    result = block_award(rules, pips)
    assert (result.winner, result.award, result.split) == (None, 0, None)
    assert not any(result.gains)
