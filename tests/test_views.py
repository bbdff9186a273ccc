"""The views of a state: observation vectors, the global state vector, text and images."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from allfives_env.core import State, make_rules
from allfives_env.core.tiles import DRAW, IS_DOUBLE, NUM_TILES, PASS, TILES
from allfives_env.views.image import HEIGHT, WIDTH, render_image, tile_boxes
from allfives_env.views.observation import (
    FIELDS,
    HISTORY_LENGTH,
    HISTORY_WIDTH,
    OBSERVATION_SIZE,
    OFFSETS,
    encode_observation,
    encode_seat,
    observation_high,
    observation_size,
)
from allfives_env.views.state_vector import STATE_FIELDS, STATE_OFFSETS, STATE_SIZE, encode_state, state_high
from allfives_env.views.text import branch_tiles, line_tiles, render_text

SETTINGS = [
    ("pagat", 2, None),
    ("pagat", 3, None),
    ("pagat", 4, True),
    ("fives", 2, None),
    ("fives", 3, None),
    ("fives", 4, False),
    ("fives", 4, True),
]


def random_states(rule_set: str, players: int, partnerships, matches: int, seed: int = 0):
    """Every position of a few random matches (the state is shared: use each before the next)."""
    rules = make_rules(rule_set, players, partnerships)
    chooser = random.Random(seed)
    for match in range(matches):
        state = State(rules, seed=seed * 1000 + match)
        while not state.finished:
            yield state
            state.apply(chooser.choice(state.legal_actions()))
        yield state


def reference_observation(view, history: bool) -> np.ndarray:
    """The observation written the slow, obvious way, one element at a time from FIELDS' offsets."""
    obs = np.zeros(observation_size(history), dtype=np.int8)
    rules, me, layout = view.rules, view.seat, view.layout
    n = rules.num_players
    for t in range(NUM_TILES):
        obs[OFFSETS["hand"] + t] = view.hand >> t & 1
        obs[OFFSETS["played"] + t] = layout.played >> t & 1
    for rel in range(n):
        seat = (me + rel) % n
        obs[OFFSETS["hand_counts"] + rel] = view.hand_counts[seat]
        for v in range(7):
            obs[OFFSETS["lacks"] + 7 * rel + v] = view.lacks[seat] >> v & 1
        obs[OFFSETS["partner"] + rel] = rules.side_of[seat] == rules.side_of[me]
        obs[OFFSETS["seat_present"] + rel] = 1
    obs[OFFSETS["boneyard"]] = view.boneyard_left
    for slot in range(4):
        if layout.values[slot] >= 0:
            obs[OFFSETS["end_open"] + slot] = 1
            obs[OFFSETS["end_value"] + 7 * slot + layout.values[slot]] = 1
            obs[OFFSETS["end_count"] + slot] = layout.counts[slot]
            obs[OFFSETS["end_double"] + slot] = layout.terminal_double(slot)
    obs[OFFSETS["branch_started"]] = bool(layout.arms[2])
    obs[OFFSETS["branch_started"] + 1] = bool(layout.arms[3])
    if layout.spinner >= 0:
        obs[OFFSETS["spinner"]] = 1
        obs[OFFSETS["spinner"] + 1 + layout.spinner] = 1
    obs[OFFSETS["end_total"]] = layout.end_total
    my_side = rules.side_of[me]
    for rel in range(rules.num_sides):
        score = view.scores[(my_side + rel) % rules.num_sides]
        obs[OFFSETS["to_target"] + rel] = min(127, max(0, int((rules.target - score) / 2.5 + 0.999)))
    obs[OFFSETS["target"]] = min(127, rules.target // 5)
    obs[OFFSETS["round"]] = min(127, view.round_index)
    if view.drawn >= 0:
        obs[OFFSETS["must_place_drawn"]] = 1
        obs[OFFSETS["drawn_tile"] + view.drawn] = 1
    obs[OFFSETS["to_act"] + (view.to_act - me) % n] = 1
    obs[OFFSETS["leader"] + (view.leader - me) % n] = 1
    obs[OFFSETS["rules_fives"]] = rules.rules == "fives"
    if history:
        for row, (seat, action) in enumerate(view.moves[-HISTORY_LENGTH:]):
            base = OBSERVATION_SIZE + row * HISTORY_WIDTH
            obs[base + (seat - me) % n] = 1
            if action in (DRAW, PASS):
                obs[base + (5 if action == DRAW else 6)] = 1
            else:
                obs[base + 4] = 1
                obs[base + 7] = (action >> 2) + 1
                obs[base + 8 + (action & 3)] = 1
    return obs


# -- observation ---------------------------------------------------------------------------


def test_fields_tile_the_vector():
    offset = 0
    for name, size, description in FIELDS:
        assert OFFSETS[name] == offset and size > 0 and description
        offset += size
    assert offset == OBSERVATION_SIZE == 192


@pytest.mark.parametrize("setting", SETTINGS)
def test_fast_encoders_match_the_reference(setting):
    rules = make_rules(*setting)
    high = observation_high(rules, history=True)
    chooser = random.Random(7)
    checked = 0
    for state in random_states(*setting, matches=4):
        for seat in range(rules.num_players):
            history = chooser.random() < 0.3
            view = state.view(seat)
            expected = reference_observation(view, history)
            from_view = encode_observation(view, history)
            from_state = encode_seat(state, seat, history)
            assert from_view.dtype == from_state.dtype == np.int8
            np.testing.assert_array_equal(from_view, expected)
            np.testing.assert_array_equal(from_state, expected)
            assert from_state.min() >= 0 and (from_state <= high[: from_state.size]).all()
            checked += 1
    assert checked > 200


def test_observations_are_fresh_writable_arrays():
    state = State(make_rules())
    first, second = encode_seat(state, 0), encode_seat(state, 0)
    assert first.flags.writeable and not np.shares_memory(first, second)
    first[:] = 0
    assert second.any()


def test_history_rows_follow_the_moves():
    state = State(make_rules("fives", 2), seed=3)
    chooser = random.Random(3)
    for _ in range(12):
        state.apply(chooser.choice(state.legal_actions()))
    obs = encode_seat(state, 1, history=True)
    rows = obs[OBSERVATION_SIZE:].reshape(HISTORY_LENGTH, HISTORY_WIDTH)
    moves = state.round_moves()
    assert rows[len(moves) :].sum() == 0
    for row, (seat, action) in zip(rows, moves, strict=False):
        assert row[(seat - 1) % 2] == 1 and row[:4].sum() == 1
        assert row[4:7].sum() == 1
        if action < DRAW:
            assert row[7] == (action >> 2) + 1 and row[8 + (action & 3)] == 1


def test_observation_high_is_tight_per_rule_set():
    high = observation_high(make_rules("fives", 2))
    assert high[OFFSETS["hand_counts"]] == 21 and high[OFFSETS["boneyard"]] == 14
    assert observation_high(make_rules("pagat", 4))[OFFSETS["hand_counts"]] == 13
    assert observation_high(history=True).size == observation_size(True)


# -- global state vector ---------------------------------------------------------------------


@pytest.mark.parametrize("setting", [SETTINGS[1], SETTINGS[3], SETTINGS[6]])
def test_state_vector_holds_every_hand_and_the_boneyard(setting):
    rules = make_rules(*setting)
    high = state_high(rules)
    assert sum(size for _, size, _ in STATE_FIELDS) == STATE_SIZE
    for state in random_states(*setting, matches=2):
        vector = encode_state(state)
        assert vector.shape == (STATE_SIZE,) and vector.dtype == np.int8
        assert vector.min() >= 0 and (vector <= high).all()
        hands = vector[STATE_OFFSETS["hands"] : STATE_OFFSETS["hands"] + 4 * NUM_TILES].reshape(4, NUM_TILES)
        for seat in range(4):
            held = {t for t in range(NUM_TILES) if hands[seat, t]}
            assert held == (set(state.hand_tiles(seat)) if seat < rules.num_players else set())
        bone = vector[STATE_OFFSETS["boneyard_tiles"] : STATE_OFFSETS["boneyard_tiles"] + NUM_TILES]
        assert set(np.flatnonzero(bone)) == set(state.boneyard[state.bone_pos :])
        assert vector[STATE_OFFSETS["to_act"] + state.to_act] == 1
        assert vector[STATE_OFFSETS["finished"]] == state.finished


# -- text ------------------------------------------------------------------------------------


TOKEN = re.compile(r"[\[{](\d)\|(\d)[\]}]")


@pytest.mark.parametrize("setting", [SETTINGS[0], SETTINGS[4]])
def test_text_draws_a_connected_line_and_branches(setting):
    for state in random_states(*setting, matches=2, seed=5):
        text = render_text(state)
        layout = state.layout
        line = line_tiles(layout)
        if not line:
            assert "no tile down" in text
            continue
        row = next(r for r in text.splitlines() if len(TOKEN.findall(r)) == len(line))
        halves = [(int(a), int(b)) for a, b in TOKEN.findall(row)]
        for (_, east), (west, _) in zip(halves, halves[1:], strict=False):
            assert east == west  # touching halves match
        assert halves[0][0] == layout.values[0] and halves[-1][1] == layout.values[1]
        on_table = len(line) + len(branch_tiles(layout, 2)) + len(branch_tiles(layout, 3))
        assert on_table == layout.played.bit_count()
        assert sorted(tuple(sorted(h)) for h in halves) == sorted(TILES[t] for t, _, _ in line)
        assert f"end total {layout.end_total}" in text


def test_text_shows_hands_only_when_asked():
    state = State(make_rules("pagat", 3), seed=2)
    secret = " ".join(f"{a}-{b}" for a, b in (TILES[t] for t in state.hand_tiles(1)))
    assert secret not in render_text(state)
    assert secret in render_text(state, hands=True, names=["a", "b", "c"])
    assert "To act: " + "abc"[state.to_act] in render_text(state, names=["a", "b", "c"])


# -- image -----------------------------------------------------------------------------------


def _overlap(a, b) -> float:
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    return max(0.0, width) * max(0.0, height)


@pytest.mark.parametrize("setting", [SETTINGS[0], SETTINGS[5]])
def test_tile_boxes_do_not_overlap_and_doubles_lie_across(setting):
    for state in random_states(*setting, matches=2, seed=9):
        boxes = tile_boxes(state.layout)
        assert len(boxes) == state.layout.played.bit_count()
        for i, a in enumerate(boxes):
            for b in boxes[i + 1 :]:
                assert _overlap(a, b) < 1e-9
        for x0, y0, x1, y1, _first, _second, tile in boxes:
            assert sorted((x1 - x0, y1 - y0)) == [1, 2]
            on_line = y0 <= 0 <= y1
            if IS_DOUBLE[tile] and on_line and y1 - y0 == 2:
                assert x1 - x0 == 1  # a double on the line lies across it


def test_image_is_a_fixed_size_rgb_array_that_changes_with_the_layout():
    state = State(make_rules("fives", 2), seed=4)
    empty = render_image(state)
    assert empty.shape == (HEIGHT, WIDTH, 3) and empty.dtype == np.uint8
    state.apply(state.legal_actions()[0])
    one = render_image(state)
    assert one.shape == empty.shape and (one != empty).any()


def test_seat_tables_are_kept_per_rules_value():
    """Equal rules share one table entry; alternating between rule sets never mixes their tables."""
    from allfives_env.views import observation

    first, again, other = make_rules("pagat", 3), make_rules("pagat", 3), make_rules("fives", 3)
    assert first is not again and first == again
    states = [State(r, seed=4) for r in (first, again, other, first)]
    encoded = [encode_seat(s, 1) for s in states]
    np.testing.assert_array_equal(encoded[0], encoded[1])
    np.testing.assert_array_equal(encoded[0], encoded[3])
    assert observation._table(first, 1) is observation._table(again, 1)
    assert observation._table(other, 1) is not observation._table(first, 1)
    assert sum(1 for r in observation._TABLES if r == first) == 1
