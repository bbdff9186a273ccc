"""Per-action features: the slow reference, the two fast paths, hand-built positions, the mask, no leak."""

from __future__ import annotations

import os
import random
from fractions import Fraction
from math import floor

import numpy as np
import pytest
from test_bots import hidden_swapped
from test_views import SETTINGS, random_states

from allfives_env.core import Layout, SeatView, State, make_rules, placement_points, tile_from_text
from allfives_env.core.tiles import DRAW, IS_DOUBLE, NUM_ACTIONS, NUM_TILES, PASS, PIPS, TILES, E, N, S, W
from allfives_env.views.action_features import (
    ACTION_FEATURE_FIELDS,
    ACTION_FEATURE_OFFSETS,
    ACTION_FEATURE_SIZE,
    action_features,
    action_features_high,
    encode_seat_actions,
)
from allfives_env.views.observation import action_mask

SLOT = {"W": W, "E": E, "N": N, "S": S}
#: Random matches per setting checked against the slow reference; raise it for a long run by hand.
MATCHES = int(os.environ.get("ALLFIVES_FEATURE_MATCHES", "2"))
WIDTH = {name: width for name, width, _, _ in ACTION_FEATURE_FIELDS}


def field(row: np.ndarray, name: str):
    """A field of one row: an int for width 1, else a list."""
    start = ACTION_FEATURE_OFFSETS[name]
    values = [int(x) for x in row[start : start + WIDTH[name]]]
    return values[0] if len(values) == 1 else values


def reference_features(view: SeatView) -> np.ndarray:
    """The features written the slow, obvious way: copied layouts, every tile tried at every end."""
    rows = np.zeros((NUM_ACTIONS, ACTION_FEATURE_SIZE), dtype=np.int64)
    rules, me, layout, hand = view.rules, view.seat, view.layout, view.hand
    nxt = (me + 1) % rules.num_players
    unseen = [t for t in range(NUM_TILES) if not (hand | layout.played) >> t & 1]
    pool = [t for t in unseen if not any(view.lacks[nxt] >> v & 1 for v in TILES[t])]
    my_side, next_side = rules.side_of[me], rules.side_of[nxt]

    def put(row, name, value):
        start = ACTION_FEATURE_OFFSETS[name]
        row[start : start + WIDTH[name]] = value

    def best(after: Layout, tile: int) -> tuple[bool, int]:
        """Whether the tile fits ``after``, and the most one placement of it scores there."""
        slots = after.fits(tile)
        scored = []
        for slot in slots:
            trial = after.copy()
            trial.place(tile, slot)
            scored.append(placement_points(trial.end_total))
        return bool(slots), max(scored, default=0)

    for action in view.legal:
        row = rows[action]
        if action in (DRAW, PASS):
            put(row, "kind", [0, 1, 0] if action == DRAW else [0, 0, 1])
            continue
        tile, slot = divmod(action, 4)
        after = layout.copy()
        after.place(tile, slot)
        total = after.end_total
        points = placement_points(total)
        left = [t for t in range(NUM_TILES) if hand >> t & 1 and t != tile]
        put(row, "kind", [1, 0, 0])
        put(row, "lead", layout.empty)
        put(row, "slot", [int(s == slot) for s in range(4)])
        put(row, "tile_values", [int(v in TILES[tile]) for v in range(7)])
        put(row, "tile_pips", PIPS[tile])
        put(row, "tile_double", IS_DOUBLE[tile])
        put(row, "points", points)
        put(row, "scores", points > 0)
        put(row, "end_total", total)
        put(row, "end_total_mod5", [int(total % 5 == r) for r in range(5)])
        put(row, "open_after", [int(v in after.values) for v in range(7)])
        if not left:
            put(row, "goes_out", 1)
            held = sum(c for s, c in enumerate(view.hand_counts) if rules.side_of[s] != my_side)
            mean = Fraction(sum(PIPS[t] for t in unseen), len(unseen))
            put(row, "out_award", floor(held * mean / 5 + Fraction(1, 2)))
        put(row, "reaches_target", view.scores[my_side] + points >= rules.target)
        replies = [best(after, t) for t in pool]
        put(row, "next_held", view.hand_counts[nxt])
        put(row, "next_pool", len(pool))
        put(row, "next_fit", sum(fits for fits, _ in replies))
        put(row, "next_scoring", sum(p > 0 for _, p in replies))
        put(row, "next_best", max((p for _, p in replies), default=0))
        put(row, "next_winning", sum(p > 0 and view.scores[next_side] + p >= rules.target for _, p in replies))
        own = [best(after, t) for t in left]
        put(row, "own_left", len(left))
        put(row, "own_fit", sum(fits for fits, _ in own))
        put(row, "own_scoring", sum(p > 0 for _, p in own))
        put(row, "own_best", max((p for _, p in own), default=0))
    return rows


def hand_view(
    moves: str,
    hand: str,
    *,
    rules=None,
    seat: int = 0,
    counts: tuple[int, ...] | None = None,
    lacks: tuple[int, ...] | None = None,
    scores: tuple = (0, 0),
) -> SeatView:
    """A view built by hand: the layout from placements ``"3-6, 6-6 E"``, the hand's legal placements."""
    rules = rules or make_rules()
    layout = Layout()
    for text in [m for m in moves.split(",") if m.strip()]:
        parts = text.split()
        tile = tile_from_text(parts[0])
        slot = SLOT[parts[1]] if len(parts) > 1 else W
        assert slot in layout.fits(tile)
        layout.place(tile, slot)
    tiles = [tile_from_text(t) for t in hand.split()]
    legal = sorted(t * 4 + s for t in tiles for s in layout.fits(t))
    n = rules.num_players
    return SeatView(
        seat=seat,
        rules=rules,
        hand=sum(1 << t for t in tiles),
        hand_counts=counts or tuple(len(tiles) if s == seat else 5 for s in range(n)),
        boneyard_left=0,
        layout=layout,
        lacks=lacks or (0,) * n,
        scores=scores,
        round_index=0,
        to_act=seat,
        drawn=-1,
        legal=tuple(legal),
        move_codes=(),
        leader=0,
    )


def row_of(view: SeatView, text: str) -> np.ndarray:
    parts = text.split()
    action = tile_from_text(parts[0]) * 4 + SLOT[parts[1] if len(parts) > 1 else "W"]
    assert action in view.legal
    features = action_features(view)
    np.testing.assert_array_equal(features, reference_features(view))
    return features[action]


# -- the layout of a row -------------------------------------------------------------------------


def test_fields_tile_the_row():
    offset = 0
    for name, width, description, high in ACTION_FEATURE_FIELDS:
        assert ACTION_FEATURE_OFFSETS[name] == offset and width > 0 and description and 1 <= high <= 127
        offset += width
    assert offset == ACTION_FEATURE_SIZE == 45
    high = action_features_high()
    assert high.shape == (NUM_ACTIONS, ACTION_FEATURE_SIZE) and high.dtype == np.int8


# -- the fast paths against the reference, and the mask -----------------------------------------


@pytest.mark.parametrize("setting", SETTINGS)
def test_fast_paths_match_the_reference(setting):
    rules = make_rules(*setting)
    high = action_features_high()
    checked = scored = out = 0
    for state in random_states(*setting, matches=MATCHES, seed=2):
        for seat in range(rules.num_players):
            view = state.view(seat)
            from_view = action_features(view)
            from_state = encode_seat_actions(state, seat)
            assert from_view.shape == (NUM_ACTIONS, ACTION_FEATURE_SIZE) and from_view.dtype == np.int8
            np.testing.assert_array_equal(from_view, reference_features(view))
            np.testing.assert_array_equal(from_state, from_view)
            assert from_view.min() >= 0 and (from_view <= high).all()
            # zero exactly on the illegal rows: the rows' support is the action mask
            np.testing.assert_array_equal(from_view.any(axis=1), action_mask(view.legal).astype(bool))
            checked += 1
            scored += int(from_view[:, ACTION_FEATURE_OFFSETS["scores"]].sum())
            out += int(from_view[:, ACTION_FEATURE_OFFSETS["goes_out"]].sum())
    assert checked > 150 and scored > 5 and out > 0


def test_features_are_fresh_writable_arrays():
    state = State(make_rules())
    first, second = encode_seat_actions(state, state.to_act), encode_seat_actions(state, state.to_act)
    assert first.flags.writeable and not np.shares_memory(first, second)
    first[:] = 0
    assert second.any()


def test_a_seat_not_to_act_gets_zeros():
    state = State(make_rules("fives", 3), seed=1)
    for seat in range(3):
        if seat != state.to_act:
            assert not encode_seat_actions(state, seat).any()
            assert not action_features(state.view(seat)).any()


# -- hand-built positions ---------------------------------------------------------------------------


def test_a_placement_that_scores_15():
    view = hand_view("3-6", "6-6 2-1")
    row = row_of(view, "6-6 E")
    assert field(row, "kind") == [1, 0, 0] and field(row, "lead") == 0 and field(row, "slot") == [0, 1, 0, 0]
    assert field(row, "tile_values") == [0, 0, 0, 0, 0, 0, 1] and field(row, "tile_pips") == 12
    assert field(row, "tile_double") == 1
    assert field(row, "points") == 15 and field(row, "scores") == 1 and field(row, "end_total") == 15
    assert field(row, "end_total_mod5") == [1, 0, 0, 0, 0]
    assert field(row, "open_after") == [0, 0, 0, 1, 0, 0, 1]
    assert field(row, "goes_out") == 0 and field(row, "out_award") == 0 and field(row, "reaches_target") == 0
    # 2-1 fits nowhere on 3 and 6-6
    assert (field(row, "own_left"), field(row, "own_fit"), field(row, "own_scoring")) == (1, 0, 0)


def test_a_lead():
    view = hand_view("", "5-5 4-2")
    row = row_of(view, "5-5")
    assert field(row, "lead") == 1 and field(row, "slot") == [1, 0, 0, 0]
    assert field(row, "points") == 10 and field(row, "end_total") == 10  # a lone spinner counts once
    other = action_features(view)[tile_from_text("4-2") * 4]
    assert field(other, "points") == 0 and field(other, "end_total_mod5") == [0, 1, 0, 0, 0]


def test_a_placement_that_goes_out_and_the_award_it_may_bring():
    view = hand_view("3-6", "3-2", counts=(1, 5))
    row = row_of(view, "3-2 W")
    assert field(row, "goes_out") == 1 and field(row, "own_left") == 0 and field(row, "end_total") == 8
    # the opponent holds 5 of the 26 unseen tiles, which carry 168 - 9 - 5 = 154 pips:
    # 5 x 154 / 26 = 29.6 points, 5.92 units of 5, rounded to 6
    assert field(row, "out_award") == 6


def test_the_award_counts_only_the_opponents_tiles():
    rules = make_rules("pagat", 4, True)
    view = hand_view("3-6", "3-2", rules=rules, counts=(1, 4, 9, 2))
    # opponents are seats 1 and 3 (6 tiles); the partner's 9 are not counted
    assert field(row_of(view, "3-2 W"), "out_award") == round(6 * Fraction(154, 26) / 5)


def test_a_placement_that_reaches_the_target():
    view = hand_view("5-5", "5-0 5-4", scores=(240, 0))
    row = row_of(view, "5-0 W")  # the other line side of the led spinner now counts both halves: 0 + 10
    assert field(row, "points") == 10 and field(row, "reaches_target") == 1
    assert field(row_of(view, "5-4 W"), "reaches_target") == 0  # 14 scores nothing
    short = hand_view("5-5", "5-0 5-4", scores=(239, 0))
    assert field(row_of(short, "5-0 W"), "reaches_target") == 0


def test_the_next_seat_counts_follow_what_it_is_known_to_lack():
    # Led spinner 6-6; the observer plays 6-4 W: ends 4 (counts 4) and the spinner (now 12), total 16.
    known = hand_view("6-6", "6-4 0-0", lacks=(0, 0), scores=(0, 235))
    row = row_of(known, "6-4 W")
    assert field(row, "end_total") == 16 and field(row, "points") == 0
    # unseen: 28 - 2 held - 1 played = 25. On the 6 end (the others add 4) 6-1 scores 5; on the 4 end
    # (the others add 12) 3-4 scores 15 and 4-4 scores 20. Fitting: 6-0..6-5 but 6-4 (5), and the 4s (6).
    assert [field(row, k) for k in ("next_pool", "next_fit", "next_scoring", "next_best")] == [25, 11, 3, 20]
    assert field(row, "next_winning") == 2  # 15 and 20 reach 250 from 235
    lacking_four = hand_view("6-6", "6-4 0-0", lacks=(0, 1 << 4), scores=(0, 235))
    row = row_of(lacking_four, "6-4 W")
    assert [field(row, k) for k in ("next_pool", "next_fit", "next_scoring", "next_best")] == [19, 5, 1, 5]
    assert field(row, "next_winning") == 0 and field(row, "next_held") == 5


def test_how_the_rest_of_the_hand_fits():
    view = hand_view("2-3", "3-3 3-0 2-5 1-1")
    row = row_of(view, "3-3 E")  # ends 2 and the double 3-3 (6): total 8
    # left: 3-0 fits E (2 + 0 = 2), 2-5 fits W (5 + 6 = 11), 1-1 fits nowhere: two fit, none scores
    assert (field(row, "own_left"), field(row, "own_fit"), field(row, "own_scoring"), field(row, "own_best")) == (
        3,
        2,
        0,
        0,
    )
    row = row_of(view, "2-5 W")  # ends 5 and 3: total 8; 3-3 on E gives 5 + 6 = 11, 3-0 on E gives 5
    assert (field(row, "own_fit"), field(row, "own_scoring"), field(row, "own_best")) == (2, 1, 5)


def test_draw_and_pass_rows_hold_only_their_kind():
    state = State(make_rules("fives", 2), seed=0)
    chooser = random.Random(0)
    seen = set()
    while not state.finished and len(seen) < 2:
        legal = state.legal_actions()
        if legal[0] in (DRAW, PASS):
            features = encode_seat_actions(state, state.to_act)
            expected = np.zeros(ACTION_FEATURE_SIZE, dtype=np.int8)
            expected[1 if legal[0] == DRAW else 2] = 1
            np.testing.assert_array_equal(features[legal[0]], expected)
            assert features.any(axis=1).sum() == 1
            seen.add(legal[0])
        state.apply(chooser.choice(legal))
    assert DRAW in seen


# -- no leak -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("setting", SETTINGS)
def test_hidden_tiles_never_change_the_features(setting):
    """Dealing again every tile the acting seat cannot see leaves its features exactly as they were."""
    rng = random.Random(13)
    compared = changed = 0
    for state in random_states(*setting, matches=2, seed=4):
        if state.finished:
            continue
        twin = hidden_swapped(state, rng)
        seat = state.to_act
        changed += twin.hands != state.hands
        np.testing.assert_array_equal(encode_seat_actions(state, seat), encode_seat_actions(twin, seat))
        np.testing.assert_array_equal(action_features(state.view(seat)), action_features(twin.view(seat)))
        compared += 1
    assert compared > 40 and changed > compared // 2
