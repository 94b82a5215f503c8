"""A 1-minute materialized view of cpu (QuestDB, Apache-2) and the queries it answers exactly.

The view keeps per host and minute, for every cpu field, ``max``, ``sum`` and ``count`` (``SAMPLE
BY 1m``, calendar-aligned = epoch-aligned for a minute) — enough to answer TSBS's max and mean
aggregations over any bucket that is a whole number of minutes (single-groupby-*: max per minute;
cpu-max-all-*: max per hour; double-groupby-*: mean per host and hour) to the same answer as the
raw rows. QuestDB refreshes the view incrementally after each committed transaction of cpu
(``REFRESH IMMEDIATE``, its default); ``build_rollup`` waits until the view has caught up with
every transaction of the base table.

A query window starts and ends at any second, so a query reads the view for the whole minutes
inside its window and the raw rows of the partial minutes at its edges, and aggregates both
(``UNION ALL``): the answer is the raw data's, not one rounded to the rollup's resolution. Mean =
sum of sums / sum of counts. Other kinds (rows, lastpoint, limits) are not answered from the view.
"""

from __future__ import annotations

from tsbench.targets.questdb.dialect import TS, instant, literal, stride
from tsbench.targets.rollups import MEASUREMENT, answerable, whole_minutes
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_types import Kind

VIEW = "cpu_1m"


def create_view(fields: tuple[str, ...], entity: str) -> str:
    """The view over cpu, refreshed incrementally (its first refresh starts at once)."""
    columns = ", ".join(f"max({f}) max_{f}, sum({f}) sum_{f}, count({f}) n_{f}" for f in fields)
    return (
        f"CREATE MATERIALIZED VIEW {VIEW} AS (SELECT {TS}, {entity}, {columns} FROM {MEASUREMENT} "
        "SAMPLE BY 1m) PARTITION BY DAY"
    )


def drop_view() -> str:
    return f"DROP MATERIALIZED VIEW IF EXISTS {VIEW}"


def refresh_state() -> str:
    """``view_status, refresh_base_table_txn, base_table_txn, invalidation_reason`` of the view."""
    return (
        "SELECT view_status, refresh_base_table_txn, base_table_txn, invalidation_reason "
        f"FROM materialized_views() WHERE view_name = {literal(VIEW)}"
    )


def _hosts(query: LogicalQuery) -> str:
    if query.hosts is None:
        return ""
    return f" AND {query.entity} IN ({', '.join(literal(h) for h in query.hosts)})"


def _span(lo: int, hi: int) -> str:
    return f"{TS} >= {instant(lo)} AND {TS} < {instant(hi)}"


def parts(query: LogicalQuery) -> str:
    """Per minute and host: the view's rows of the whole minutes in the window, the raw rows of its
    partial edge minutes; columns ``minute``, the entity, per field ``v_<f>`` (max or sum) and
    ``n_<f>`` (count; mean only)."""
    assert query.start_ns is not None and query.end_ns is not None
    start, end = query.start_ns, query.end_ns
    first, last = whole_minutes(query)
    mean = query.query_type.agg == "mean"
    entity = query.entity
    from_view = ", ".join(f"sum_{f} v_{f}, n_{f}" if mean else f"max_{f} v_{f}" for f in query.fields)
    from_rows = ", ".join(
        f"{f} v_{f}, CASE WHEN {f} IS NULL THEN 0L ELSE 1L END n_{f}" if mean else f"{f} v_{f}"
        for f in query.fields
    )
    raw = f"SELECT timestamp_floor('1m', {TS}) minute, {entity}, {from_rows} FROM {MEASUREMENT} WHERE "
    if first >= last:  # no whole minute inside the window
        return raw + _span(start, end) + _hosts(query)
    selects = [
        f"SELECT {TS} minute, {entity}, {from_view} FROM {VIEW} WHERE {_span(first, last)}{_hosts(query)}"
    ]
    selects += [raw + _span(lo, hi) + _hosts(query) for lo, hi in ((start, first), (last, end)) if lo < hi]
    return " UNION ALL ".join(selects)


def _combined(query: LogicalQuery) -> str:
    agg = query.query_type.agg
    if agg == "mean":
        # a double quotient of integer sums (cpu's fields are LONG: sum / sum would divide integers)
        return ", ".join(f"CAST(sum(v_{f}) AS DOUBLE) / sum(n_{f}) {agg}_{f}" for f in query.fields)
    return ", ".join(f"max(v_{f}) {agg}_{f}" for f in query.fields)


def render_on_rollup(query: LogicalQuery) -> str | None:
    """``query`` over the view and the raw edge minutes, columns as the raw table's rendering."""
    if not answerable(query):
        return None
    bucket = f"timestamp_floor('{stride(query.query_type.bucket_ns)}', minute)"
    keys = f", {query.entity}" if query.query_type.kind is Kind.GROUPBY_HOST else ""
    return (
        f"SELECT {bucket} bucket{keys}, {_combined(query)} FROM ({parts(query)}) "
        f"GROUP BY bucket{keys} ORDER BY bucket{keys}"
    )
