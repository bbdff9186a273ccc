"""put_block writes exactly what a plain column-slice assignment writes, and refuses what it cannot copy."""

from __future__ import annotations

import numpy as np
import pytest

from allfives_env.vector.blocks import VOID_ROWS, put_block


@pytest.mark.parametrize("width", [1, 2, 3, 4, 7, 8, 28, 29, 32])
@pytest.mark.parametrize("rows", [37, VOID_ROWS, 600])
def test_put_block_is_the_slice_assignment(width, rows):
    rng = np.random.default_rng(width)
    for at in (0, 1, 5, 192 - width):
        values = rng.integers(-128, 128, size=(rows, width), dtype=np.int8)
        ours = rng.integers(-128, 128, size=(rows, 192), dtype=np.int8)
        theirs = ours.copy()
        put_block(ours, at, values)
        theirs[:, at : at + width] = values
        assert np.array_equal(ours, theirs)


def test_put_block_takes_a_strided_block_and_an_empty_one():
    rng = np.random.default_rng(1)
    source = rng.integers(0, 2, size=(VOID_ROWS, 8), dtype=np.int8)
    out = np.zeros((VOID_ROWS, 20), dtype=np.int8)
    put_block(out, 3, source[:, 2:6])  # not contiguous: copied first
    assert np.array_equal(out[:, 3:7], source[:, 2:6])
    put_block(out, 0, source[:, :0])
    assert np.array_equal(out[:, 3:7], source[:, 2:6]) and not out[:, :3].any()


def test_put_block_refuses_wider_items():
    with pytest.raises(ValueError, match="copies bytes"):
        put_block(np.zeros((4, 8), dtype=np.int8), 0, np.zeros((4, 2), dtype=np.int32))
    with pytest.raises(ValueError, match="copies bytes"):
        put_block(np.zeros((4, 8), dtype=np.int64), 0, np.zeros((4, 2), dtype=np.int8))


@pytest.mark.parametrize("config", [{"num_players": 2}, {"rules": "fives", "num_players": 3}])
def test_the_engine_shows_the_same_either_way(monkeypatch, config):
    """Batches past VOID_ROWS (the engine's own tests run smaller ones) show what the plain copies show."""
    from allfives_env.vector import VectorEnv, blocks

    void, plain = VectorEnv(VOID_ROWS + 44, **config), VectorEnv(VOID_ROWS + 44, **config)
    rng = np.random.default_rng(5)
    steps = [void.reset(seed=9)]
    monkeypatch.setattr(blocks, "VOID_ROWS", 10**9)
    steps.append(plain.reset(seed=9))
    for _ in range(60):
        legal = steps[0].action_mask * rng.random(steps[0].action_mask.shape)
        actions = legal.argmax(axis=1)
        monkeypatch.setattr(blocks, "VOID_ROWS", VOID_ROWS)
        steps[0], state = void.step(actions), void.state()
        monkeypatch.setattr(blocks, "VOID_ROWS", 10**9)
        steps[1] = plain.step(actions)
        assert np.array_equal(steps[0].observation, steps[1].observation)
        assert np.array_equal(steps[0].action_mask, steps[1].action_mask)
        assert np.array_equal(state, plain.state())
