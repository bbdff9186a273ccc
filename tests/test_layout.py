"""The layout: line ends, the single spinner and its branches, terminal doubles, end totals (docs/rules.md section 1)."""

from __future__ import annotations

import random

import pytest

from allfives_env.core import Layout, State, make_rules, placement_points, tile_from_text
from allfives_env.core.tiles import DOUBLE_ID, END_COUNT, NUM_TILES, E, N, S, W

SLOT = {"W": W, "E": E, "N": N, "S": S}


def build(*moves: str) -> Layout:
    """A layout from placements written ``"3-6"`` (the lead) then ``"6-6 E"``; each must fit."""
    layout = Layout()
    for text in moves:
        parts = text.split()
        tile = tile_from_text(parts[0])
        slot = SLOT[parts[1]] if len(parts) > 1 else W
        assert slot in layout.fits(tile), f"{text} does not fit"
        layout.place(tile, slot)
    return layout


def totals(*moves: str) -> list[int]:
    """The end total after each placement."""
    return [build(*moves[: i + 1]).end_total for i in range(len(moves))]


# -- docs/rules.md section 4, examples 1 and 2, on the bare layout -------------------------------


def test_example_1_spinner_placed_on_the_line():
    assert totals("3-6", "6-6 E", "6-2 E") == [9, 15, 5]
    assert [placement_points(t) for t in totals("3-6", "6-6 E", "6-2 E")] == [0, 15, 5]


def test_example_2_led_spinner():
    assert totals("5-5", "5-0 W", "5-4 E", "5-6 N") == [10, 10, 4, 10]


# -- the lead ---------------------------------------------------------------------------------


def test_lead_faces_low_half_west():
    layout = build("6-3")
    assert layout.values[W] == 3 and layout.values[E] == 6
    assert layout.values[N] == layout.values[S] == -1
    assert layout.end_total == 9


@pytest.mark.parametrize("lead, total", [("5-0", 5), ("4-1", 5), ("3-2", 5), ("6-4", 10), ("5-5", 10), ("0-0", 0)])
def test_lead_end_total(lead, total):
    assert build(lead).end_total == total


@pytest.mark.parametrize("v", range(7))
def test_lone_spinner_counts_once(v):
    layout = build(f"{v}-{v}")
    assert layout.end_total == 2 * v
    assert layout.spinner == v
    assert not layout.terminal_double(W) and not layout.terminal_double(E)


def test_led_spinner_with_one_side_covered_is_terminal():
    layout = build("6-6", "6-3 W")
    assert layout.end_total == 3 + 12
    assert layout.terminal_double(E) and not layout.terminal_double(W)
    layout = build("6-6", "6-3 E")
    assert layout.end_total == 12 + 3
    assert layout.terminal_double(W) and not layout.terminal_double(E)


# -- the spinner placed later, at either end ------------------------------------------------


def test_spinner_placed_later_at_east_continues_the_east_arm():
    layout = build("3-6", "6-6 E")
    assert layout.spinner == 6 and layout.terminal_double(E)
    assert layout.end_total == 3 + 12
    layout.place(tile_from_text("6-2"), E)
    assert layout.arms[E] == [DOUBLE_ID[6], tile_from_text("2-6")]
    assert layout.values[N] == layout.values[S] == 6
    assert layout.end_total == 3 + 2


def test_spinner_placed_later_at_west_continues_the_west_arm():
    layout = build("3-6", "3-3 W")
    assert layout.spinner == 3 and layout.terminal_double(W)
    assert layout.end_total == 6 + 6
    assert tile_from_text("3-4") not in [t for t in range(28) if N in layout.fits(t)]
    layout.place(tile_from_text("3-4"), W)
    assert layout.arms[W] == [DOUBLE_ID[3], tile_from_text("3-4")]
    assert layout.values[N] == layout.values[S] == 3
    assert layout.end_total == 4 + 6
    layout.place(tile_from_text("3-5"), S)
    assert layout.end_total == 4 + 6 + 5


# -- no branch before both line sides are covered -------------------------------------------


@pytest.mark.parametrize(
    "moves",
    [("5-5",), ("5-5", "5-0 W"), ("5-5", "5-0 E"), ("3-5", "5-5 E"), ("4-5", "4-4 W"), ("1-5", "5-5 E", "1-0 W")],
)
def test_no_branch_before_both_line_sides_are_covered(moves):
    layout = build(*moves)
    assert layout.values[N] == layout.values[S] == -1
    assert not layout.branch_open()
    assert all(N not in layout.fits(t) and S not in layout.fits(t) for t in range(28))


@pytest.mark.parametrize("moves", [("5-5", "5-0 W", "5-4 E"), ("3-5", "5-5 E", "5-1 E")])
def test_branches_open_once_both_line_sides_are_covered(moves):
    layout = build(*moves)
    assert layout.branch_open()
    assert layout.values[N] == layout.values[S] == 5
    assert layout.counts[N] == layout.counts[S] == 0  # unstarted branches count nothing
    five_six = tile_from_text("5-6")
    assert set(layout.fits(five_six)) >= {N, S}


def test_branches_may_start_in_either_order():
    first_s = build("5-5", "5-0 W", "5-4 E", "5-6 S", "5-3 N")
    first_n = build("5-5", "5-0 W", "5-4 E", "5-3 N", "5-6 S")
    assert first_s.values == first_n.values and first_s.end_total == first_n.end_total == 0 + 4 + 3 + 6


# -- later doubles and terminal doubles -------------------------------------------------------


def test_later_doubles_are_ordinary_and_never_branch():
    layout = build("6-6", "6-3 W", "6-2 E", "3-3 W")
    assert layout.spinner == 6
    assert layout.terminal_double(W)
    assert layout.end_total == 6 + 2  # 3-3 at W counts both halves; unstarted branches nothing
    layout.place(tile_from_text("3-1"), W)
    assert not layout.terminal_double(W)
    assert layout.end_total == 1 + 2
    assert layout.values[N] == layout.values[S] == 6  # still the spinner's branches only


def test_terminal_double_on_a_branch():
    layout = build("5-5", "5-0 W", "5-4 E", "5-6 N", "6-6 N")
    assert layout.terminal_double(N)
    assert layout.end_total == 0 + 4 + 12
    layout.place(tile_from_text("6-1"), N)
    assert layout.end_total == 0 + 4 + 1


def test_first_double_is_the_only_spinner():
    layout = build("2-3", "3-3 E", "2-2 W")
    assert layout.spinner == 3
    assert layout.end_total == 4 + 6
    layout.place(tile_from_text("2-1"), W)
    assert not layout.branch_open()  # 2-2 was no spinner; 3-3 still has one side open
    layout.place(tile_from_text("3-4"), E)
    assert layout.branch_open() and layout.values[N] == 3


# -- maximum counts ---------------------------------------------------------------------------


@pytest.mark.parametrize("spinner", [0, 1, 2])
def test_theoretical_maximum_36_scores_nothing(spinner):
    v = spinner
    layout = build(f"{v}-{v}", f"{v}-6 W", f"{v}-5 E", "6-6 W", "5-5 E", f"{v}-4 N", f"{v}-3 S", "4-4 N", "3-3 S")
    assert sorted(layout.counts) == [6, 8, 10, 12]
    assert layout.end_total == 36
    assert placement_points(36) == 0


def test_largest_scoring_total_is_35():
    layout = build("0-0", "0-6 W", "0-5 E", "6-6 W", "5-5 E", "0-4 N", "4-4 N", "0-1 S", "1-5 S")
    assert layout.end_total == 35
    assert placement_points(35) == 35


def test_copy_is_independent():
    layout = build("5-5", "5-0 W")
    other = layout.copy()
    other.place(tile_from_text("5-4"), E)
    assert layout.values[N] == -1 and layout.end_total == 10 and len(layout.arms[E]) == 0
    assert other.values[N] == 5


# -- questions about a placement before it is made ---------------------------------------------


def test_end_total_after_equals_placing_on_a_copy():
    """Every tile at every end it fits, over the layouts of random rounds (spinners led, later, covered)."""
    chooser = random.Random(3)
    checked = 0
    for seed in range(12):
        state = State(make_rules("fives" if seed % 2 else "pagat", 2 + seed % 3), seed=seed)
        while not state.finished and state.round_index == 0:
            layout = state.layout
            for tile in range(NUM_TILES):
                for slot in layout.fits(tile):
                    trial = layout.copy()
                    assert trial.place(tile, slot) == trial.end_total  # place answers the new end total
                    assert layout.end_total_after(tile, slot) == trial.end_total
                    if not layout.empty:
                        assert layout.covered_total(slot) + END_COUNT[tile][layout.values[slot]] == trial.end_total
                    checked += 1
            state.apply(chooser.choice(state.legal_actions()))
    assert checked > 2000


def test_end_total_after_at_the_spinner():
    layout = build("6-6")
    assert layout.end_total_after(tile_from_text("6-3"), W) == 3 + 12  # the other side now counts both halves
    layout.place(tile_from_text("6-3"), W)
    assert layout.covered_total(E) == 3  # covering the last side opens the branches, which count nothing yet
    assert layout.end_total_after(tile_from_text("6-2"), E) == 5
    assert build("3-6", "6-6 E").end_total_after(tile_from_text("6-1"), E) == 3 + 1
    assert Layout().end_total_after(tile_from_text("5-5"), W) == 10  # a lone lead counts once


def test_terminal_doubles_say_which_ends_count_both_halves():
    """Over random rounds: an end that shows a tile counts its value twice exactly when it is a terminal double."""
    chooser = random.Random(5)
    checked = 0
    for seed in range(10):
        state = State(make_rules("fives" if seed % 2 else "pagat", 2 + seed % 3), seed=seed)
        while not state.finished and state.round_index == 0:
            layout = state.layout
            doubles = layout.terminal_doubles()
            assert doubles == [layout.terminal_double(slot) for slot in range(4)]
            for slot in range(4):
                if layout.values[slot] < 0 or layout.empty:
                    assert not doubles[slot]
                elif layout.arms[slot] or slot in (W, E):  # the end shows a tile (an empty branch counts nothing)
                    assert layout.counts[slot] == layout.values[slot] * (2 if doubles[slot] else 1)
                    checked += 1
            state.apply(chooser.choice(state.legal_actions()))
    assert checked > 500
    assert build("5-5").terminal_doubles() == [False] * 4  # a lone lead counts once
    assert build("5-5", "5-1 E").terminal_doubles() == [True, False, False, False]
