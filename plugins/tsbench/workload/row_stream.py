"""Rows in ingestion order: re-cut into load batches, and how late any of them arrives."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pyarrow as pa


def rechunked(batches: Iterable[pa.RecordBatch], batch_rows: int) -> Iterator[pa.RecordBatch]:
    """The rows of ``batches`` in order, in batches of exactly ``batch_rows`` (the last may be shorter)."""
    pending: list[pa.RecordBatch] = []
    have = 0
    for batch in batches:
        pending.append(batch)
        have += batch.num_rows
        while have >= batch_rows:
            table = pa.Table.from_batches(pending).combine_chunks()
            yield table.slice(0, batch_rows).to_batches()[0]
            rest = table.slice(batch_rows)
            pending = rest.to_batches() if rest.num_rows else []
            have = rest.num_rows
    if have:
        yield pa.Table.from_batches(pending).combine_chunks().to_batches()[0]


class Lateness:
    """The most any row's time lies behind a time before it in its measurement (ns), over the
    batches ``note``d in order."""

    def __init__(self) -> None:
        self.ns = 0
        self._newest: dict[str, int] = {}  # measurement → the largest time noted so far

    def note(self, measurement: str, batch: pa.RecordBatch) -> None:
        times = batch.column("time").cast(pa.int64()).to_numpy()
        if not len(times):
            return
        before = self._newest.get(measurement, int(times[0]))
        newest = np.maximum.accumulate(np.concatenate([[before], times]))
        self.ns = max(self.ns, int((newest[:-1] - times).max()))
        self._newest[measurement] = int(newest[-1])
