"""IoTDB's tablet bitmaps (``targets/iotdb/writer.py``) against the client library's own ``BitMap``
marked row by row: the same bytes for every row count, also multiples of 8 (the client then sends
one byte more than the rows need)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from iotdb.utils.BitMap import BitMap

from tsbench.targets.iotdb.writer import _bitmap


@pytest.mark.parametrize("rows", [1, 7, 8, 9, 16, 17, 1_000])
def test_a_null_mask_is_the_bitmap_the_client_would_mark(rows: int) -> None:
    nulls = np.random.default_rng(rows).random(rows) < 0.3
    nulls[-1] = True  # at least one null, in the last row (the byte a multiple of 8 adds)
    column = pa.array([None if null else float(i) for i, null in enumerate(nulls)], pa.float64())
    marked = BitMap(rows)
    for row in np.flatnonzero(nulls):
        marked.mark(int(row))
    made = _bitmap(column)
    assert made is not None and made.bits == marked.bits and len(made.bits) == rows // 8 + 1


def test_a_column_without_nulls_has_no_bitmap() -> None:
    assert _bitmap(pa.array([1.0, 2.0], pa.float64())) is None
