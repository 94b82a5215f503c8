"""InfluxQL renderings of the logical queries (InfluxDB 1.6).

Every rendering starts with one InfluxQL comment line, the *answer header*, which InfluxDB ignores
and the session (``target.InfluxSession``) reads to shape the JSON result into rows::

    -- answer: bucket,hostname,mean_usage_user
    -- answer: count_usage_user; no rows: 0
    -- answer: bucket,hostname,mean_usage_user; combine: mean

It names the answer's columns in ``answer_columns`` order. ``bucket`` and ``time`` come from the
result's ``time`` column, other names from the result's columns (aggregates are aliased to their
answer names) or, failing that, from the series' group-by tags (``hostname``). ``no rows`` is the
single row an aggregate over no points stands for (InfluxDB returns no series at all): ``0`` for a
count, ``null`` for avg/sum, as in SQL. ``combine`` marks a rendering of several statements whose
rows the session merges per answer key (a rollup's, ``rollup.py``). ``equal: a=b`` names a column
``a`` of the answer that must equal the result's column ``b`` in every row (the session raises
otherwise; ``b`` is not part of the answer): a rendering that can only be exact under a condition on
the data checks that condition (iot avg-load, ``iot_dialect.py``). ``day`` comes from ``time`` too.

Rules that keep answers exact:

- times are integer nanoseconds (``time >= 1451606400000000000``), never RFC3339 strings;
- ``GROUP BY time(...)`` buckets are aligned to the Unix epoch (InfluxDB's default, no offset), and
  ``fill(none)`` leaves out empty buckets, like the oracle;
- groupby-orderby-limit uses ``ORDER BY time DESC LIMIT n``: the *last* n buckets before the end
  (TSBS's InfluxQL text returned the first n);
- lastpoint selects raw rows per host (``GROUP BY hostname ORDER BY time DESC LIMIT 1``): with
  several selector functions (``last(a), last(b)``) InfluxDB reports time 0, not the row's time;
- raw queries select the ``hostname`` tag as a column.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tsbench.targets.clauses import where_clause
from tsbench.targets.window import window_clauses
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_types import Kind

THRESHOLD_FIELD = "usage_user"  # high-cpu filters on it (the oracle's rule)
AGGREGATES = {"max": "max", "mean": "mean", "avg": "mean", "count": "count", "sum": "sum"}
NO_ROWS = {"count": "0", "avg": "null", "sum": "null"}


def ident(name: str) -> str:
    """A double-quoted InfluxQL identifier."""
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def literal(text: str) -> str:
    """A single-quoted InfluxQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def header(
    columns: list[str],
    no_rows: str | None = None,
    combine: str | None = None,
    equal: tuple[str, str] | None = None,
) -> str:
    text = "-- answer: " + ",".join(columns)
    text += f"; no rows: {no_rows}" if no_rows is not None else ""
    text += f"; combine: {combine}" if combine is not None else ""
    return text + (f"; equal: {equal[0]}={equal[1]}" if equal is not None else "") + "\n"


def _window(query: LogicalQuery) -> str:
    return " AND ".join(window_clauses(query, "time", str))


def host_condition(query: LogicalQuery) -> str:
    if query.hosts is None:
        return ""
    terms = [f"{ident(query.entity)} = {literal(host)}" for host in query.hosts]
    return terms[0] if len(terms) == 1 else "(" + " OR ".join(terms) + ")"


def _hosts_in_window(query: LogicalQuery) -> str:
    return where_clause(host_condition(query), _window(query))


def bucket_duration(ns: int) -> str:
    return f"{ns // 1_000_000_000}s" if ns % 1_000_000_000 == 0 else f"{ns}ns"


def _aggregates(query: LogicalQuery) -> tuple[list[str], str]:
    qtype = query.query_type
    function = AGGREGATES[qtype.agg]
    names = [f"{qtype.agg}_{f}" for f in query.fields]
    select = ", ".join(
        f"{function}({ident(f)}) AS {ident(n)}" for f, n in zip(query.fields, names, strict=True)
    )
    return names, select


def _raw_fields(query: LogicalQuery) -> str:
    return ", ".join(ident(f) for f in (query.entity, *query.fields))


def render_groupby(query: LogicalQuery) -> str:
    names, select = _aggregates(query)
    bucket = bucket_duration(query.query_type.bucket_ns)
    return header(["bucket", *names]) + (
        f"SELECT {select} FROM {ident(query.measurement)}{_hosts_in_window(query)} "
        f"GROUP BY time({bucket}) fill(none)"
    )


def render_groupby_host(query: LogicalQuery) -> str:
    names, select = _aggregates(query)
    bucket = bucket_duration(query.query_type.bucket_ns)
    return header(["bucket", query.entity, *names]) + (
        f"SELECT {select} FROM {ident(query.measurement)}{_hosts_in_window(query)} "
        f"GROUP BY time({bucket}), {ident(query.entity)} fill(none)"
    )


def render_high_cpu(query: LogicalQuery) -> str:
    qtype = query.query_type
    condition = f"{ident(THRESHOLD_FIELD)} > {float(qtype.threshold)!r}"
    where = where_clause(condition, host_condition(query), _window(query))
    return header(["time", query.entity, *query.fields]) + (
        f"SELECT {_raw_fields(query)} FROM {ident(query.measurement)}{where}"
    )


def render_lastpoint(query: LogicalQuery) -> str:
    fields = ", ".join(ident(f) for f in query.fields)
    return header([query.entity, "time", *query.fields]) + (
        f"SELECT {fields} FROM {ident(query.measurement)}{where_clause(host_condition(query))} "
        f"GROUP BY {ident(query.entity)} ORDER BY time DESC LIMIT 1"
    )


def render_orderby_limit(query: LogicalQuery) -> str:
    qtype = query.query_type
    names, select = _aggregates(query)
    bucket = bucket_duration(qtype.bucket_ns)
    return header(["bucket", *names]) + (
        f"SELECT {select} FROM {ident(query.measurement)}{_hosts_in_window(query)} "
        f"GROUP BY time({bucket}) fill(none) ORDER BY time DESC LIMIT {int(qtype.limit)}"
    )


def render_read(query: LogicalQuery) -> str:
    where = where_clause(host_condition(query), f"time = {int(query.at_ns)}")
    return header(["time", query.entity, *query.fields]) + (
        f"SELECT {_raw_fields(query)} FROM {ident(query.measurement)}{where}"
    )


def render_scan(query: LogicalQuery) -> str:
    return header(["time", query.entity, *query.fields]) + (
        f"SELECT {_raw_fields(query)} FROM {ident(query.measurement)}{_hosts_in_window(query)}"
    )


def render_range_agg(query: LogicalQuery) -> str:
    names, select = _aggregates(query)
    return header(names, NO_ROWS[query.query_type.agg]) + (
        f"SELECT {select} FROM {ident(query.measurement)}{_hosts_in_window(query)}"
    )


RENDERERS: dict[Kind, Callable[[LogicalQuery], str]] = {
    Kind.GROUPBY: render_groupby,
    Kind.GROUPBY_HOST: render_groupby_host,
    Kind.HIGH_CPU: render_high_cpu,
    Kind.LASTPOINT: render_lastpoint,
    Kind.ORDERBY_LIMIT: render_orderby_limit,
    Kind.READ: render_read,
    Kind.SCAN: render_scan,
    Kind.RANGE_AGG: render_range_agg,
}


def render(query: LogicalQuery) -> str:
    return RENDERERS[query.query_type.kind](query)


@dataclass(frozen=True)
class AnswerHeader:
    """A rendering's answer header: the answer's columns; the single row an aggregate over no
    points stands for (``no rows``); how the rows of several statements merge (``combine``: max or
    mean; a rollup rendering, ``rollup.py``); an answer column and the result column it must equal
    in every row (``equal``)."""

    columns: list[str]
    no_rows: str | None = None
    combine: str | None = None
    equal: tuple[str, str] | None = None


def parse_header(text: str) -> AnswerHeader:
    """The rendering's answer header (ValueError if there is none)."""
    first = text.lstrip().split("\n", 1)[0]
    if not first.startswith("-- answer: "):
        raise ValueError("InfluxQL text without the '-- answer: …' header line rendered by dialect.py")
    spec, *options = first.removeprefix("-- answer: ").split("; ")
    named = dict(option.split(": ", 1) for option in options)
    columns = [c.strip() for c in spec.split(",")]
    equal = None
    if "equal" in named:
        column, other = named["equal"].split("=", 1)
        equal = (column, other)
    return AnswerHeader(columns, named.get("no rows"), named.get("combine"), equal)
