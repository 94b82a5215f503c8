"""QuestDB SQL for the devops and YCSB-TS query kinds (one render function per ``Kind``; TSBS's iot
kinds are ``iot_dialect.py``'s).

Conventions (checked against the oracle by tests/integration/test_questdb.py):

* The designated timestamp column is ``timestamp`` (TIMESTAMP, microseconds). Instants are written
  as full-precision ISO literals ``'YYYY-MM-DDTHH:MM:SS.ffffffZ'``: QuestDB turns
  ``timestamp >= lo AND timestamp < hi`` into an interval scan of the designated timestamp, and a
  literal with all six fraction digits is one exact microsecond (a shorter literal such as
  ``'2016-01-01'`` would mean a whole interval under ``=``). Windows are half-open ``[lo, hi)``.
  Logical windows start on whole seconds, so the µs literals are exact; a ns instant that is not a
  whole µs is rounded up, which keeps ``>=``/``<`` exact over µs data.
* Buckets: ``SAMPLE BY <n><unit> ALIGN TO CALENDAR`` (no time zone, no offset) floors to the UTC
  calendar, which is the Unix-epoch alignment of the oracle for every bucket that divides a day
  (1 min, 1 h). Other widths use ``timestamp_floor`` + ``GROUP BY`` (epoch-aligned strides).
  ``SAMPLE BY`` emits only buckets that have rows (no FILL), as the oracle does.
* Columns come back in ``answers.answer_columns`` order; names are informative only.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from tsbench.targets.clauses import host_clauses, where_clause
from tsbench.targets.window import window_clauses
from tsbench.timeutil import NS_PER_DAY
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_types import Kind

TS = "timestamp"  # designated timestamp column of every table

_AGG = {"max": "max", "mean": "avg", "avg": "avg", "sum": "sum", "count": "count"}

# SAMPLE BY / timestamp_floor units, largest first: (ns per unit, QuestDB unit letter).
_UNITS = (
    (3_600_000_000_000, "h"),
    (60_000_000_000, "m"),
    (1_000_000_000, "s"),
    (1_000_000, "T"),
    (1_000, "U"),
)


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def instant(ns: int) -> str:
    """``ns`` since the epoch as a full-precision QuestDB timestamp literal (rounded up to a µs)."""
    micros = -(-ns // 1_000)
    seconds, fraction = divmod(micros, 1_000_000)
    stamp = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"'{stamp}.{fraction:06d}Z'"


def stride(bucket_ns: int) -> str:
    """A bucket width as QuestDB interval text, e.g. ``1m``, ``1h``, ``90s``."""
    for size, unit in _UNITS:
        if bucket_ns % size == 0:
            return f"{bucket_ns // size}{unit}"
    raise ValueError(f"QuestDB buckets are whole microseconds; got {bucket_ns} ns")


def _window(query: LogicalQuery) -> list[str]:
    return window_clauses(query, TS, instant)


def _hosts(query: LogicalQuery, entity: str) -> list[str]:
    return host_clauses(query, entity, literal)


def _where(clauses: list[str]) -> str:
    return where_clause(*clauses)


def _aggregates(query: LogicalQuery) -> str:
    qtype = query.query_type
    function = _AGG[qtype.agg]
    return ", ".join(f"{function}({f}) {qtype.agg}_{f}" for f in query.fields)


def _bucketed(query: LogicalQuery, table: str, keys: list[str], where: list[str]) -> tuple[str, str]:
    """``SELECT bucket, keys…, aggregates…`` per epoch-aligned bucket (buckets without rows omitted);
    returns the SQL and the name of its bucket column."""
    bucket_ns = query.query_type.bucket_ns
    select_keys = "".join(f", {k}" for k in keys)
    if NS_PER_DAY % bucket_ns == 0:
        sql = (
            f"SELECT {TS}{select_keys}, {_aggregates(query)} FROM {table}{_where(where)} "
            f"SAMPLE BY {stride(bucket_ns)} ALIGN TO CALENDAR"
        )
        return sql, TS
    sql = (
        f"SELECT timestamp_floor('{stride(bucket_ns)}', {TS}) bucket{select_keys}, {_aggregates(query)} "
        f"FROM {table}{_where(where)} GROUP BY bucket{select_keys}"
    )
    return sql, "bucket"


def _raw_columns(query: LogicalQuery, entity: str) -> str:
    return ", ".join([TS, entity, *query.fields])


def render_groupby(query: LogicalQuery, entity: str, table: str) -> str:
    return _bucketed(query, table, [], [*_hosts(query, entity), *_window(query)])[0]


def render_groupby_host(query: LogicalQuery, entity: str, table: str) -> str:
    return _bucketed(query, table, [entity], [*_hosts(query, entity), *_window(query)])[0]


def render_orderby_limit(query: LogicalQuery, entity: str, table: str) -> str:
    # The last N buckets before end_ns: descending order, then LIMIT (TSBS's QuestDB text lacked DESC
    # and so returned the first N).
    inner, bucket = _bucketed(query, table, [], [*_hosts(query, entity), *_window(query)])
    return f"{inner} ORDER BY {bucket} DESC LIMIT {query.query_type.limit}"


def render_high_cpu(query: LogicalQuery, entity: str, table: str) -> str:
    threshold = f"{query.fields[0]} > {float(query.query_type.threshold)!r}"
    where = [threshold, *_hosts(query, entity), *_window(query)]
    return f"SELECT {_raw_columns(query, entity)} FROM {table}{_where(where)}"


def render_lastpoint(query: LogicalQuery, entity: str, table: str) -> str:
    columns = ", ".join([entity, TS, *query.fields])
    return (
        f"SELECT {columns} FROM {table}{_where(_hosts(query, entity))} LATEST ON {TS} PARTITION BY {entity}"
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
    # count() of an empty window is 0, avg()/sum() are NULL: the oracle's semantics exactly.
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
    """The query as QuestDB SQL over its own table and entity key column (``cpu``, ``hostname``)."""
    return RENDERERS[query.query_type.kind](query, query.entity, query.measurement)
