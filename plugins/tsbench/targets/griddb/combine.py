"""The client-side step of a GridDB plan: per-container TQL results → answer rows.

Rows come back in the column order of ``tsbench.workload.answers.answer_columns``; instants and
bucket starts as int ns since the epoch (row keys are ms: ``ns = ms × 10⁶``, exact); buckets are
``floor(ns / bucket) × bucket`` (aligned to the Unix epoch), computed in int64. Grouping and
aggregation use pyarrow's hash aggregation (``max`` / ``mean`` skip nulls, as SQL does).

Memory does not grow with the entities a query reads: the steps are fetched ``FETCH_CONTAINERS`` at a
time, and each chunk is folded into a partial result before the next is fetched (bucketed means as
sums and counts of the non-null values, maxima as maxima), so the client holds one chunk's rows and
the partial aggregates — never every container's rows at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tsbench.targets.griddb.dialect import Plan, Step
from tsbench.targets.griddb.layout import LONG, MILLIS_PER_NS, TIME

FETCH_CONTAINERS = 64
"""Containers per ``fetchAll``. GridDB's Java client keeps every row of one ``fetchAll`` in its heap
(with the Arrow copy, ~1.5 KB per row here): one ``fetchAll`` over all 4,000 hosts × 12 h ran it out
of heap. 64 containers × 12 h of 10-s rows is ~280,000 rows (~0.4 GB); 4,000 hosts take 63 round
trips instead of one."""


@dataclass
class StepResult:
    """What one step's TQL returned: rows (``time`` in ms + the container's columns; None when the
    container does not exist) or one aggregate (as int and as float where it converts; both None when
    the TQL returned no aggregate row)."""

    table: pa.Table | None = None
    long: int | None = None
    double: float | None = None


Fetch = Callable[[Sequence[Step]], list[StepResult]]


class Combiner(Protocol):
    """Folds chunks of steps and their results into one answer."""

    def add(self, steps: Sequence[Step], results: Sequence[StepResult]) -> None: ...

    def rows(self) -> list[tuple]: ...


def _rows_of(steps: Sequence[Step], results: Sequence[StepResult], fields: Sequence[str]) -> pa.Table:
    """All rows of all steps: ``time`` (int64 ms), ``entity`` (int32 index into ``steps``), fields."""
    tables, owners = [], []
    for index, result in enumerate(results):
        if result.table is not None and result.table.num_rows:
            tables.append(result.table.select([TIME, *fields]))
            owners.append(np.full(result.table.num_rows, index, dtype=np.int32))
    if not tables:
        empty = {TIME: pa.array([], pa.int64()), "entity": pa.array([], pa.int32())}
        return pa.table({**empty, **{f: pa.array([], pa.float64()) for f in fields}})
    table = pa.concat_tables(tables, promote_options="permissive").combine_chunks()
    return table.append_column("entity", pa.array(np.concatenate(owners)))


def _nanos(table: pa.Table) -> np.ndarray:
    return table.column(TIME).to_numpy().astype(np.int64) * MILLIS_PER_NS


def _columns(table: pa.Table, names: Sequence[str]) -> list[list[Any]]:
    return [table.column(name).to_pylist() for name in names]


class BucketCombiner:
    """Per bucket (and entity, by name): the max, or the mean of the non-null values — kept between
    chunks as max, or as sum and count."""

    def __init__(self, spec: dict[str, Any]):
        self.spec, self.fields = spec, list(spec["fields"])
        self.keys = ["bucket", "entity"] if spec["by_entity"] else ["bucket"]
        self.parts: list[pa.Table] = []

    def _partial_aggregates(self) -> list[tuple[str, str]]:
        if self.spec["agg"] == "max":
            return [(f, "max") for f in self.fields]
        return [pair for f in self.fields for pair in ((f, "sum"), (f, "count"))]

    def add(self, steps: Sequence[Step], results: Sequence[StepResult]) -> None:
        rows = _rows_of(steps, results, self.fields)
        if not rows.num_rows:
            return
        width = int(self.spec["bucket_ns"])
        rows = rows.append_column("bucket", pa.array(_nanos(rows) // width * width))
        part = rows.group_by(self.keys).aggregate(self._partial_aggregates())
        if self.spec["by_entity"]:
            names = pa.array([step["entity"] for step in steps], pa.string())
            part = part.set_column(
                part.schema.get_field_index("entity"), "entity", names.take(part["entity"].combine_chunks())
            )
        self.parts.append(part)

    def _final(self) -> pa.Table:
        """One row per key: ``<field>`` holds the answer's value."""
        merged = pa.concat_tables(self.parts)
        if self.spec["agg"] == "max":
            grouped = merged.group_by(self.keys).aggregate([(f"{f}_max", "max") for f in self.fields])
            values = {f: grouped[f"{f}_max_max"] for f in self.fields}
        else:
            partials = [(f"{f}_{part}", "sum") for f in self.fields for part in ("sum", "count")]
            grouped = merged.group_by(self.keys).aggregate(partials)
            values = {
                f: pc.divide(pc.cast(grouped[f"{f}_sum_sum"], pa.float64()), grouped[f"{f}_count_sum"])
                for f in self.fields
            }
        return pa.table({**{k: grouped[k] for k in self.keys}, **values})

    def rows(self) -> list[tuple]:
        if not self.parts:
            return []
        answer = self._final().sort_by([("bucket", "descending")])
        if self.spec["limit"]:
            answer = answer.slice(0, self.spec["limit"])
        return list(zip(*_columns(answer, [*self.keys, *self.fields]), strict=True))


def _raw(spec: dict[str, Any], steps: Sequence[Step], results: Sequence[StepResult]) -> list[tuple]:
    """Every row of every step, in step order: ``(time ns, entity, *fields)``."""
    fields = spec["fields"]
    rows = _rows_of(steps, results, fields)
    names = [steps[i]["entity"] for i in rows.column("entity").to_pylist()]
    times = _nanos(rows).tolist()
    return [(t, n, *v) for t, n, *v in zip(times, names, *_columns(rows, fields), strict=True)]


def _latest(spec: dict[str, Any], steps: Sequence[Step], results: Sequence[StepResult]) -> list[tuple]:
    """Per step with rows, its newest row: ``(entity, time ns, *fields)``."""
    fields = spec["fields"]
    answer = []
    for step, result in zip(steps, results, strict=True):
        if result.table is None or not result.table.num_rows:
            continue
        row = result.table.slice(int(np.argmax(result.table.column(TIME).to_numpy())), 1)
        values = [row.column(f)[0].as_py() for f in fields]
        answer.append((step["entity"], int(row.column(TIME)[0].as_py()) * MILLIS_PER_NS, *values))
    return answer


@dataclass
class ConcatCombiner:
    """Answers whose rows each belong to one step: each chunk's rows, appended in step order."""

    spec: dict[str, Any]
    rows_of_chunk: Callable[[dict[str, Any], Sequence[Step], Sequence[StepResult]], list[tuple]]
    answer: list[tuple] = field(default_factory=list)

    def add(self, steps: Sequence[Step], results: Sequence[StepResult]) -> None:
        self.answer += self.rows_of_chunk(self.spec, steps, results)

    def rows(self) -> list[tuple]:
        return self.answer


@dataclass
class AggregateCombiner:
    """One value over every step: COUNT sums the counts; SUM adds the per-container sums of the
    containers with values (NULL when none has); AVG weights each container's average by its count."""

    spec: dict[str, Any]
    counts: list[int] = field(default_factory=list)
    values: list[StepResult] = field(default_factory=list)

    def add(self, steps: Sequence[Step], results: Sequence[StepResult]) -> None:
        for step, result in zip(steps, results, strict=True):
            if step["role"] == "count":
                self.counts.append(result.long or 0)
            else:
                self.values.append(StepResult(long=result.long, double=result.double))

    def rows(self) -> list[tuple]:
        total, agg = sum(self.counts), self.spec["agg"]
        if agg == "count":
            return [(total,)]
        if not total:
            return [(None,)]
        pairs = list(zip(self.values, self.counts, strict=True))
        if agg == "sum":
            integer = self.spec["field_kind"] == LONG
            return [(sum(((r.long if integer else r.double) or 0) for r, c in pairs if c),)]
        return [(sum((r.double or 0.0) * c for r, c in pairs if c) / total,)]


COMBINERS: dict[str, Callable[[dict[str, Any]], Combiner]] = {
    "buckets": BucketCombiner,
    "rows": lambda spec: ConcatCombiner(spec, _raw),
    "latest": lambda spec: ConcatCombiner(spec, _latest),
    "aggregate": AggregateCombiner,
}


def combined(plan: Plan, steps: Sequence[Step], fetch: Fetch, chunk: int) -> tuple[list[tuple], bool]:
    """``(answer rows, complete)`` of ``steps`` fetched ``chunk`` at a time; incomplete only when a
    ``limit`` wanted more buckets than found."""
    spec = plan["combine"]
    combiner = COMBINERS[spec["kind"]](spec)
    for start in range(0, len(steps), chunk):
        part = steps[start : start + chunk]
        results = fetch(part)
        if len(part) != len(results):
            raise ValueError(f"{plan['query']}: {len(results)} results for {len(part)} steps")
        combiner.add(part, results)
    rows = combiner.rows()
    return rows, not spec.get("limit") or len(rows) >= spec["limit"]


def answer(plan: Plan, fetch: Fetch, chunk: int = FETCH_CONTAINERS) -> list[tuple]:
    """Run ``plan`` with ``fetch`` (steps → their results, at most ``chunk`` steps per call): the
    steps, then — only if the result is incomplete — the fallback steps."""
    rows, complete = combined(plan, plan["steps"], fetch, chunk)
    if not complete and plan.get("fallback"):
        rows, _ = combined(plan, plan["fallback"], fetch, chunk)
    return rows
