"""IoTDB SQL (its tree model) for the devops and YCSB-TS query kinds.

The data's shape (``writer.py``): database ``root.tsbs``; each entity of a measurement is an aligned
device ``root.tsbs.<measurement>.`<entity>``` (its extra tags, where the measurement has any, are
further levels below it); each field is a series of that device. So a query names its hosts by
path (``FROM``), never by a ``WHERE`` on a column, and every answer's entity is a path level.

A rendering is an answer header line, then the SQL::

    # answer: {"kind": "groupby", "fields": ["usage_user"]}
    SELECT max_value(usage_user) FROM root.tsbs.cpu.`host_1` WHERE time >= … AND time < …
    GROUP BY ([1451606400000, 1451610000000), 1m), LEVEL = 2

Semantics that make answers equal to the oracle's:

- **Instants** are integers in milliseconds (the server's ``timestamp_precision``; rows are whole
  milliseconds). Windows are the half-open ``[start, end)`` of ``time >= start AND time < end``, each
  bound rounded up to a millisecond, which keeps them exact over millisecond data.
- **Buckets** are aligned to the Unix epoch: the ``GROUP BY`` time range starts at the window's
  start floored to the bucket and ends at its end rounded up, while the ``WHERE`` keeps the window
  exact, so a window's partial first and last buckets hold only its rows. A bucket's time is its start.
- **Aggregates over several hosts** are ``GROUP BY LEVEL = 2`` (one value per field over every device
  the paths name, computed from their points, not from per-host results). IoTDB repeats the column
  once per ``FROM`` path; the answer reads the first.
- **Empty buckets** come back as a row of nulls (``GROUP BY`` time emits every bucket of its range);
  the answer leaves out a bucket whose aggregates are all null, as the oracle leaves out a bucket
  without rows. ``groupby-orderby-limit`` filters them in the server (``HAVING count(…) > 0``) before
  ``ORDER BY TIME DESC LIMIT n``, over buckets from the epoch to the end.
- **lastpoint** is ``SELECT LAST``: each series' newest point; a host's row is at the newest of its
  series' times, and a field whose newest point is older was null in that row.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_types import Kind

DATABASE = "root.tsbs"
MEASUREMENT_LEVEL = 2  # root.tsbs.<measurement>: the level an aggregate over hosts groups by
ENTITY_LEVEL = 3  # root.tsbs.<measurement>.<entity>
HEADER = "# answer: "
FUNCTIONS = {
    "max": "max_value",
    "min": "min_value",
    "mean": "avg",
    "avg": "avg",
    "sum": "sum",
    "count": "count",
}
UNITS = ((3_600_000_000_000, "h"), (60_000_000_000, "m"), (1_000_000_000, "s"), (1_000_000, "ms"))
NS_PER_MS = 1_000_000


@dataclass(frozen=True)
class AnswerHeader:
    """What the session needs to turn a result into the answer's rows: the query's kind and fields."""

    kind: Kind
    fields: tuple[str, ...]

    def line(self) -> str:
        return HEADER + json.dumps({"kind": self.kind.value, "fields": list(self.fields)})


def parse(text: str) -> tuple[AnswerHeader, str]:
    """The header and the SQL of a rendering."""
    first, _, sql = text.partition("\n")
    if not first.startswith(HEADER):
        raise ValueError(f"not an IoTDB rendering (no answer header): {text[:80]!r}")
    body = json.loads(first[len(HEADER) :])
    return AnswerHeader(Kind(body["kind"]), tuple(body["fields"])), sql


def node(name: str) -> str:
    """A path node, backquoted (a backquote inside doubled)."""
    return "`" + name.replace("`", "``") + "`"


def measurement_path(measurement: str) -> str:
    """``root.tsbs.<measurement>``: where its schema template is set, above its devices."""
    return f"{DATABASE}.{node(measurement)}"


def device_path(measurement: str, entity: str | None = None, extra_levels: bool = False) -> str:
    """The path of one entity's devices, or of every entity's (``entity`` None)."""
    base = measurement_path(measurement)
    if entity is None:
        return f"{base}.**"
    return f"{base}.{node(entity)}" + (".**" if extra_levels else "")


def _from(query: LogicalQuery, extra: bool) -> str:
    """``FROM`` the devices of the query's hosts (``extra``: the measurement's extra tags are levels
    below each entity)."""
    if query.hosts is None:
        return f" FROM {device_path(query.measurement)}"
    return " FROM " + ", ".join(device_path(query.measurement, host, extra) for host in query.hosts)


def _window(query: LogicalQuery) -> list[str]:
    bounds = []
    if query.start_ns is not None:
        bounds.append(f"time >= {ms(int(query.start_ns))}")
    if query.end_ns is not None:
        bounds.append(f"time < {ms(int(query.end_ns))}")
    return bounds


def ms(ns: int) -> int:
    """An instant in whole milliseconds, rounded up."""
    return -(-ns // NS_PER_MS)


def _where(conditions: list[str]) -> str:
    return f" WHERE {' AND '.join(conditions)}" if conditions else ""


def interval(bucket_ns: int) -> str:
    """A bucket width as IoTDB duration text, e.g. ``1m``, ``1h``."""
    for size, unit in UNITS:
        if bucket_ns % size == 0:
            return f"{bucket_ns // size}{unit}"
    raise ValueError(f"IoTDB buckets are whole milliseconds here; got {bucket_ns} ns")


def _buckets(query: LogicalQuery, start_ns: int, end_ns: int) -> str:
    """``GROUP BY ([floor(start), ceil(end)), bucket)``: epoch-aligned buckets covering the window."""
    bucket = query.query_type.bucket_ns
    low, high = start_ns // bucket * bucket, -(-end_ns // bucket) * bucket
    return f" GROUP BY ([{ms(low)}, {ms(high)}), {interval(bucket)})"


def _aggregates(query: LogicalQuery) -> str:
    function = FUNCTIONS[query.query_type.agg]
    return ", ".join(f"{function}({field})" for field in query.fields)


def _text(query: LogicalQuery, sql: str) -> str:
    return AnswerHeader(query.query_type.kind, query.fields).line() + "\n" + sql


def _aggregated(query: LogicalQuery, extra: bool) -> str:
    """``SELECT <aggregates> FROM <devices> WHERE <window>``."""
    return f"SELECT {_aggregates(query)}{_from(query, extra)}{_where(_window(query))}"


ACROSS_HOSTS = f", LEVEL = {MEASUREMENT_LEVEL}"


def render_groupby(query: LogicalQuery, extra: bool) -> str:
    buckets = _buckets(query, int(query.start_ns), int(query.end_ns))
    return _text(query, f"{_aggregated(query, extra)}{buckets}{ACROSS_HOSTS}")


def render_groupby_host(query: LogicalQuery, extra: bool) -> str:
    buckets = _buckets(query, int(query.start_ns), int(query.end_ns))
    return _text(query, f"{_aggregated(query, extra)}{buckets} ALIGN BY DEVICE")


def render_orderby_limit(query: LogicalQuery, extra: bool) -> str:
    buckets = _buckets(query, 0, int(query.end_ns))
    having = f" HAVING count({query.fields[0]}) > 0 ORDER BY TIME DESC LIMIT {query.query_type.limit}"
    return _text(query, f"{_aggregated(query, extra)}{buckets}{ACROSS_HOSTS}{having}")


def _raw(query: LogicalQuery, extra: bool, conditions: list[str]) -> str:
    fields = ", ".join(query.fields)
    return _text(query, f"SELECT {fields}{_from(query, extra)}{_where(conditions)} ALIGN BY DEVICE")


def render_high_cpu(query: LogicalQuery, extra: bool) -> str:
    # IoTDB does not compare an INT64 series with a decimal literal ("90.0" cannot be cast): a whole
    # threshold is written as an integer, which a DOUBLE series compares with too.
    value = float(query.query_type.threshold)
    threshold = f"{query.fields[0]} > {int(value) if value.is_integer() else value!r}"
    return _raw(query, extra, [threshold, *_window(query)])


def render_lastpoint(query: LogicalQuery, extra: bool) -> str:
    return _text(query, f"SELECT LAST {', '.join(query.fields)}{_from(query, extra)}")


def render_read(query: LogicalQuery, extra: bool) -> str:
    if query.at_ns is None:
        raise ValueError(f"{query.id}: a read needs at_ns")
    return _raw(query, extra, [f"time = {ms(int(query.at_ns))}"])


def render_scan(query: LogicalQuery, extra: bool) -> str:
    return _raw(query, extra, _window(query))


def render_range_agg(query: LogicalQuery, extra: bool) -> str:
    # count of an empty window is 0, avg and sum are null: the oracle's semantics exactly.
    return _text(query, f"{_aggregated(query, extra)} GROUP BY LEVEL = {MEASUREMENT_LEVEL}")


RENDERERS: dict[Kind, Callable[[LogicalQuery, bool], str]] = {
    Kind.GROUPBY: render_groupby,
    Kind.GROUPBY_HOST: render_groupby_host,
    Kind.ORDERBY_LIMIT: render_orderby_limit,
    Kind.HIGH_CPU: render_high_cpu,
    Kind.LASTPOINT: render_lastpoint,
    Kind.READ: render_read,
    Kind.SCAN: render_scan,
    Kind.RANGE_AGG: render_range_agg,
}


def render(query: LogicalQuery, extra_levels: bool = False) -> str:
    """The rendering of ``query``; ``extra_levels``: its measurement's extra tags are path levels
    below each entity (``writer.device_of``)."""
    return RENDERERS[query.query_type.kind](query, extra_levels)
