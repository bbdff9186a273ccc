"""put_block writes exactly what a plain column-slice assignment writes, and refuses what it cannot copy."""

from __future__ import annotations

import numpy as np
import pytest

from allfives_env.vector.blocks import put_block


@pytest.mark.parametrize("width", [1, 2, 3, 4, 7, 8, 28, 29, 32])
def test_put_block_is_the_slice_assignment(width):
    rng = np.random.default_rng(width)
    for at in (0, 1, 5, 192 - width):
        values = rng.integers(-128, 128, size=(37, width), dtype=np.int8)
        ours = rng.integers(-128, 128, size=(37, 192), dtype=np.int8)
        theirs = ours.copy()
        put_block(ours, at, values)
        theirs[:, at : at + width] = values
        assert np.array_equal(ours, theirs)


def test_put_block_takes_a_strided_block_and_an_empty_one():
    rng = np.random.default_rng(1)
    source = rng.integers(0, 2, size=(10, 8), dtype=np.int8)
    out = np.zeros((10, 20), dtype=np.int8)
    put_block(out, 3, source[:, 2:6])  # not contiguous: copied first
    assert np.array_equal(out[:, 3:7], source[:, 2:6])
    put_block(out, 0, source[:, :0])
    assert np.array_equal(out[:, 3:7], source[:, 2:6]) and not out[:, :3].any()


def test_put_block_refuses_wider_items():
    with pytest.raises(ValueError, match="copies bytes"):
        put_block(np.zeros((4, 8), dtype=np.int8), 0, np.zeros((4, 2), dtype=np.int32))
    with pytest.raises(ValueError, match="copies bytes"):
        put_block(np.zeros((4, 8), dtype=np.int64), 0, np.zeros((4, 2), dtype=np.int8))
