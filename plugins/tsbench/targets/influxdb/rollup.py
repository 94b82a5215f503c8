"""A 1-minute rollup of cpu by a continuous query (InfluxDB 1.x, MIT) and the queries it answers
exactly.

InfluxDB's own downsampling pattern: a continuous query writes, per minute and series, for every
cpu field ``max``, ``sum`` and ``count`` into ``cpu_1m`` of a retention policy of its own
(``rollup``, infinite), ``GROUP BY time(1m), *`` keeping every tag, ``fill(none)``: a point only
for a minute that has rows (1.6.7 writes none for an empty minute without it too — checked with
rows every 150 s — but ``count``'s fill value is 0, so the intent is stated). A continuous query only ever
runs on the interval that has just ended by the server's clock, so it never covers a dataset's
timestamps (2016): the rollup of what was loaded is built by the same ``SELECT … INTO`` over the
loaded span (InfluxDB's documented backfill), a day per statement, and an append is brought in by
running it over the appended span — what the continuous query service runs once per interval.

A query window starts and ends at any second, so a query reads the rollup for the whole minutes
inside its window and the raw rows of its partial edge minutes, bucketed alike: up to three
statements in one request. InfluxQL cannot merge them (several subqueries in one FROM come back as
a series per source), so the answer header says ``combine: max`` or ``combine: mean`` and the
session merges the statements' rows per answer key (``answers.combined_rows``): max of maxima, mean
= sum of sums / sum of counts — the raw data's answer, not one rounded to the rollup's resolution.
"""

from __future__ import annotations

from tsbench.targets.influxdb.dialect import bucket_duration, header, host_condition, ident, where_clause
from tsbench.targets.rollups import MEASUREMENT, answerable, whole_minutes
from tsbench.timeutil import NS_PER_DAY
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_types import Kind

RETENTION_POLICY = "rollup"
VIEW = "cpu_1m"
CONTINUOUS_QUERY = "cq_cpu_1m"
SUM, COUNT = "s:", "n:"  # prefixes of a mean's partial columns in a rollup rendering


def target_measurement(database: str) -> str:
    return f"{ident(database)}.{ident(RETENTION_POLICY)}.{ident(VIEW)}"


def _summaries(fields: tuple[str, ...]) -> str:
    return ", ".join(
        f"max({ident(f)}) AS {ident('max_' + f)}, sum({ident(f)}) AS {ident('sum_' + f)}, "
        f"count({ident(f)}) AS {ident('n_' + f)}"
        for f in fields
    )


def create_statements(database: str, fields: tuple[str, ...]) -> list[str]:
    """Drop an earlier rollup (its retention policy and its data, the continuous query), then create
    the retention policy and the continuous query."""
    db = ident(database)
    rp = ident(RETENTION_POLICY)
    return [
        f"DROP CONTINUOUS QUERY {ident(CONTINUOUS_QUERY)} ON {db}",
        f"DROP RETENTION POLICY {rp} ON {db}",
        f"CREATE RETENTION POLICY {rp} ON {db} DURATION INF REPLICATION 1",
        f"CREATE CONTINUOUS QUERY {ident(CONTINUOUS_QUERY)} ON {db} BEGIN SELECT {_summaries(fields)} "
        f"INTO {target_measurement(database)} FROM {ident(MEASUREMENT)} GROUP BY time(1m), * fill(none) END",
    ]


def fill_statements(database: str, fields: tuple[str, ...], start_ns: int, end_ns: int) -> list[str]:
    """The continuous query's ``SELECT … INTO`` over ``[start_ns, end_ns)``, a UTC day per
    statement (bounded memory at any scale)."""
    statements = []
    day = start_ns // NS_PER_DAY * NS_PER_DAY
    while day < end_ns:
        lo, hi = max(day, start_ns), min(day + NS_PER_DAY, end_ns)
        statements.append(
            f"SELECT {_summaries(fields)} INTO {target_measurement(database)} FROM {ident(MEASUREMENT)} "
            f"WHERE time >= {lo} AND time < {hi} GROUP BY time(1m), * fill(none)"
        )
        day += NS_PER_DAY
    return statements


def count_rows(
    database: str,
    fields: tuple[str, ...],
    entity: str,
    start_ns: int | None = None,
    end_ns: int | None = None,
) -> str:
    """Points in the rollup (optionally in a span): the entity tag selected as a value beside the
    counts counts every point, whichever of its fields are present."""
    span = f" WHERE time >= {start_ns} AND time < {end_ns}" if start_ns is not None else ""
    counts = ", ".join(ident("n_" + f) for f in fields)
    inner = f"SELECT {counts}, {ident(entity)} AS n FROM {target_measurement(database)}{span}"
    return f"SELECT count(n) FROM ({inner})"


def _statement(query: LogicalQuery, source: str, on_rollup: bool, lo: int, hi: int) -> str:
    mean = query.query_type.agg == "mean"
    name = f"{query.query_type.agg}_"
    columns = []
    for f in query.fields:
        if mean and on_rollup:
            columns += [f"sum({ident('sum_' + f)}) AS {ident(SUM + name + f)}"]
            columns += [f"sum({ident('n_' + f)}) AS {ident(COUNT + name + f)}"]
        elif mean:
            columns += [f"sum({ident(f)}) AS {ident(SUM + name + f)}"]
            columns += [f"count({ident(f)}) AS {ident(COUNT + name + f)}"]
        else:
            field = ident("max_" + f) if on_rollup else ident(f)
            columns += [f"max({field}) AS {ident(name + f)}"]
    keys = f"time({bucket_duration(query.query_type.bucket_ns)})"
    if query.query_type.kind is Kind.GROUPBY_HOST:
        keys += f", {ident(query.entity)}"
    where = where_clause(host_condition(query), f"time >= {lo} AND time < {hi}")
    return f"SELECT {', '.join(columns)} FROM {source}{where} GROUP BY {keys} fill(none)"


def render_on_rollup(query: LogicalQuery, database: str) -> str | None:
    """``query`` as statements over the rollup's whole minutes and the raw edge minutes, with an
    answer header asking the session to combine them (None: the rollup cannot answer it)."""
    if not answerable(query):
        return None
    assert query.start_ns is not None and query.end_ns is not None
    start, end = query.start_ns, query.end_ns
    first, last = whole_minutes(query)
    raw = ident(MEASUREMENT)
    if first >= last:  # no whole minute inside the window
        statements = [_statement(query, raw, False, start, end)]
    else:
        statements = [_statement(query, target_measurement(database), True, first, last)]
        statements += [
            _statement(query, raw, False, lo, hi) for lo, hi in ((start, first), (last, end)) if lo < hi
        ]
    keys = ["bucket", *([query.entity] if query.query_type.kind is Kind.GROUPBY_HOST else [])]
    names = [f"{query.query_type.agg}_{f}" for f in query.fields]
    combine = "mean" if query.query_type.agg == "mean" else "max"
    return header([*keys, *names], combine=combine) + "; ".join(statements)
