"""The rows a query set reads: what a streamed dataset keeps on disk for the oracle.

A streamed dataset (run parameter ``dataset_rows``) is never stored whole: its loads regenerate it
(the generator is deterministic), and its folder keeps only the rows inside the time windows its
query set reads — an *extract*. The oracle's answers over the extract are its answers over the
whole dataset when every query reads a bounded window of time and the extract covers it:

- a windowed query (groupby, high-cpu, scan, range aggregate) reads ``[start, end)`` of its hosts
  (all, or the one or eight it names: only theirs are kept);
- a read by timestamp reads the one instant ``[at, at + 1 ns)`` of its host;
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

from tsbench.workload.manifest import ExtractFacts
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
    """``[start_ns, end_ns)`` of data a query reads, of its ``entities`` (None: all of them), and
    what must hold in it (``bucket_ns`` for ``EVERY_BUCKET``)."""

    start_ns: int
    end_ns: int
    coverage: Coverage = Coverage.NONE
    bucket_ns: int = 0
    entities: tuple[str, ...] | None = None


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
            span = (int(query.start_ns or 0), int(query.end_ns or 0))
            windows.append(ReadWindow(*span, entities=query.hosts))
        elif qtype.kind is Kind.READ:
            at = int(query.at_ns or 0)
            windows.append(ReadWindow(at, at + 1, entities=query.hosts))
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


def entity_spans(windows: Iterable[ReadWindow]) -> dict[str, list[tuple[int, int]]]:
    """Per entity named by a window, the union of the windows that name it."""
    named: dict[str, list[ReadWindow]] = {}
    for window in windows:
        for entity in window.entities or ():
            named.setdefault(entity, []).append(window)
    return {entity: merged(found) for entity, found in sorted(named.items())}


def _inside(edges: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Whether each time lies in the spans whose flattened edges are ``edges``: the number of
    edges ≤ ``t`` is odd."""
    return np.searchsorted(edges, times, side="right") % 2 == 1


def _edges(spans: Iterable[tuple[int, int]]) -> np.ndarray:
    return np.array([t for span in spans for t in span], dtype=np.int64)


class RowFilter:
    """Keeps the rows of a batch that a window reads: inside one of ``spans`` (every entity's), or
    inside one of ``by_entity[e]`` for a row of entity ``e`` (the column ``entity_key``)."""

    def __init__(
        self, spans: list[tuple[int, int]], by_entity: dict[str, list[tuple[int, int]]], entity_key: str
    ) -> None:
        self.spans, self.by_entity, self.entity_key = spans, by_entity, entity_key
        self._all = _edges(spans)
        self._any_entity = _edges(merged(ReadWindow(*span) for found in by_entity.values() for span in found))
        self._entity_edges = {entity: _edges(found) for entity, found in by_entity.items()}

    def kept(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """The rows read, in their order."""
        times = pc.cast(batch.column("time"), pa.int64()).to_numpy(zero_copy_only=False)
        inside = _inside(self._all, times)
        candidates = np.flatnonzero(~inside & _inside(self._any_entity, times))
        if len(candidates):
            names = pc.cast(batch.column(self.entity_key).take(pa.array(candidates)), pa.string())
            for entity in set(names.to_pylist()) & self._entity_edges.keys():
                rows = candidates[np.asarray(pc.equal(names, entity).fill_null(False))]
                inside[rows] = _inside(self._entity_edges[entity], times[rows])
        return batch if inside.all() else batch.filter(pa.array(inside))


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
    every = [w for w in windows if w.entities is None]
    spans = merged(every)
    rows = epochs_inside(spans, run.start, run.interval) * run.scale
    for found in entity_spans(windows).values():
        both = merged([*every, *(ReadWindow(*span) for span in found)])
        rows += epochs_inside(both, run.start, run.interval) - epochs_inside(spans, run.start, run.interval)
    return windows, rows * len(run.measurements)


def _within(spans: list[tuple[int, int]], window: ReadWindow) -> bool:
    """Whether the window's ``[start, end)`` lies inside one of the sorted, disjoint spans."""
    return any(low <= window.start_ns and window.end_ns <= high for low, high in spans)


class KeptSpans:
    """What a streamed dataset's extract keeps, merged once: the spans of every entity, and an entity's
    own spans merged with them on first use (a query's check then costs one scan of its spans)."""

    def __init__(self, extract: ExtractFacts, end_ns: int, interval_ns: int):
        self.extract, self.end_ns, self.interval_ns = extract, end_ns, interval_ns
        self.every = merged(ReadWindow(int(low), int(high)) for low, high in extract.spans)
        self._own: dict[str, list[tuple[int, int]]] = {}

    def of(self, entity: str | None) -> list[tuple[int, int]]:
        """The spans kept of ``entity`` (None: of every entity)."""
        own = self.extract.entity_spans.get(entity, []) if entity is not None else []
        if not own:
            return self.every
        if entity not in self._own:
            windows = [ReadWindow(low, high) for low, high in self.every]
            self._own[entity] = merged([*windows, *(ReadWindow(int(low), int(high)) for low, high in own)])
        return self._own[entity]

    def keeps(self, query: LogicalQuery) -> bool:
        """Whether the extract keeps every row ``query`` reads."""
        (window,) = read_windows([query], self.end_ns, self.interval_ns)
        return all(_within(self.of(entity), window) for entity in window.entities or (None,))


def unkept(
    extract: ExtractFacts, queries: Iterable[LogicalQuery], end_ns: int, interval_ns: int
) -> list[str]:
    """The ids of the queries whose windows ``extract`` does not keep (their answers over it would
    not be the whole dataset's)."""
    kept = KeptSpans(extract, end_ns, interval_ns)
    return [query.id for query in queries if not kept.keeps(query)]
