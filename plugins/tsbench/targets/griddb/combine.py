"""The client-side step of a GridDB plan: per-container TQL results → answer rows.

Rows come back in the column order of ``tsbench.workload.answers.answer_columns``; instants and
bucket starts as int ns since the epoch (row keys are ms: ``ns = ms × 10⁶``, exact); buckets are
``floor(ns / bucket) × bucket`` (aligned to the Unix epoch), computed in int64. Grouping and
aggregation use pyarrow's hash aggregation (``max`` / ``mean`` skip nulls, as SQL does).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from tsbench.targets.griddb.dialect import Plan, Step
from tsbench.targets.griddb.layout import LONG, MILLIS_PER_NS, TIME

_PYARROW_AGG = {"max": "max", "mean": "mean"}


@dataclass
class StepResult:
    """What one step's TQL returned: rows (``time`` in ms + the container's columns; None when the
    container does not exist) or one aggregate (as int and as float where it converts; both None when
    the TQL returned no aggregate row)."""

    table: pa.Table | None = None
    long: int | None = None
    double: float | None = None


Fetch = Callable[[Sequence[Step]], list[StepResult]]


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


def _buckets(spec: dict[str, Any], steps: Sequence[Step], results: Sequence[StepResult]) -> list[tuple]:
    fields = spec["fields"]
    rows = _rows_of(steps, results, fields)
    width = int(spec["bucket_ns"])
    rows = rows.append_column("bucket", pa.array(_nanos(rows) // width * width))
    keys = ["bucket", "entity"] if spec["by_entity"] else ["bucket"]
    function = _PYARROW_AGG[spec["agg"]]
    grouped = rows.group_by(keys).aggregate([(f, function) for f in fields])
    grouped = grouped.sort_by([("bucket", "descending")])
    if spec["limit"]:
        grouped = grouped.slice(0, spec["limit"])
    values = _columns(grouped, [f"{f}_{function}" for f in fields])
    buckets = grouped.column("bucket").to_pylist()
    if spec["by_entity"]:
        names = [steps[i]["entity"] for i in grouped.column("entity").to_pylist()]
        return [(b, n, *v) for b, n, *v in zip(buckets, names, *values, strict=True)]
    return [(b, *v) for b, *v in zip(buckets, *values, strict=True)]


def _raw(spec: dict[str, Any], steps: Sequence[Step], results: Sequence[StepResult]) -> list[tuple]:
    fields = spec["fields"]
    rows = _rows_of(steps, results, fields)
    names = [steps[i]["entity"] for i in rows.column("entity").to_pylist()]
    times = _nanos(rows).tolist()
    return [(t, n, *v) for t, n, *v in zip(times, names, *_columns(rows, fields), strict=True)]


def _latest(spec: dict[str, Any], steps: Sequence[Step], results: Sequence[StepResult]) -> list[tuple]:
    fields = spec["fields"]
    answer = []
    for step, result in zip(steps, results, strict=True):
        if result.table is None or not result.table.num_rows:
            continue
        row = result.table.slice(int(np.argmax(result.table.column(TIME).to_numpy())), 1)
        values = [row.column(f)[0].as_py() for f in fields]
        answer.append((step["entity"], int(row.column(TIME)[0].as_py()) * MILLIS_PER_NS, *values))
    return answer


def _aggregate(spec: dict[str, Any], steps: Sequence[Step], results: Sequence[StepResult]) -> list[tuple]:
    """One value over every step: COUNT sums the counts; SUM adds the per-container sums of the
    containers with values (NULL when none has); AVG weights each container's average by its count."""
    counts = [r.long or 0 for s, r in zip(steps, results, strict=True) if s["role"] == "count"]
    values = [r for s, r in zip(steps, results, strict=True) if s["role"] != "count"]
    total = sum(counts)
    agg = spec["agg"]
    if agg == "count":
        return [(total,)]
    if not total:
        return [(None,)]
    if agg == "sum":
        integer = spec["field_kind"] == LONG
        parts = [(r.long if integer else r.double) for r, c in zip(values, counts, strict=True) if c]
        return [(sum(p or 0 for p in parts),)]
    weighted = sum((r.double or 0.0) * c for r, c in zip(values, counts, strict=True) if c)
    return [(weighted / total,)]


COMBINERS: dict[str, Callable[[dict[str, Any], Sequence[Step], Sequence[StepResult]], list[tuple]]] = {
    "buckets": _buckets,
    "rows": _raw,
    "latest": _latest,
    "aggregate": _aggregate,
}


def combine(plan: Plan, steps: Sequence[Step], results: Sequence[StepResult]) -> tuple[list[tuple], bool]:
    """``(answer rows, complete)``; incomplete only when a ``limit`` wanted more buckets than found."""
    if len(steps) != len(results):
        raise ValueError(f"{plan['query']}: {len(results)} results for {len(steps)} steps")
    spec = plan["combine"]
    rows = COMBINERS[spec["kind"]](spec, steps, results)
    complete = not spec.get("limit") or len(rows) >= spec["limit"]
    return rows, complete


def answer(plan: Plan, fetch: Fetch) -> list[tuple]:
    """Run ``plan`` with ``fetch`` (steps → their results): the steps, then — only if the result is
    incomplete — the fallback steps."""
    rows, complete = combine(plan, plan["steps"], fetch(plan["steps"]))
    if not complete and plan.get("fallback"):
        rows, _ = combine(plan, plan["fallback"], fetch(plan["fallback"]))
    return rows
