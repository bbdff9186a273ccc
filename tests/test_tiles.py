"""Tile ids, slots, action ids and action texts as docs/environment.md fixes them."""

from __future__ import annotations

import pytest

from allfives_env.core import (
    DRAW,
    NUM_ACTIONS,
    PASS,
    PIPS,
    SLOT_NAMES,
    TILE_TEXT,
    TILES,
    E,
    N,
    S,
    W,
    action_from_text,
    action_to_text,
    mask_to_tiles,
    placement,
    tile_from_text,
    tile_id,
    tile_to_text,
)
from allfives_env.core.tiles import IS_DOUBLE, OTHER_HALF, SUIT_MASK


def test_canonical_tile_order():
    expected = [(a, b) for a in range(7) for b in range(a, 7)]
    assert list(TILES) == expected
    assert len(TILES) == 28
    assert TILES[0] == (0, 0) and TILES[6] == (0, 6) and TILES[7] == (1, 1) and TILES[27] == (6, 6)
    assert [TILE_TEXT[t] for t in (0, 6, 7, 27)] == ["0-0", "0-6", "1-1", "6-6"]


def test_pips_and_doubles():
    assert [PIPS[t] for t in range(28)] == [a + b for a, b in TILES]
    assert sum(IS_DOUBLE) == 7
    assert sum(PIPS) == 168


@pytest.mark.parametrize("t", range(28))
def test_tile_text_round_trip_either_way(t):
    a, b = TILES[t]
    assert tile_to_text(t) == f"{a}-{b}"
    assert tile_from_text(f"{a}-{b}") == t
    assert tile_from_text(f"{b}-{a}") == t
    assert tile_id(b, a) == t


@pytest.mark.parametrize("bad", ["7-1", "3", "a-b", "3-6-1", "", "-1-2", "3 6", "²-3", "3-٣", "+3-4", "1_0-2"])
def test_bad_tile_text_is_refused(bad):
    with pytest.raises(ValueError, match=r"tile .*0\.\.6"):
        tile_from_text(bad)


@pytest.mark.parametrize("bad", [-1, 28, 3.0, "3"])
def test_bad_tile_id_is_refused(bad):
    with pytest.raises(ValueError):
        tile_to_text(bad)


def test_slots_and_special_actions():
    assert (W, E, N, S) == (0, 1, 2, 3)
    assert SLOT_NAMES == ("W", "E", "N", "S")
    assert (DRAW, PASS, NUM_ACTIONS) == (112, 113, 114)
    assert placement(tile_id(3, 5), E) == tile_id(3, 5) * 4 + 1
    with pytest.raises(ValueError, match="slot"):
        placement(3, 4)


@pytest.mark.parametrize("action", range(NUM_ACTIONS))
def test_action_text_round_trip(action):
    text = action_to_text(action)
    assert action_from_text(text) == action
    if action < DRAW:
        tile, slot = divmod(action, 4)
        assert text == f"{TILE_TEXT[tile]} {SLOT_NAMES[slot]}"


def test_action_texts():
    assert action_from_text("5-3 E") == tile_id(3, 5) * 4 + E
    assert action_from_text("3-5 e") == tile_id(3, 5) * 4 + E
    assert action_from_text(" draw ") == DRAW
    assert action_from_text("PASS") == PASS
    assert action_to_text(DRAW) == "draw" and action_to_text(PASS) == "pass"
    assert action_to_text(tile_id(5, 5) * 4, lead=True) == "5-5"
    # Out of context a bare tile reads as slot W (the lead's slot).
    assert action_from_text("5-5") == tile_id(5, 5) * 4 + W


@pytest.mark.parametrize("bad", ["5-3 X", "5-3 E W", "drew", "", "9-9 E"])
def test_bad_action_text_is_refused(bad):
    with pytest.raises(ValueError):
        action_from_text(bad)


@pytest.mark.parametrize("bad", [-1, 114, 1.5])
def test_bad_action_id_is_refused(bad):
    with pytest.raises(ValueError, match="action"):
        action_to_text(bad)


def test_masks_and_suits():
    assert mask_to_tiles(0) == []
    assert mask_to_tiles((1 << 27) | (1 << 3) | 1) == [0, 3, 27]
    for v in range(7):
        assert mask_to_tiles(SUIT_MASK[v]) == [t for t, (a, b) in enumerate(TILES) if v in (a, b)]
        assert len(mask_to_tiles(SUIT_MASK[v])) == 7
    for t, (a, b) in enumerate(TILES):
        for v in range(7):
            expected = b if v == a else a if v == b else -1
            assert OTHER_HALF[t][v] == expected
