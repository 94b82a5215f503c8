"""The rollup step of the queries phase (run option ``rollup_after_load``): after the raw passes,
build the target's rollup (timed by the target: create and materialise everything loaded), then run
every query of the types it can answer on it — as many passes as the hot passes, so the rollup's
rate stands beside the raw hot rate — with every answer checked against the same reference answers
as the raw queries'. The rollup's passes follow warm raw passes: they are hot too. Then its refresh
after an append: an hour of new rows after the dataset's end is written and flushed, and the
target brings the rollup up to them, timed; the rollup's rows over that hour are checked (one per
entity and minute). Those rows change no answer of this run's queries (they lie after every query
window), and a retried queries phase removes them first (``remove_appended``)."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import asdict

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads

from tsbench.measure.query_runner import PassResult, per_pass, pooled, run_pass
from tsbench.results import model as records
from tsbench.targets.base import Target, TargetError
from tsbench.targets.rollups import MEASUREMENT, RESOLUTION_NS
from tsbench.timeutil import NS_PER_DAY, NS_PER_HOUR
from tsbench.workload.answers import Answer
from tsbench.workload.dataset import Dataset
from tsbench.workload.queries import LogicalQuery

APPEND_NS = NS_PER_HOUR  # how much of the dataset's end is appended again, past it
APPEND_BATCH_ROWS = 10_000

log = logging.getLogger("tsbench.queries")


def measure_rollup(
    target: Target,
    dataset: Dataset,
    queries: list[LogicalQuery],
    expected: Mapping[str, Answer],
    workers: int,
    passes: int,
    label: str,
) -> tuple[records.RollupFigures, list[PassResult]]:
    """Build the rollup, run ``passes`` passes of the queries it answers, refresh it after an
    append; the figures and the passes (whose answers the caller counts with the raw passes')."""
    built = target.build_rollup()
    log.info(
        "rollup %s %s: %d rows, %d bytes, built in %.2f s",
        label,
        built.name,
        built.rows,
        built.bytes,
        built.seconds,
    )
    rendered = {q.id: text for q in queries if (text := target.render_on_rollup(q)) is not None}
    answered = [q for q in queries if q.id in rendered]
    results = [
        run_pass(f"rollup-{n}", answered, rendered, expected, target.session, workers, label)
        for n in range(1, passes + 1)
        if answered
    ]
    figures = records.RollupFigures(
        **asdict(built),
        passes=len(results),
        on_rollup=pooled("rollup", results).stats() if results else {},
        qps_by_pass=per_pass(results, "qps"),
        mean_ms_by_pass=per_pass(results, "mean_ms"),
        refresh=measure_refresh(target, dataset, label),
    )
    return figures, results


def appended_window(dataset: Dataset) -> tuple[int, int]:
    """``[start, end)`` of the appended rows (ns): from the first UTC midnight at or after the
    dataset's end, ``APPEND_NS`` long (the dataset's whole span when it is shorter)."""
    start = -(-dataset.end_ns // NS_PER_DAY) * NS_PER_DAY
    return start, start + min(APPEND_NS, dataset.end_ns - dataset.start_ns)


def appended_rows(dataset: Dataset) -> pa.Table:
    """The dataset's rows of the rolled-up measurement over the window's length before its end,
    moved into ``appended_window``: new rows in a day of their own."""
    start, end = appended_window(dataset)
    since = dataset.end_ns - (end - start)
    time_type = pa.timestamp("ns", tz="UTC")
    source = pads.dataset([str(path) for path in dataset.files(MEASUREMENT)], format="parquet")
    rows = source.to_table(filter=pc.field("time") >= pa.scalar(since, time_type))
    moved = pc.add(rows.column("time").cast(pa.int64()), start - since).cast(time_type)
    return rows.set_column(rows.schema.get_field_index("time"), "time", moved)


def _rollup_rows_due(rows: pa.Table, entity: str) -> int:
    """One rollup row per entity and interval that has rows."""
    minutes = pc.divide(rows.column("time").cast(pa.int64()), RESOLUTION_NS)
    keys = pa.table({"entity": rows.column(entity).cast(pa.string()), "minute": minutes})
    return keys.group_by(["entity", "minute"]).aggregate([]).num_rows


def measure_refresh(target: Target, dataset: Dataset, label: str) -> records.RollupRefreshFigures:
    """Append ``appended_rows`` (written and flushed, timed), then refresh the rollup (timed by the
    target); fails when the rollup's rows over the appended span are not one per entity and minute."""
    rows = appended_rows(dataset)
    start, end = appended_window(dataset)
    started = time.perf_counter()
    writer = target.writer()
    try:
        for batch in rows.to_batches(max_chunksize=APPEND_BATCH_ROWS):
            writer.write(MEASUREMENT, batch)
    finally:
        writer.close()
    target.flush()
    append_s = time.perf_counter() - started
    refreshed = target.refresh_rollup(start, end)
    due = _rollup_rows_due(rows, dataset.use_case.entity_key)
    if refreshed.rows != due:
        raise TargetError(
            f"{label}: the rollup holds {refreshed.rows} rows over the appended hour, not {due}"
        )
    log.info(
        "rollup %s refresh: %d rows appended in %.2f s, rollup up to them in %.2f s",
        label,
        rows.num_rows,
        append_s,
        refreshed.seconds,
    )
    return records.RollupRefreshFigures(
        rows_appended=rows.num_rows,
        append_s=append_s,
        refresh_s=refreshed.seconds,
        rollup_rows=refreshed.rows,
        note=refreshed.note,
    )


def remove_appended(target: Target, dataset: Dataset, label: str) -> None:
    """Before a retried queries phase: drop rows an earlier try appended (the raw queries would see
    them: lastpoint reads the newest row)."""
    due = dataset.rows.get(MEASUREMENT)
    if due is None:  # a use case without the rolled-up measurement: nothing was appended
        return
    loaded = target.row_count(MEASUREMENT)
    if loaded <= due:
        return
    target.remove_rows_from(MEASUREMENT, appended_window(dataset)[0])
    left = target.row_count(MEASUREMENT)
    if left != due:
        raise TargetError(
            f"{label}: {left} {MEASUREMENT} rows after removing an earlier try's append, not {due}"
        )
    log.info("%s: %d rows an earlier try appended removed", label, loaded - due)
