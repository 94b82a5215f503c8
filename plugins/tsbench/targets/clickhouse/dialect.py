"""ClickHouse SQL for every logical query kind (one render function per ``Kind``).

Conventions (checked against the oracle on the real engine by tests/targets/test_clickhouse.py):

* ``time`` is ``DateTime64(9, 'UTC')``. Instants are written as
  ``toDateTime64('YYYY-MM-DD HH:MM:SS.fffffffff', 9, 'UTC')`` — one exact nanosecond, folded to a
  constant, so ``time >= lo AND time < hi`` is a primary-key range (the key is ``(entity, time)``).
  Windows are half-open ``[lo, hi)``.
* Instants and bucket starts are returned as ``Int64`` ns since the epoch
  (``toUnixTimestamp64Nano``): exact, where a Python ``datetime`` would drop the nanoseconds.
* Buckets: ``intDiv(toUnixTimestamp64Nano(time), <ns>) * <ns>`` — the oracle's epoch alignment for
  any width (``toStartOfInterval`` aligns hour multiples to the day and returns a seconds-precision
  ``DateTime``). Only buckets that have rows are emitted, as in the oracle.
* Empty windows: ``sumOrNull``/``avgOrNull`` return NULL and ``count`` 0, the oracle's semantics
  (plain ``sum`` would return 0 and ``avg`` NaN).
* Columns come back in ``answers.answer_columns`` order; names are informative only (and never
  shadow a column name: ClickHouse lets a SELECT alias replace the column in WHERE).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from tsbench.targets.clauses import host_clauses, where_clause
from tsbench.targets.window import window_clauses
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_types import Kind

TS = "time"
TS_NS = f"toUnixTimestamp64Nano({TS})"

_AGG = {"max": "max", "mean": "avg", "avg": "avgOrNull", "sum": "sumOrNull", "count": "count"}


def literal(text: str) -> str:
    """A ClickHouse string literal (backslash and quote escaped)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def instant(ns: int) -> str:
    """``ns`` since the epoch as an exact ``DateTime64(9, 'UTC')`` constant."""
    seconds, fraction = divmod(ns, 1_000_000_000)
    stamp = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S")
    return f"toDateTime64('{stamp}.{fraction:09d}', 9, 'UTC')"


def bucket(bucket_ns: int) -> str:
    """The epoch-aligned start (Int64 ns) of the ``bucket_ns``-wide bucket of each row."""
    if bucket_ns <= 0:
        raise ValueError(f"bucket width must be positive, got {bucket_ns} ns")
    return f"intDiv({TS_NS}, {bucket_ns}) * {bucket_ns}"


def _window(query: LogicalQuery) -> list[str]:
    return window_clauses(query, TS, instant)


def _hosts(query: LogicalQuery, entity: str) -> list[str]:
    return host_clauses(query, entity, literal)


def _where(clauses: list[str]) -> str:
    return where_clause(*clauses)


def _aggregates(query: LogicalQuery) -> str:
    qtype = query.query_type
    function = _AGG[qtype.agg]
    return ", ".join(f"{function}({f}) AS {qtype.agg}_{f}" for f in query.fields)


def render_groupby(query: LogicalQuery, entity: str, table: str) -> str:
    where = _where([*_hosts(query, entity), *_window(query)])
    return (
        f"SELECT {bucket(query.query_type.bucket_ns)} AS bucket, {_aggregates(query)} "
        f"FROM {table}{where} GROUP BY bucket"
    )


def render_groupby_host(query: LogicalQuery, entity: str, table: str) -> str:
    where = _where([*_hosts(query, entity), *_window(query)])
    return (
        f"SELECT {bucket(query.query_type.bucket_ns)} AS bucket, {entity}, {_aggregates(query)} "
        f"FROM {table}{where} GROUP BY bucket, {entity}"
    )


def render_orderby_limit(query: LogicalQuery, entity: str, table: str) -> str:
    # The last N buckets before end_ns: descending order, then LIMIT.
    return f"{render_groupby(query, entity, table)} ORDER BY bucket DESC LIMIT {query.query_type.limit}"


def _raw_columns(query: LogicalQuery, entity: str) -> str:
    return ", ".join([f"{TS_NS} AS time_ns", entity, *query.fields])


def render_high_cpu(query: LogicalQuery, entity: str, table: str) -> str:
    threshold = f"{query.fields[0]} > {float(query.query_type.threshold)!r}"
    where = [*_hosts(query, entity), *_window(query), threshold]
    return f"SELECT {_raw_columns(query, entity)} FROM {table}{_where(where)}"


def render_lastpoint(query: LogicalQuery, entity: str, table: str) -> str:
    # One pass, no sort: per entity the latest time and, via argMax over a tuple, the fields of that
    # same row (untuple spreads them into columns).
    fields = ", ".join(query.fields)
    where = _where(_hosts(query, entity))
    return (
        f"SELECT {entity}, toUnixTimestamp64Nano(max({TS})) AS time_ns, "
        f"untuple(argMax(tuple({fields}), {TS})) FROM {table}{where} GROUP BY {entity}"
    )


def render_read(query: LogicalQuery, entity: str, table: str) -> str:
    if query.at_ns is None:
        raise ValueError(f"{query.id}: a read needs at_ns")
    where = [*_hosts(query, entity), f"{TS} = {instant(query.at_ns)}"]
    return f"SELECT {_raw_columns(query, entity)} FROM {table}{_where(where)}"


def render_scan(query: LogicalQuery, entity: str, table: str) -> str:
    where = [*_hosts(query, entity), *_window(query)]
    return f"SELECT {_raw_columns(query, entity)} FROM {table}{_where(where)}"


def render_range_agg(query: LogicalQuery, entity: str, table: str) -> str:
    where = [*_hosts(query, entity), *_window(query)]
    return f"SELECT {_aggregates(query)} FROM {table}{_where(where)}"


RENDERERS: dict[Kind, Callable[[LogicalQuery, str, str], str]] = {
    Kind.GROUPBY: render_groupby,
    Kind.GROUPBY_HOST: render_groupby_host,
    Kind.ORDERBY_LIMIT: render_orderby_limit,
    Kind.HIGH_CPU: render_high_cpu,
    Kind.LASTPOINT: render_lastpoint,
    Kind.READ: render_read,
    Kind.SCAN: render_scan,
    Kind.RANGE_AGG: render_range_agg,
}


def render(query: LogicalQuery) -> str:
    """The query as ClickHouse SQL over its own table and entity key column (``cpu``, ``hostname``)."""
    return RENDERERS[query.query_type.kind](query, query.entity, query.measurement)
