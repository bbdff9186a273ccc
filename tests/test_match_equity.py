"""Match equity (agents.match_equity): the table of match chances, the rounds it is built from, and the searches
that value a round's end with it."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.match_equity import (
    MAX_TARGETS,
    NO_EQUITY,
    UNIT,
    equity_bonus,
    equity_table,
    needed_steps,
    round_results,
    win_chances,
)
from agents.registry import parse_agent_spec
from agents.rollout import WIN_BONUS
from allfives_env.core import make_rules


def test_a_race_of_single_points_is_the_binomial_race():
    """One side scores one step a round, either side alike: the chance of winning a race of coin flips."""
    table = win_chances(np.array([[UNIT, 0]]), 3 * UNIT)
    assert table[1, 1] == pytest.approx(0.5)
    assert table[1, 2] == pytest.approx(0.75)  # needs one head before two tails
    assert table[2, 1] == pytest.approx(0.25)
    assert table[1, 3] == pytest.approx(7 / 8)
    assert table[2, 3] == pytest.approx(11 / 16)  # two heads before three tails
    assert table[0, 2] == 1.0 and table[2, 0] == 0.0 and table[0, 0] == 0.5


def test_both_sides_passing_the_target_in_one_round_is_half_a_win():
    table = win_chances(np.array([[UNIT, UNIT]]), 2 * UNIT)
    assert table[1, 1] == 0.5 and table[2, 2] == 0.5
    assert table[1, 2] == 1.0 and table[2, 1] == 0.0


def test_rounds_where_nobody_scores_do_not_count():
    with_blanks = win_chances(np.array([[UNIT, 0], [0, 0], [0, 0]]), 4 * UNIT)
    np.testing.assert_allclose(with_blanks, win_chances(np.array([[UNIT, 0]]), 4 * UNIT))


def simulated_chance(results: np.ndarray, needs: tuple, matches: int, rng: np.random.Generator) -> float:
    """Matches of rounds drawn from ``results`` (its columns in a random order each), played out: the first side's
    wins, a win shared among the sides that pass the target in one round."""
    wins = 0.0
    for _ in range(matches):
        left = np.array(needs)
        while (left > 0).all():
            left -= rng.permutation(results[rng.integers(len(results))]) // UNIT
        done = left <= 0
        wins += done[0] / done.sum()
    return wins / matches


@pytest.mark.parametrize("sides", [2, 3])
def test_the_table_equals_matches_played_out_from_the_same_rounds(sides):
    rng = np.random.default_rng(5)
    results = rng.integers(0, 8, size=(40, sides)) * UNIT
    table = win_chances(results, 60)
    assert table.shape == (13,) * sides
    for needs in [(12, 12, 12), (3, 10, 7), (10, 4, 4), (6, 7, 12)]:
        needs = needs[:sides]
        assert abs(table[needs] - simulated_chance(results, needs, 4000, rng)) < 0.025


def test_three_sides_race_for_single_points():
    """Each round one side of three, any alike, scores one step: a fair race, the chances summing to one."""
    table = win_chances(np.array([[UNIT, 0, 0]]), 4 * UNIT)
    assert table[1, 1, 1] == pytest.approx(1 / 3) and table[4, 4, 4] == pytest.approx(1 / 3)
    assert table[1, 2, 2] == pytest.approx(1 - 2 * table[2, 1, 2])
    assert table[1, 2, 2] > table[1, 1, 2] > 1 / 3
    inner = table[1:, 1:, 1:]
    np.testing.assert_allclose(inner, inner.transpose(0, 2, 1), atol=1e-12)  # the two others in either order
    np.testing.assert_allclose(inner + inner.transpose(1, 2, 0) + inner.transpose(2, 0, 1), 1.0, atol=1e-12)
    assert table[0, 1, 3] == 1.0 and table[2, 0, 1] == 0.0 and table[0, 0, 2] == 0.5
    assert win_chances(np.array([[UNIT, UNIT, UNIT]]), UNIT)[1, 1, 1] == pytest.approx(1 / 3)  # all pass at once


@pytest.fixture(scope="module")
def pagat_table():
    return equity_table(make_rules("pagat", 2))


def test_the_pagat_table_is_fair_and_ordered(pagat_table):
    assert pagat_table.shape == (51, 51, 1)  # steps of 5 up to the target of 250; two sides: a last axis of one
    table = pagat_table[:, :, 0]
    inner = table[1:, 1:]
    np.testing.assert_allclose(inner + inner.T, 1.0, atol=1e-12)  # either side's chance, from its side
    assert np.all(np.diff(inner, axis=0) <= 1e-12)  # needing more never helps
    assert np.all(np.diff(inner, axis=1) >= -1e-12)
    assert 0.6 < table[40, 50] < 0.9  # 50 points ahead at the start: a clear but far from certain lead
    assert table[2, 50] > 0.99 and table[50, 2] < 0.01


def test_the_rounds_are_seeded_whole_and_scored_in_steps():
    rules = make_rules("pagat", 2)
    first = round_results(rules, rounds=600, seed=3)
    assert first.shape == (600, 2)
    np.testing.assert_array_equal(first, round_results(rules, rounds=600, seed=3))
    assert not np.array_equal(first, round_results(rules, rounds=600, seed=4))
    assert np.all(first % UNIT == 0) and np.all(first >= 0)
    assert 20 < first.mean() < 60  # a round of two-player pagat is worth some tens of points a side


def test_the_three_player_table_is_fair_and_ordered():
    table = equity_table(make_rules("fives", 3))
    assert table.shape == (31, 31, 31)  # steps of 5 up to the target of 150
    inner = table[1:, 1:, 1:]
    np.testing.assert_allclose(inner, inner.transpose(0, 2, 1), atol=1e-12)
    np.testing.assert_allclose(inner + inner.transpose(1, 2, 0) + inner.transpose(2, 0, 1), 1.0, atol=1e-9)
    assert np.all(np.diff(inner, axis=0) <= 1e-12) and np.all(np.diff(inner, axis=1) >= -1e-12)
    assert table[30, 30, 30] == pytest.approx(1 / 3)
    assert 0.4 < table[20, 30, 30] < 0.8  # 50 points ahead of both at the start
    assert table[2, 30, 30] > 0.99 and table[30, 2, 30] < 0.01


def test_no_table_where_the_model_does_not_hold():
    assert equity_table(make_rules("fives", 4, partnerships=False)) is NO_EQUITY  # four sides
    assert equity_table(make_rules("pagat", 2, target=MAX_TARGETS[2] + 5)) is NO_EQUITY
    assert equity_table(make_rules("fives", 3, target=MAX_TARGETS[3] + 5)) is NO_EQUITY
    assert equity_table(make_rules("pagat", 4, partnerships=True, target=100)).shape == (21, 21, 1)
    with pytest.raises(ValueError, match="two or three sides"):
        round_results(make_rules("fives", 4, partnerships=False))


def test_the_bonus_is_the_chance_on_the_scale_of_a_match_won(pagat_table):
    assert needed_steps(250, 240) == 2 and needed_steps(250, 241) == 2 and needed_steps(250, 250) == 0
    assert equity_bonus(pagat_table, 250, [0, 0], 0) == pytest.approx(0.0)
    ahead = equity_bonus(pagat_table, 250, [200, 100], 0)
    assert ahead == pytest.approx(WIN_BONUS * (2 * pagat_table[10, 30, 0] - 1))
    assert ahead == pytest.approx(-equity_bonus(pagat_table, 250, [200, 100], 1))
    assert equity_bonus(NO_EQUITY, 250, [200, 100], 0) == 0.0


def test_three_sides_read_the_table_from_each_sides_place():
    table = equity_table(make_rules("fives", 3))
    scores = [100, 40, 75]  # needs 10, 22 and 15 steps of the 150
    bonuses = [equity_bonus(table, 150, scores, side) for side in range(3)]
    chances = [table[10, 22, 15], table[22, 15, 10], table[15, 10, 22]]
    assert bonuses == pytest.approx([WIN_BONUS * (2 * c - 1) for c in chances])
    assert sum(chances) == pytest.approx(1.0)  # one of them wins the match
    assert bonuses[0] > bonuses[2] > bonuses[1]


def test_specs_ask_for_equity():
    assert parse_agent_spec("search:equity").equity
    assert parse_agent_spec("search:belief:equity:300").simulations == 300
    assert parse_agent_spec("search:trained:belief:net:equity").network
    assert not parse_agent_spec("search:trained:belief:net").equity
    assert make_agent("search:equity", 1).name == "search:equity"
    assert make_agent("search:belief:equity:40", 1).equity
    with pytest.raises(ValueError, match="net needs a policy"):
        parse_agent_spec("search:equity:net")
    with pytest.raises(ValueError, match="equity=1 is not allowed"):
        from agents.search import SearchAgent

        SearchAgent(equity=1)
