"""Writing a block of byte columns into every row of a wider byte array.

numpy copies ``out[:, at : at + w] = values`` row by row, setting up its
inner loop once per row, and at a thousand rows of a few bytes the set-up
is most of the cost. Seen as one ``w``-byte item per row (a void dtype),
the same block is one loop over the rows, two to four times faster at
1,024 rows; below a few hundred rows the plain copy is as fast, and
cheaper to set up.
"""

from __future__ import annotations

import numpy as np

#: From this many rows on, a block is copied as void items.
VOID_ROWS = 256
_ITEMS: dict[int, np.dtype] = {}  # width -> the void dtype of that many bytes


def put_block(out: np.ndarray, at: int, values: np.ndarray) -> None:
    """``out[:, at : at + w] = values`` for int8 ``out`` (rows, width) and int8 ``values`` (rows, w)."""
    if out.dtype.itemsize != 1 or values.dtype.itemsize != 1 or values.ndim != 2:
        raise ValueError(f"put_block copies bytes: out {out.dtype}, values {values.dtype} of shape {values.shape}")
    width = values.shape[1]
    if len(values) < VOID_ROWS or not width:
        out[:, at : at + width] = values
        return
    item = _ITEMS.get(width)
    if item is None:
        item = _ITEMS[width] = np.dtype(f"V{width}")
    out[:, at : at + width].view(item)[:, 0] = np.ascontiguousarray(values).view(item)[:, 0]
