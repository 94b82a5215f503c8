"""The rows a query set reads: what a streamed dataset keeps on disk for the oracle.

A streamed dataset (run parameter ``dataset_rows``) is never stored whole: its loads regenerate it
(the generator is deterministic), and its folder keeps only the rows inside the time windows its
query set reads — an *extract*. The oracle's answers over the extract are its answers over the
whole dataset when every query reads a bounded window of time and the extract covers it:

- a windowed query (groupby, high-cpu, scan, range aggregate) reads ``[start, end)``;
- a read by timestamp reads the one instant ``[at, at + 1 ns)``;
- lastpoint reads each entity's newest row: the last epoch ``[end - interval, end)``, complete
  when every entity has a row there (``Coverage.EVERY_ENTITY``, checked on the extract);
- groupby-orderby-limit reads the ``limit`` newest buckets before its end: the window from the
  oldest of them, complete when each of those buckets has a row (``Coverage.EVERY_BUCKET``, checked).

A query type without a bounded window (iot's whole-span types) cannot be answered from an extract:
``read_windows`` names it, and the run parameters refuse the streamed form before any work.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_kinds import Kind

WINDOWED = frozenset({Kind.GROUPBY, Kind.GROUPBY_HOST, Kind.HIGH_CPU, Kind.SCAN, Kind.RANGE_AGG})
EXTRACTABLE = WINDOWED | {Kind.READ, Kind.LASTPOINT, Kind.ORDERBY_LIMIT}


class ExtractError(ValueError):
    """A query set an extract cannot answer, or an extract that does not cover what it must."""


class Coverage(StrEnum):
    """What must hold in a window for the extract's answer to be the whole dataset's."""

    NONE = "none"  # the window's rows are all the query reads
    EVERY_ENTITY = "every-entity"  # every entity has a row in the window (lastpoint)
    EVERY_BUCKET = "every-bucket"  # every bucket of the window has a row (orderby-limit)


@dataclass(frozen=True)
class ReadWindow:
    """``[start_ns, end_ns)`` of data a query reads, and what must hold in it (``bucket_ns`` for
    ``EVERY_BUCKET``)."""

    start_ns: int
    end_ns: int
    coverage: Coverage = Coverage.NONE
    bucket_ns: int = 0


def unextractable_types(types: Iterable[str]) -> list[str]:
    """The query types (names) that read no bounded window of time."""
    from tsbench.workload.query_types import get_query_type

    return [name for name in types if get_query_type(name).kind not in EXTRACTABLE]


def read_windows(queries: Iterable[LogicalQuery], data_end_ns: int, interval_ns: int) -> list[ReadWindow]:
    """The windows the queries read, one per query (ExtractError for a type that reads all time)."""
    windows = []
    for query in queries:
        qtype = query.query_type
        if qtype.kind in WINDOWED:
            windows.append(ReadWindow(int(query.start_ns or 0), int(query.end_ns or 0)))
        elif qtype.kind is Kind.READ:
            windows.append(ReadWindow(int(query.at_ns or 0), int(query.at_ns or 0) + 1))
        elif qtype.kind is Kind.LASTPOINT:
            windows.append(ReadWindow(data_end_ns - interval_ns, data_end_ns, Coverage.EVERY_ENTITY))
        elif qtype.kind is Kind.ORDERBY_LIMIT:
            bucket, end = qtype.bucket_ns, int(query.end_ns or 0)
            oldest = ((end - 1) // bucket - qtype.limit + 1) * bucket
            windows.append(ReadWindow(oldest, end, Coverage.EVERY_BUCKET, bucket))
        else:
            raise ExtractError(f"query type {query.type} reads all of the data: an extract cannot answer it")
    return windows


def merged(windows: Iterable[ReadWindow]) -> list[tuple[int, int]]:
    """The union of the windows as sorted, disjoint ``[start, end)`` spans."""
    spans: list[tuple[int, int]] = []
    for start, end in sorted((w.start_ns, w.end_ns) for w in windows):
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], end))
        else:
            spans.append((start, end))
    return spans


@dataclass(frozen=True)
class SpanFilter:
    """Keeps the rows of a batch whose time lies in one of the spans (sorted and disjoint)."""

    spans: list[tuple[int, int]]

    def __post_init__(self) -> None:
        flat = np.array([t for span in self.spans for t in span], dtype=np.int64)
        object.__setattr__(self, "_edges", flat)

    def kept(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """The rows inside a span (in their order): a time ``t`` is inside when the number of span
        edges ≤ ``t`` is odd."""
        times = pc.cast(batch.column("time"), pa.int64()).to_numpy(zero_copy_only=False)
        inside = np.searchsorted(self._edges, times, side="right") % 2 == 1  # type: ignore[attr-defined]
        return batch.filter(pa.array(inside)) if not inside.all() else batch


def epochs_inside(spans: Iterable[tuple[int, int]], start_ns: int, interval_ns: int) -> int:
    """How many epochs (``start_ns + k × interval_ns``) lie inside the spans."""
    total = 0
    for low, high in spans:
        first = max(0, -(-(low - start_ns) // interval_ns))
        last = -(-(high - start_ns) // interval_ns)  # the first epoch at or after ``high``
        total += max(0, last - first)
    return total


def planned_extract(spec: object) -> tuple[list[ReadWindow], int]:
    """A run's (``spec.RunSpec``) read windows and the rows its extract will keep, before any data
    exists: every entity has a row at every epoch (what a streamed dataset requires)."""
    from tsbench.workload.queries import DataRange, generate_queries

    run: Any = spec
    types, seed = run.resolved_query_types, run.effective_query_seed
    queries = generate_queries(DataRange.of_spec(run.dataset), types, run.queries_per_type, seed)
    windows = read_windows(queries, run.end, run.interval)
    epochs = epochs_inside(merged(windows), run.start, run.interval)
    return windows, epochs * run.scale * len(run.measurements)
