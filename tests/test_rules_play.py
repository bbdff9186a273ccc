"""The rules played through State with fixed deals: docs/rules.md section 4 and each rule and corner it names.

Each scenario is a real round: a deal written as tile texts and the actions taken, in order.
"""

from __future__ import annotations

import random
from typing import NamedTuple

import pytest
from conftest import deal, fill_deal, fixed_state, play, play_random_round, snapshot

from allfives_env.core import (
    DRAW,
    PASS,
    Deal,
    DealError,
    IllegalActionError,
    Layout,
    RoundResult,
    State,
    allowed_leaders,
    make_rules,
    placement_points,
    tile_from_text,
)
from allfives_env.core.tiles import DOUBLE_ID, TILE_TEXT, mask_to_tiles


class Scenario(NamedTuple):
    rules: tuple  # make_rules arguments
    hands: list[str]
    boneyard: str
    leader: int
    actions: str

    def state(self, **options) -> State:
        rules, n, *rest = self.rules
        return fixed_state(make_rules(rules, n, *rest, **options), self.hands, self.boneyard, self.leader)


SCENARIOS = {
    # docs/rules.md 4.3: seat 0 goes out; seat 1 keeps 6-4 and 2-1 (13 pips).
    "pagat2_domino_13": Scenario(
        ("pagat", 2),
        ["2-3 0-5 0-6 2-6 0-2 4-4 2-2 3-3 0-1", "5-6 1-6 1-5 1-2 0-4 2-5 1-4 4-6 3-5"],
        "3-4 0-3 0-0 3-6 5-5 1-3 4-5 6-6 2-4 1-1",
        0,
        "0-6, 6-5 E, 0-2 W, 5-3 E, 2-2 W, 2-5 W, 2-3 N, 5-1 W, 2-6 S, 6-1 S, 3-3 E, 1-4 S, 1-0 W, 4-0 S, 0-5 S,"
        " draw, 3-4 E, 4-4 E",
    ),
    # docs/rules.md 4.3: seat 1 keeps only 1-2.
    "pagat2_domino_3": Scenario(
        ("pagat", 2),
        ["1-1 2-2 5-5 0-6 1-6 0-0 4-5 4-4 0-5", "4-6 1-2 1-3 5-6 3-3 3-6 1-5 2-5 1-4"],
        "2-3 0-4 3-5 3-4 6-6 0-1 0-2 2-6 0-3 2-4",
        0,
        "1-6, 6-3 E, 1-1 W, 3-3 E, draw, 3-2 E, 1-5 W, 2-2 E, 5-6 W, 6-0 W, 2-5 E, 0-0 W, 1-4 N, 5-4 E, 4-6 E, 0-5 W,"
        " 1-3 S, 4-4 N, draw, 4-0 N, 5-5 W",
    ),
    # docs/rules.md 4.3: seat 1 goes out; seat 0 keeps only 1-1.
    "pagat2_domino_2": Scenario(
        ("pagat", 2),
        ["0-1 0-3 2-2 2-4 1-5 5-6 2-5 1-1 0-5", "1-6 3-4 0-2 2-6 0-0 3-5 2-3 3-3 1-2"],
        "3-6 6-6 0-4 5-5 4-6 1-4 1-3 0-6 4-4 4-5",
        0,
        "1-5, 1-6 W, 6-5 W, 5-3 E, 5-0 W, 0-0 W, 0-1 W, 1-2 W, 2-2 W, 2-6 W, 0-3 N, 3-4 N, 4-2 N, 3-2 E, 2-5 E,"
        " 0-2 S, draw, 6-3 W, 3-3 W",
    ),
    # Seat 1 goes out with a placement that scores 20, then an award of 10.
    "pagat2_domino_scoring_last_tile": Scenario(
        ("pagat", 2),
        ["0-5 3-4 2-6 2-3 1-1 6-6 4-5 1-4 1-6", "0-3 3-3 3-5 1-3 5-5 0-0 2-2 1-2 0-4"],
        "2-4 4-4 0-1 3-6 5-6 0-6 1-5 2-5 4-6 0-2",
        1,
        "1-2, 1-1 W, 2-2 E, 1-6 W, 1-3 N, 3-4 N, 4-0 N, 6-2 W, 0-3 N, 2-3 W, 3-5 N, 5-0 N, 0-0 N, 1-4 S, 3-3 W,"
        " 4-5 S, 5-5 S",
    ),
    # Seat 0 goes out with a placement that scores 20 (5 -> 25), then an award of 20; seat 1 never passes 15.
    "pagat2_domino_last_tile_scores": Scenario(
        ("pagat", 2),
        ["4-5 3-4 0-5 4-4 3-3 1-2 3-5 3-6 1-4", "6-6 1-1 2-4 2-6 0-6 2-5 4-6 5-6 1-5"],
        "1-3 0-2 5-5 2-2 1-6 0-4 0-0 0-1 2-3 0-3",
        0,
        "3-3, draw, 3-1 W, 3-5 E, 5-2 E, 2-1 E, 1-1 W, 1-4 W, 1-5 E, 4-4 W, 5-6 E, 3-4 S, 6-0 E, 3-6 N, 6-4 N, 4-5 N,"
        " 4-2 S, 0-5 E",
    ),
    # docs/rules.md 4.4: blocked with remainders 2, 14, 2.
    "pagat3_split": Scenario(
        ("pagat", 3),
        ["4-4 0-5 5-5 4-5 0-4 2-5 1-5", "0-3 0-0 0-6 3-3 0-1 1-3 2-2", "5-6 1-6 1-1 1-4 3-6 4-6 6-6"],
        "1-2 2-6 2-4 2-3 3-5 0-2 3-4",
        0,
        "0-4, 0-3 W, 3-6 W, 4-5 E, 6-0 W, 5-6 E, 0-5 W, draw, draw, 6-2 E, draw, 2-4 E, 5-5 W, draw, draw, 5-3 W,"
        " 4-1 E, 5-2 S, 3-1 W, 1-6 W, 1-5 E, 2-3 S, 6-6 W, draw, draw, 3-4 S, pass, 6-4 W, 4-4 S",
    ),
    # docs/rules.md 4.5: blocked with remainders 12, 10, 4.
    "fives3_block_difference": Scenario(
        ("fives", 3),
        [
            "3-3 4-4 2-6 4-6 0-1 0-0 1-2 2-5 1-6",
            "0-3 3-5 5-6 2-2 0-5 3-4 3-6 4-5 1-1",
            "1-4 1-3 0-2 6-6 2-3 5-5 0-6 2-4 0-4",
        ],
        "1-5",
        2,
        "6-6, 6-1 W, 6-5 E, 6-0 S, 0-1 S, 6-3 N, 1-4 S, 4-4 S, 4-3 S, 3-2 S, 5-2 E, 2-2 S, 2-4 E, 4-6 E, 3-0 N,"
        " 0-4 N, 1-2 W, 4-5 N, 5-5 N, 2-6 W, 5-0 N, 0-2 N, draw",
    ),
    "pagat2_block_unique": Scenario(
        ("pagat", 2),
        ["0-1 4-5 3-4 5-5 1-4 5-6 1-6 0-5 2-3", "3-5 2-5 3-3 1-3 1-2 4-6 0-4 0-3 0-2"],
        "2-4 1-1 0-0 3-6 1-5 4-4 0-6 2-6 6-6 2-2",
        1,
        "0-2, 0-1 W, 2-1 E, 1-4 W, 1-3 E, 3-2 E, 2-5 E, 5-0 E, 0-3 E, 4-5 W, 3-3 E, 3-4 E, 5-3 W, draw, 4-2 E, draw,"
        " draw, draw, 3-6 S, 6-5 S, draw, 5-1 S, 1-6 S, 6-4 S, draw, 4-4 S, 4-0 S, draw, 0-6 S, draw, 6-2 S, draw,"
        " draw, 2-2 S",
    ),
    "pagat2_block_tie": Scenario(
        ("pagat", 2),
        ["1-5 0-4 2-2 2-3 6-6 0-6 1-2 3-6 0-3", "2-6 0-1 1-4 3-4 0-2 4-5 1-6 5-5 5-6"],
        "0-5 3-3 0-0 1-3 1-1 3-5 4-4 2-4 4-6 2-5",
        0,
        "0-6, 0-2 W, 2-1 W, 1-6 W, 6-3 W, 6-5 E, 5-1 E, 1-4 E, 3-2 W, 2-6 W, 4-0 E, 0-1 E, 6-6 W, draw, draw, draw,"
        " draw, 1-3 E, 3-0 E, 0-0 E, draw, draw, draw, draw, draw, 6-4 W, 4-5 W, 5-3 W, 3-3 W, draw, pass, 0-5 E,"
        " 5-2 E, 3-4 W, 4-2 W, pass, 2-2 E",
    ),
    "pagat3_block_unique": Scenario(
        ("pagat", 3),
        ["3-4 0-5 2-3 0-6 5-6 3-6 4-5", "0-2 5-5 3-5 4-6 1-5 2-4 0-1", "0-0 0-4 2-2 1-2 2-6 6-6 1-6"],
        "1-1 2-5 4-4 0-3 1-3 3-3 1-4",
        1,
        "3-5, draw, draw, 5-2 E, 3-2 W, 2-4 W, 2-1 E, 4-5 W, 1-0 E, 0-0 E, 0-6 E, 5-1 W, 0-4 N, 0-5 S, 4-6 N, 6-6 N,"
        " 6-3 E, 5-5 S, 1-1 W, 6-5 N, draw, draw, 3-0 E, 1-6 W, draw, draw, draw, pass, 0-2 E, 2-6 E",
    ),
    "pagat3_all_tied": Scenario(
        ("pagat", 3),
        ["4-5 2-2 0-5 4-4 5-6 5-5 3-4", "1-2 1-6 3-3 3-6 3-5 2-5 1-1", "0-0 0-2 2-4 0-1 1-3 2-3 0-6"],
        "1-5 2-6 0-4 0-3 1-4 4-6 6-6",
        1,
        "2-5, 2-4 W, 5-6 E, 6-3 E, 3-1 E, 4-3 W, 3-5 W, 1-0 E, 5-4 W, draw, draw, draw, 0-4 E, draw, draw, 4-1 E,"
        " 4-4 W, 1-2 E, 2-0 E, 0-5 E, 5-1 E, draw, 4-6 W, draw, 6-6 W, 6-1 W, pass, pass, 1-1 E",
    ),
    # Blocked by a draw: the last draw empties the boneyard and nobody can place; no passes are asked.
    "pagat4_block_partners": Scenario(
        ("pagat", 4),
        ["3-3 5-6 0-3 2-6 4-6", "0-4 0-5 2-3 3-4 0-1", "4-5 1-4 4-4 0-6 3-5", "2-4 2-5 1-3 1-5 3-6"],
        "1-2 0-2 2-2 5-5 0-0 6-6 1-1 1-6",
        3,
        "1-5, 5-6 E, 1-0 W, 6-0 E, draw, draw, 0-2 E, 2-6 E, 0-5 W, 5-4 W, 6-3 E, 3-0 E, 4-0 W, draw, draw, draw,"
        " 0-0 E, draw, draw, draw",
    ),
    "pagat4_block_tie": Scenario(
        ("pagat", 4),
        ["0-2 2-3 6-6 0-4 1-5", "2-2 0-3 2-6 0-5 1-3", "2-4 3-4 3-5 4-4 2-5", "0-6 1-2 1-1 5-5 0-0"],
        "1-6 4-5 1-4 5-6 0-1 3-6 4-6 3-3",
        3,
        "0-0, 0-4 W, 0-3 E, 4-3 W, 0-6 S, 3-2 W, 0-5 N, 5-3 N, 2-1 W, 6-6 S, 1-3 W, draw, 6-1 S, 1-1 S, 1-5 S, draw,"
        " 5-4 S, 4-4 S, draw, 4-1 S, draw, draw, 1-0 S, draw, 3-6 W, draw, 6-4 W, draw, 3-3 N, 0-2 S, 2-2 S, 2-4 S",
    ),
    "pagat4_domino": Scenario(
        ("pagat", 4),
        ["3-3 2-4 1-5 3-6 1-1", "0-1 2-6 2-5 6-6 0-3", "0-5 5-6 0-4 1-3 4-4", "3-4 3-5 0-2 2-2 4-5"],
        "4-6 2-3 1-4 5-5 0-6 0-0 1-2 1-6",
        3,
        "3-5, 3-3 W, 3-0 W, 5-0 E, 3-4 S, 3-6 N, 6-2 N, 4-4 S, 2-0 N, 4-2 S, 0-1 E, 0-4 N, 2-2 S, 1-1 E, 2-5 S, 1-3 E,"
        " 5-4 S",
    ),
    "fives2_block_award": Scenario(
        ("fives", 2),
        ["0-4 2-5 1-1 4-6 4-4 1-2 0-1", "0-2 4-5 1-6 2-3 1-5 3-3 1-3"],
        "0-5 2-6 3-6 0-6 1-4 2-4 5-5 6-6 3-4 5-6 0-3 3-5 2-2 0-0",
        0,
        "4-4, 4-5 W, 5-2 W, 2-0 W, 0-4 W, draw, draw, draw, draw, draw, 4-1 W, 1-2 W, 2-6 W, 6-4 W, draw, 4-2 W, draw,"
        " draw, draw, 4-3 E, 3-6 E, 6-6 E, 6-0 E, 0-1 E, 2-3 W, 1-1 E, 3-1 W, draw, draw, draw, draw, draw, pass,"
        " 1-6 W, 6-5 W, 5-1 W",
    ),
    "fives2_block_tie": Scenario(
        ("fives", 2),
        ["0-6 3-3 3-4 0-2 1-4 2-3 0-0", "0-5 2-6 2-4 1-1 2-2 1-2 6-6"],
        "0-4 1-5 3-5 4-5 2-5 4-4 4-6 1-6 0-3 3-6 5-6 5-5 0-1 1-3",
        1,
        "6-6, 6-0 W, 0-5 W, draw, draw, 5-1 W, 6-2 E, 2-0 E, 1-2 W, 0-4 E, 2-4 W, 4-1 W, 1-1 W, 4-3 E, draw, 3-5 E,"
        " draw, 5-4 E, draw, draw, 4-4 E, draw, 6-4 N, draw, 1-6 W, draw, draw, 6-3 S, draw, 6-5 W, 3-2 S, 2-5 S,"
        " draw, 5-5 W, draw, draw",
    ),
    "fives3_two_tied": Scenario(
        ("fives", 3),
        [
            "0-2 2-3 3-5 0-6 5-5 1-4 0-3 0-4 1-2",
            "2-2 6-6 5-6 1-3 2-6 2-5 3-6 4-4 0-1",
            "3-4 1-1 0-0 0-5 4-6 4-5 1-5 3-3 2-4",
        ],
        "1-6",
        1,
        "6-6, 6-4 E, 4-1 E, 6-2 W, 1-1 E, 6-0 N, 6-3 S, 1-5 E, 0-3 N, 3-1 N, 3-4 S, 1-2 N, 2-5 N, 4-5 S, 2-3 W, 5-6 E,"
        " 5-0 S, 5-5 N, 0-1 S, 3-3 W, 5-3 N, draw, 1-6 S",
    ),
    "fives3_domino": Scenario(
        ("fives", 3),
        [
            "3-3 1-6 0-5 3-4 0-6 1-4 0-0 5-6 1-1",
            "5-5 2-3 4-6 0-4 6-6 1-3 1-2 3-6 2-2",
            "2-5 0-1 1-5 4-5 0-3 2-4 3-5 4-4 2-6",
        ],
        "0-2",
        1,
        "6-6, 6-2 W, 6-1 E, 1-2 E, 2-5 E, 5-6 E, 6-4 S, 4-5 S, 5-0 S, 0-4 S, 4-2 S, 6-0 E, 2-3 S, 3-5 S, 0-0 E, 5-5 S,"
        " 0-3 E, 3-4 E, 2-2 W, 5-1 S, 4-1 E, 1-3 E, 1-0 S, 3-3 E, 3-6 E",
    ),
    # Four players, no boneyard: the round blocks on a placement.
    "fives4_partners_block": Scenario(
        ("fives", 4, True),
        [
            "4-5 3-4 0-5 4-4 3-3 1-2 3-5",
            "3-6 1-4 6-6 1-1 2-4 2-6 0-6",
            "2-5 4-6 5-6 1-5 1-3 0-2 5-5",
            "2-2 1-6 0-4 0-0 0-1 2-3 0-3",
        ],
        "",
        1,
        "6-6, 6-5 W, 6-1 E, 5-4 W, 6-2 S, 1-3 E, 3-0 E, 0-5 E, 6-0 N, 5-2 E, 2-2 E, 2-1 E, 4-1 W, 1-5 W, 0-1 N, 5-3 W,"
        " 1-1 E, 2-0 S, 0-0 S, 3-3 W, 3-6 W, 6-4 W, 4-0 W",
    ),
    "fives4_partners_domino": Scenario(
        ("fives", 4, True),
        [
            "3-3 2-4 1-5 3-6 1-1 0-1 2-6",
            "2-5 6-6 0-3 0-5 5-6 0-4 1-3",
            "4-4 3-4 3-5 0-2 2-2 4-5 4-6",
            "2-3 1-4 5-5 0-6 0-0 1-2 1-6",
        ],
        "",
        1,
        "6-6, 6-4 E, 6-0 W, 6-2 N, 2-5 N, 4-4 E, 5-5 N, 4-2 E, 5-0 N, 0-2 N, 2-3 E, 3-3 E, 6-5 S, 3-4 E, 2-1 N, 1-0 N,"
        " 0-3 W, 4-5 E, 0-0 N, 5-1 S, 0-4 N, 3-5 W, 1-6 S, 6-3 S, 3-1 S",
    ),
    "fives4_block_tie": Scenario(
        ("fives", 4, False),
        [
            "0-6 0-3 6-6 3-4 4-6 0-4 2-5",
            "3-5 2-3 5-5 2-2 1-6 1-3 3-6",
            "1-2 4-4 0-1 4-5 0-0 1-5 3-3",
            "5-6 1-1 1-4 2-6 0-2 2-4 0-5",
        ],
        "",
        0,
        "6-6, 6-3 W, 3-3 W, 6-5 E, 3-4 W, 6-1 S, 1-0 S, 4-1 W, 0-6 S, 1-3 W, 5-1 E, 1-1 E, 6-4 N, 3-5 W, 4-5 N, 5-0 N,"
        " 0-3 N, 3-2 N, 2-1 N, 6-2 S, 2-5 S, 5-5 S",
    ),
}


def finish(name: str, **options) -> tuple[State, RoundResult, list]:
    """Play a scenario's round to its end: the state (now in round 1), the round's result and its events."""
    state = SCENARIOS[name].state(**options)
    events = play(state, SCENARIOS[name].actions)
    assert state.round_index == 1 and len(state.past) == 1
    return state, state.past[0].result, events


def remaining(state: State, seat: int) -> list[str]:
    """A seat's hand when round 0 ended, rebuilt from the deal and the moves."""
    log = state.past[0]
    hand = set(log.deal.hands[seat])
    bone = iter(log.deal.boneyard)
    for mover, action in log.moves:
        if action == DRAW:
            drawn = next(bone)
            if mover == seat:
                hand.add(drawn)
        elif action < DRAW and mover == seat:
            hand.remove(action >> 2)
    return sorted(TILE_TEXT[t] for t in hand)


def placement_scores(state: State) -> list[int]:
    """Each side's placement points in round 0, summed from a fresh layout replaying its moves."""
    layout = Layout()
    scores = [0] * state.rules.num_sides
    for seat, action in state.past[0].moves:
        if action < DRAW:
            layout.place(action >> 2, action & 3)
            scores[state.rules.side_of[seat]] += placement_points(layout.end_total)
    return scores


# -- docs/rules.md section 4 -------------------------------------------------------------------------


def test_example_1_spinner_on_the_line():
    rules = make_rules("pagat", 2)
    state = State(rules, deals={0: fill_deal(rules, ["3-6 2-6", "6-6"], leader=0)})
    events = play(state, "3-6, 6-6 E, 6-2 E")
    assert [points for _, _, points in events] == [0, 15, 5]
    assert state.end_total == 5
    assert state.scores == [5, 15]


def test_example_2_led_spinner_and_a_branch():
    rules = make_rules("pagat", 2)
    state = State(rules, deals={0: fill_deal(rules, ["5-5 5-4", "5-0 5-6"], leader=0)})
    events = play(state, "5-5, 5-0 W, 5-4 E")
    assert [points for _, _, points in events] == [10, 10, 0]
    assert state.layout.values[2] == state.layout.values[3] == 5  # both line sides covered: branches open
    assert play(state, "5-6 N")[0][2] == 10
    assert state.scores == [10, 20]


@pytest.mark.parametrize(
    "name, loser, left, award",
    [
        ("pagat2_domino_13", 1, ["1-2", "4-6"], 15),
        ("pagat2_domino_3", 1, ["1-2"], 5),
        ("pagat2_domino_2", 0, ["1-1"], 0),
    ],
)
def test_example_3_domino_awards(name, loser, left, award):
    state, result, events = finish(name)
    winner = 1 - loser
    assert remaining(state, loser) == left
    assert remaining(state, winner) == []
    assert (result.end, result.winner, result.domino_seat, result.award) == ("domino", winner, winner, award)
    assert state.scores == [p + g for p, g in zip(placement_scores(state), result.gains, strict=True)]


def test_example_4_pagat_three_player_split():
    state, result, events = finish("pagat3_split")
    assert result.seat_pips == (2, 14, 2)
    assert (result.end, result.winner, result.split, result.award, result.gains) == (
        "block",
        None,
        (0, 2),
        15,
        (7.5, 0, 7.5),
    )
    assert placement_scores(state) == [0, 5, 30]
    assert state.scores == [7.5, 5, 37.5]  # exact halves, not rounded


def test_example_5_fives_three_player_difference():
    state, result, events = finish("fives3_block_difference")
    assert result.seat_pips == (12, 10, 4)
    assert (result.end, result.winner, result.award, result.gains) == ("block", 2, 20, (0, 0, 20))


def test_example_6_target_by_a_hand_last_tile_ends_before_the_award():
    scenario = SCENARIOS["pagat2_domino_last_tile_scores"]
    free = scenario.state()
    play(free, scenario.actions)
    assert free.scores == [45, 15] and free.past[0].result.award == 20  # 5 + 20 placed + 20 award
    state = scenario.state(target=25)
    play(state, scenario.actions)
    assert state.finished and state.winners == (0,)
    assert state.scores == [25, 15]
    assert state.hands[0] == 0
    (log,) = state.past
    assert (log.result.end, log.result.winner, log.result.award, log.result.gains) == ("target", 0, 0, (0, 0))
    assert state.legal_actions() == []


def test_same_round_without_target_pays_the_award():
    state, result, _ = finish("pagat2_domino_scoring_last_tile")
    assert state.scores == [35, 40]
    assert (result.end, result.award) == ("domino", 10)


def test_award_reaching_the_target_keeps_the_round_end():
    state = SCENARIOS["pagat2_domino_scoring_last_tile"].state(target=40)
    play(state, SCENARIOS["pagat2_domino_scoring_last_tile"].actions)
    assert state.finished and state.winners == (1,) and state.scores == [35, 40]
    assert state.past[0].result.end == "domino" and state.past[0].result.award == 10


def test_target_reached_mid_round_stops_play():
    scenario = SCENARIOS["pagat2_domino_scoring_last_tile"]
    actions = [a.strip() for a in scenario.actions.split(",")]
    state = scenario.state(target=35)  # seat 0 reaches 35 with 4-5 S, the second-to-last action
    play(state, ", ".join(actions[:-1]))
    assert state.finished and state.winners == (0,) and state.scores == [35, 10]
    assert state.past[0].result.end == "target" and state.past[0].result.gains == (0, 0)
    assert state.legal_actions() == []
    before = snapshot(state)
    with pytest.raises(IllegalActionError, match="over"):
        state.apply(state.parse_action(actions[-1]))
    assert snapshot(state) == before


def test_example_2_target_reached_on_a_branch_placement():
    rules = make_rules("pagat", 2, target=20)
    state = State(rules, deals={0: fill_deal(rules, ["5-5 5-4", "5-0 5-6"], leader=0)})
    play(state, "5-5, 5-0 W, 5-4 E, 5-6 N")
    assert state.finished and state.winners == (1,) and state.scores == [10, 20]


@pytest.mark.parametrize("scores, winners", [([195, 0, 195], (0, 2)), ([195, 0, 196], (2,))])
def test_two_sides_reaching_the_target_together(scores, winners):
    """Interpretation: a split award that brings two sides over the target; higher wins, equal share."""
    scenario = SCENARIOS["pagat3_split"]
    actions = [a.strip() for a in scenario.actions.split(",")]
    state = scenario.state()
    play(state, ", ".join(actions[:-1]))
    state.scores = list(scores)
    play(state, actions[-1])
    assert state.finished
    assert state.scores == [s + g for s, g in zip(scores, (7.5, 0, 7.5), strict=True)]
    assert state.winners == winners


# -- awards and ties played out, per rule set and player count ---------------------------------


@pytest.mark.parametrize(
    "name, pips, end, winner, award, gains",
    [
        ("pagat2_block_unique", (22, 2), "block", 1, 20, (0, 20)),
        ("pagat2_block_tie", (10, 10), "block", None, 0, (0, 0)),
        ("pagat3_block_unique", (22, 8, 4), "block", 2, 30, (0, 0, 30)),
        ("pagat3_all_tied", (14, 14, 14), "block", None, 0, (0, 0, 0)),
        ("pagat4_block_partners", (16, 12, 35, 41), "block", 0, 55, (55, 0)),  # 51 v 53
        ("pagat4_block_tie", (11, 8, 7, 10), "block", None, 0, (0, 0)),  # 18 v 18
        ("pagat4_domino", (6, 12, 11, 0), "domino", 1, 15, (0, 15)),  # 6 + 11; partner's 12 not counted
        ("fives2_block_award", (25, 11), "block", 1, 15, (0, 15)),  # 25 - 11 = 14
        ("fives2_block_tie", (9, 9), "block", None, 0, (0, 0)),
        ("fives3_two_tied", (6, 12, 6), "block", None, 0, (0, 0, 0)),  # no split in fives
        ("fives3_domino", (2, 0, 8), "domino", 1, 10, (0, 10, 0)),
        ("fives4_partners_block", (15, 6, 10, 5), "block", 1, 15, (0, 15)),  # 25 - 11 = 14
        ("fives4_partners_domino", (2, 0, 4, 5), "domino", 1, 5, (0, 5)),  # 2 + 4; partner's 5 not counted
        ("fives4_block_tie", (4, 4, 8, 8), "block", None, 0, (0, 0, 0, 0)),
    ],
)
def test_round_awards(name, pips, end, winner, award, gains):
    state, result, events = finish(name)
    assert result.seat_pips == pips
    assert (result.end, result.winner, result.award, result.gains, result.split) == (end, winner, award, gains, None)
    assert state.scores == [p + g for p, g in zip(placement_scores(state), gains, strict=True)]
    if end == "block":
        assert sum(pips) % 2 == 0  # docs/rules.md: a real blocked round leaves an even pip total


# -- the end of a round ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["pagat4_block_partners", "pagat3_block_unique", "fives4_partners_block", "fives3_block_difference"]
)
def test_block_ends_the_round_at_once(name):
    """The round ends on the action that blocks it; nobody is asked to pass."""
    scenario = SCENARIOS[name]
    actions = [a.strip() for a in scenario.actions.split(",")]
    state = scenario.state()
    play(state, ", ".join(actions[:-1]))
    assert state.round_index == 0
    play(state, actions[-1])
    assert state.round_index == 1 and state.past[0].result.end == "block"
    log = state.past[0]
    assert len(log.moves) == len(actions)
    held = [t for h in log.deal.hands for t in h] + list(log.deal.boneyard)
    assert len(held) == 28


def test_blocked_by_a_draw_ends_without_passes():
    state, result, _ = finish("pagat4_block_partners")
    assert [a for _, a in state.past[0].moves[-3:]] == [DRAW, DRAW, DRAW]
    assert PASS not in [a for _, a in state.past[0].moves]


# -- draw, forced play, must play, pass ---------------------------------------------------------


def test_forced_play_of_a_drawn_tile():
    scenario = SCENARIOS["pagat2_domino_13"]
    state = scenario.state()
    play(state, "0-6, 6-5 E, 0-2 W, 5-3 E, 2-2 W, 2-5 W, 2-3 N, 5-1 W, 2-6 S, 6-1 S, 3-3 E, 1-4 S, 1-0 W, 4-0 S, 0-5 S")
    assert state.legal_actions() == [DRAW]
    seat = state.to_act
    state.apply(DRAW)
    drawn = tile_from_text("3-4")
    assert state.drawn == drawn and state.to_act == seat
    expected = sorted(drawn * 4 + slot for slot in state.layout.fits(drawn))
    assert expected and state.legal_actions() == expected
    for other in mask_to_tiles(state.hands[seat] & ~(1 << drawn)):
        for slot in range(4):
            before = snapshot(state)
            with pytest.raises(IllegalActionError):
                state.apply(other * 4 + slot)
            assert snapshot(state) == before
    for action in (DRAW, PASS):
        with pytest.raises(IllegalActionError):
            state.apply(action)
    state.apply(expected[0])
    assert state.drawn == -1 and state.to_act != seat


def test_drawing_an_unplayable_tile_draws_again():
    state = SCENARIOS["pagat2_block_tie"].state()
    play(state, "0-6, 0-2 W, 2-1 W, 1-6 W, 6-3 W, 6-5 E, 5-1 E, 1-4 E, 3-2 W, 2-6 W, 4-0 E, 0-1 E, 6-6 W")
    seat = state.to_act
    for _ in range(4):
        assert state.legal_actions() == [DRAW]
        state.apply(DRAW)
        assert state.to_act == seat
    assert state.drawn == tile_from_text("1-3")
    assert state.hands[seat].bit_count() == 3 + 4  # three left after six placements, four drawn


def test_must_play_when_a_placement_exists():
    rules = make_rules("pagat", 2)
    state = State(rules, deals={0: fill_deal(rules, ["5-5", "5-0"], leader=0)})
    play(state, "5-5")
    assert state.boneyard_left == 10
    assert DRAW not in state.legal_actions() and PASS not in state.legal_actions()
    before = snapshot(state)
    with pytest.raises(IllegalActionError, match="legal actions"):
        state.apply(DRAW)
    assert snapshot(state) == before


def test_pass_only_on_an_empty_boneyard():
    scenario = SCENARIOS["pagat2_block_tie"]
    state = scenario.state()
    for text in [a.strip() for a in scenario.actions.split(",")]:
        legal = state.legal_actions()
        if PASS in legal:
            assert legal == [PASS] and state.boneyard_left == 0
        if DRAW in legal:
            assert legal == [DRAW] and state.boneyard_left > 0
        if text == "pass":
            assert legal == [PASS]
        play(state, text)
    assert [a for _, a in state.past[0].moves].count(PASS) == 2


# -- illegal actions ---------------------------------------------------------------------------


@pytest.mark.parametrize("prefix", [0, 1, 5, 15, 16])
def test_illegal_action_names_it_and_leaves_the_state(prefix):
    scenario = SCENARIOS["pagat2_domino_13"]
    state = scenario.state()
    play(state, ", ".join(a.strip() for a in scenario.actions.split(",")[:prefix]))
    legal = state.legal_actions()
    for bad in [a for a in (DRAW, PASS, 27 * 4 + 2, 999, -1, "5-5") if a not in legal]:
        before = snapshot(state)
        with pytest.raises(IllegalActionError) as err:
            state.apply(bad)
        message = str(err.value)
        assert str(bad) in message
        for action in legal:
            assert str(action) in message and state.action_text(action) in message
        assert snapshot(state) == before
        assert state.legal_actions() == legal


def test_ambiguous_bare_placement_is_refused():
    rules = make_rules("pagat", 2)
    state = State(rules, deals={0: fill_deal(rules, ["3-3", "3-5"], leader=0)})
    play(state, "3-3")
    before = snapshot(state)
    with pytest.raises(IllegalActionError, match="ambiguous"):
        state.parse_action("3-5")
    assert snapshot(state) == before
    assert state.parse_action("5-3 E") == tile_from_text("3-5") * 4 + 1


def test_bare_placement_fitting_one_end_is_read():
    rules = make_rules("pagat", 2)
    state = State(rules, deals={0: fill_deal(rules, ["3-6", "6-6"], leader=0)})
    play(state, "3-6")
    assert state.parse_action("6-6") == DOUBLE_ID[6] * 4 + 1
    assert state.parse_action("2-1") == tile_from_text("1-2") * 4 + 0  # fits nowhere: left for apply to refuse
    with pytest.raises(IllegalActionError):
        state.apply(state.parse_action("2-1"))


# -- leaders -----------------------------------------------------------------------------------


def test_pagat_first_leader_may_lead_any_tile():
    rules = make_rules("pagat", 2)
    d = fill_deal(rules, ["6-6 5-5"], leader=1)
    state = State(rules, deals={0: d})
    assert state.to_act == 1
    assert state.legal_actions() == sorted(t * 4 for t in d.hands[1])
    leaders = {State(rules, seed=seed).deal.leader for seed in range(40)}
    assert leaders == {0, 1}  # a neutral lot


def test_pagat_domino_seat_leads_next():
    for seed in range(5):
        scenario = SCENARIOS["pagat2_domino_2"]  # seat 1 goes out
        state = State(make_rules("pagat", 2), seed=seed, deals={0: deal(scenario.hands, scenario.boneyard, 0)})
        play(state, scenario.actions)
        assert state.round_index == 1 and state.deal.leader == 1
        assert state.legal_actions() == sorted(t * 4 for t in state.deal.hands[1])


def test_pagat_after_a_block_a_new_lot():
    scenario = SCENARIOS["pagat2_block_unique"]  # seat 1 wins the block
    leaders = set()
    for seed in range(40):
        state = State(make_rules("pagat", 2), seed=seed, deals={0: deal(scenario.hands, scenario.boneyard, 1)})
        play(state, scenario.actions)
        leaders.add(state.deal.leader)
    assert leaders == {0, 1}


def test_pagat_next_leader_rule_checks_fixed_deals():
    rules = make_rules("pagat", 3)
    domino = RoundResult("domino", 2, 10, (0, 0, 10), domino_seat=2, seat_pips=(6, 4, 0))
    block = RoundResult("block", 1, 10, (0, 10, 0), seat_pips=(6, 2, 4))
    hands = fill_deal(rules, [], 0).hands
    assert allowed_leaders(rules, 1, hands, domino) == ((2,), -1)
    assert allowed_leaders(rules, 1, hands, block) == ((0, 1, 2), -1)


@pytest.mark.parametrize(
    "name, leader",
    [("fives3_domino", 1), ("fives2_block_award", 1), ("fives4_partners_block", 3), ("fives4_partners_domino", 1)],
)
def test_fives_winner_leads_any_tile(name, leader):
    """winners_choice: the round's winner leads; on a partnership block, the partner with fewer pips."""
    state, _, _ = finish(name)
    assert state.deal.leader == leader and state.to_act == leader
    assert state.legal_actions() == sorted(t * 4 for t in state.deal.hands[leader])


def test_fives_partnership_block_leader_has_fewer_pips_ties_by_lot():
    rules = make_rules("fives", 4, partnerships=True)
    hands = fill_deal(rules, [], 0).hands
    block = RoundResult("block", 1, 15, (0, 15), seat_pips=(15, 6, 10, 5))
    assert allowed_leaders(rules, 1, hands, block) == ((3,), -1)
    block = RoundResult("block", 1, 15, (0, 15), seat_pips=(15, 5, 10, 5))
    assert allowed_leaders(rules, 1, hands, block) == ((1, 3), -1)
    domino = RoundResult("domino", 0, 10, (10, 0), domino_seat=2, seat_pips=(1, 4, 0, 6))
    assert allowed_leaders(rules, 1, hands, domino) == ((2,), -1)


@pytest.mark.parametrize("name", ["fives2_block_tie", "fives4_block_tie", "fives3_two_tied"])
def test_fives_after_a_tied_block_the_round_one_rule(name):
    for seed in range(5):
        scenario = SCENARIOS[name]
        rules = make_rules(*scenario.rules)
        state = State(rules, seed=seed, deals={0: deal(scenario.hands, scenario.boneyard, scenario.leader)})
        play(state, scenario.actions)
        assert state.round_index == 1
        _assert_round_one_rule(state)


def _assert_round_one_rule(state: State) -> None:
    hands = state.deal.hands
    doubles = [t for hand in hands for t in hand if t in DOUBLE_ID]
    if doubles:
        highest = max(doubles)
        assert highest in hands[state.to_act]
        assert state.legal_actions() == [highest * 4]
    else:
        pips = [state.hand_pips(s) for s in range(state.rules.num_players)]
        assert pips[state.to_act] == max(pips)
        assert state.legal_actions() == sorted(t * 4 for t in hands[state.to_act])


def test_fives_round_one_highest_double_must_be_led():
    rules = make_rules("fives", 2)
    d = fill_deal(rules, ["5-5 0-0", "4-4 3-3"], leader=0, boneyard_first="6-6")
    state = State(rules, deals={0: d})
    assert state.legal_actions() == [DOUBLE_ID[5] * 4]  # 6-6 is in the boneyard, which does not count
    with pytest.raises(DealError, match="allowed"):
        State(rules, deals={0: Deal(d.hands, d.boneyard, 1)})


def test_fives_round_one_without_doubles_highest_pips_lead_any_tile():
    rules = make_rules("fives", 2)
    hands = ["5-6 4-6 3-6 2-6 1-6 0-6 4-5", "0-1 0-2 0-3 0-4 0-5 1-2 1-3"]
    boneyard = "0-0 1-1 2-2 3-3 4-4 5-5 6-6 1-4 1-5 2-3 2-4 2-5 3-4 3-5"
    state = State(rules, deals={0: deal(hands, boneyard, 0)})
    assert state.legal_actions() == sorted(tile_from_text(t) * 4 for t in hands[0].split())
    with pytest.raises(DealError):
        State(rules, deals={0: deal(hands, boneyard, 1)})
    tied = ["0-5 4-5 0-3 1-4 0-4 3-4 2-4", "1-3 2-5 1-6 1-2 3-5 0-2 2-6"]  # 38 v 38: either may lead (a lot)
    assert allowed_leaders(rules, 0, deal(tied, "", 0).hands, None) == ((0, 1), -1)


@pytest.mark.parametrize("num_players, partnerships", [(2, False), (3, False), (4, False), (4, True)])
def test_fives_descending_over_more_than_seven_rounds(num_players, partnerships):
    rules = make_rules("fives", num_players, partnerships, target=10_000, opening="descending")
    state = State(rules, seed=num_players)
    rng = random.Random(7)
    openers = set()
    for r in range(16):
        assert state.round_index == r
        double = DOUBLE_ID[6 - r % 7]
        assert double in state.deal.hands[state.to_act]
        assert state.legal_actions() == [double * 4]
        openers.add(state.to_act)
        play_random_round(state, rng)
    assert len(openers) > 1


def test_fives_winners_choice_over_more_than_seven_rounds():
    rules = make_rules("fives", 3, target=10_000)
    state = State(rules, seed=3)
    rng = random.Random(3)
    for _ in range(12):
        previous = state.past[-1].result if state.past else None
        if previous is None or previous.winner is None:
            _assert_round_one_rule(state)
        else:
            assert state.to_act == previous.domino_seat if previous.end == "domino" else state.to_act == previous.winner
            assert len(state.legal_actions()) == state.rules.hand_size
        play_random_round(state, rng)


# -- deals -------------------------------------------------------------------------------------

DEAL_TABLE = {
    ("pagat", 2): (9, 10, 250),
    ("pagat", 3): (7, 7, 200),
    ("pagat", 4): (5, 8, 200),
    ("fives", 2): (7, 14, 150),
    ("fives", 3): (9, 1, 150),
    ("fives", 4): (7, 0, 150),
}


@pytest.mark.parametrize(
    "key, opening",
    [(key, None) for key in DEAL_TABLE] + [(key, "descending") for key in DEAL_TABLE if key[0] == "fives"],
)
def test_deal_table(key, opening):
    rules_name, n = key
    hand, bone, target = DEAL_TABLE[key]
    rules = make_rules(rules_name, n, opening=opening)
    assert (rules.hand_size, rules.boneyard_size, rules.target) == (hand, bone, target)
    for seed in range(3):
        state = State(rules, seed=seed)
        assert [len(h) for h in state.deal.hands] == [hand] * n
        assert len(state.deal.boneyard) == bone
        assert sorted([t for h in state.deal.hands for t in h] + list(state.deal.boneyard)) == list(range(28))


def test_deals_depend_on_seed_and_round_only():
    rules = make_rules("pagat", 3)
    assert State(rules, seed=11).deal == State(rules, seed=11).deal
    assert State(rules, seed=11).deal.hands != State(rules, seed=12).deal.hands


@pytest.mark.parametrize(
    "kwargs, word",
    [
        ({"rules": "dominoes"}, "rules"),
        ({"num_players": 5}, "num_players"),
        ({"num_players": True}, "num_players"),
        ({"rules": "pagat", "num_players": 4, "partnerships": False}, "partnerships"),
        ({"rules": "fives", "num_players": 3, "partnerships": True}, "partnerships"),
        ({"target": 0}, "target"),
        ({"target": "100"}, "target"),
        ({"rules": "pagat", "opening": "descending"}, "opening"),
        ({"rules": "fives", "opening": "random"}, "opening"),
    ],
)
def test_make_rules_refuses_bad_options(kwargs, word):
    with pytest.raises(ValueError, match=word):
        make_rules(**kwargs)


def test_make_rules_normalizes_whole_player_counts():
    import numpy as np

    assert make_rules("fives", 3.0).num_players == 3 and type(make_rules("fives", 3.0).num_players) is int
    assert make_rules("fives", np.int64(4)).side_of == (0, 1, 2, 3)
    with pytest.raises(ValueError, match="num_players"):
        make_rules("fives", 2.5)


def test_make_rules_defaults():
    assert make_rules("pagat", 4).partnerships is True
    assert make_rules("fives", 4).partnerships is False
    assert make_rules("fives", 2).opening == "winners_choice"
    assert make_rules("fives", 2, target=100).target == 100
    assert make_rules("pagat", 4).side_of == (0, 1, 0, 1)


@pytest.mark.parametrize("bad", ["hand size", "duplicate", "leader"])
def test_fixed_deal_is_checked(bad):
    rules = make_rules("pagat", 2)
    good = fill_deal(rules, [], 0)
    if bad == "hand size":
        d = Deal((good.hands[0][:-1], good.hands[1]), good.boneyard + good.hands[0][-1:], 0)
    elif bad == "duplicate":
        d = Deal((good.hands[0], good.hands[1][:-1] + good.hands[0][:1]), good.boneyard, 0)
    else:
        d = Deal(good.hands, good.boneyard, 2)
    with pytest.raises(DealError):
        State(rules, deals={0: d})
