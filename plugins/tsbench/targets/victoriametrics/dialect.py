"""MetricsQL renderings of the logical queries (VictoriaMetrics' query API).

Line protocol becomes one series per field: ``cpu,hostname=host_1,… usage_user=5`` is the sample of
series ``cpu_usage_user{hostname="host_1",…}`` (VictoriaMetrics joins measurement and field with
``_``). A rendering is the requests that compute one answer, after an answer header::

    # answer: {"columns": ["bucket", "max_usage_user"], "by": ["bucket"], "bucket_ns": 60000000000, …}
    range 1451606459.999 1451609999.999 60s
    max by (__name__) (max_over_time({__name__=~"cpu_(usage_user)",hostname="host_1"}[60s]) keep_metric_names)
    instant 1451606439.999
    max by (__name__) (max_over_time({__name__=~"cpu_(usage_user)",hostname="host_1"}[40s]) keep_metric_names)

Each request is a line ``range <start> <end> <step>`` (``/api/v1/query_range``) or ``instant
<time> [times]`` (``/api/v1/query``; ``times``: its values are the answer's ``time`` column), times in
Unix seconds to the millisecond, followed by its expression. The session (``answers.py``) sends
them in order and merges their series into the answer's rows.

Semantics that make answers equal to the oracle's:

- **Windows.** A rollup ``f_over_time(m[d])`` evaluated at ``t`` reads the raw samples in
  ``(t - d, t]``; samples are kept to the millisecond, so evaluating at ``b - 1 ms`` with ``d = b - a``
  reads exactly the half-open ``[a, b)`` the oracle uses. No lookback or staleness rule applies:
  every expression names its window, and raw samples are read, never a step's "current" value.
- **Step alignment.** Buckets are aligned to the Unix epoch. The whole buckets of a window are one
  range query with ``step`` = the bucket, evaluated at each bucket's last millisecond; a window's
  partial first and last buckets (window starts are whole seconds, not whole minutes) are an instant
  query each, over the part inside the window. A point's bucket is its timestamp floored to the
  bucket. The response cache is off (``-search.disableCache``), so VictoriaMetrics evaluates at
  exactly the times asked (with the cache it moves ``start`` and ``end`` onto multiples of ``step``).
- **Empty buckets** return no point (a rollup over no sample is NaN, left out), as the oracle leaves
  them out; an aggregate of one host over no sample is the ``no rows`` row (count 0, else null).
- ``keep_metric_names`` keeps each series' field in its name through the rollup, so one request
  reads several fields; ``max by (__name__)`` takes the maximum over the chosen hosts per field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from tsbench.workload.answers import answer_columns
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_types import QUERY_TYPES, Kind

NS_PER_MS = 1_000_000
ROLLUPS = {
    "max": "max_over_time",
    "min": "min_over_time",
    "mean": "avg_over_time",
    "avg": "avg_over_time",
    "count": "count_over_time",
    "sum": "sum_over_time",
}
# Aggregates whose value over several hosts is the same aggregate of the per-host values.
ACROSS_HOSTS = {"max": "max", "min": "min", "count": "sum", "sum": "sum"}
NO_ROWS = {"count": 0, "avg": None, "sum": None}
# lastpoint and counting rows read every sample: a window from the epoch to this instant (2100-01-01).
ALL_TIME_END_MS = 4_102_444_800_000

# What MetricsQL cannot express, with the reason (``Capabilities.unsupported``).
ROW_SELECTION = (
    "rows whose usage_user exceeds 90, with all their fields: each field is a series of its own, and "
    "MetricsQL compares series only at evaluation steps (values looked back from each step), so it "
    "cannot return the other fields' raw samples of exactly the instants that pass the filter"
)
LAST_BUCKETS = (
    "the last 5 one-minute buckets that hold data before a random end: MetricsQL has no ORDER BY or "
    "LIMIT over time; a range query returns every step of its range, empty or not"
)
IOT = (
    "TSBS iot conditions across fields and rows of one truck (sessions, stationary periods, per-row "
    "filters on several fields, fleet joins): each field is a series of its own, and MetricsQL "
    "evaluates series at steps, not rows"
)
UNSUPPORTED: dict[str, str] = {
    **{name: ROW_SELECTION for name, q in QUERY_TYPES.items() if q.kind is Kind.HIGH_CPU},
    **{name: LAST_BUCKETS for name, q in QUERY_TYPES.items() if q.kind is Kind.ORDERBY_LIMIT},
    **{name: IOT for name, q in QUERY_TYPES.items() if q.family == "iot"},
}


@dataclass(frozen=True)
class AnswerHeader:
    """How the session turns the requests' series into answer rows: the answer's ``columns``; the
    key columns taken from each point (``by``: ``bucket``, ``time``, the entity label); the bucket
    width; the answer column of each series name (``values``); the entity label; the row an
    aggregate over no sample stands for."""

    columns: list[str]
    by: list[str]
    values: dict[str, str]
    entity: str
    bucket_ns: int = 0
    no_rows: list[object] | None = None


@dataclass(frozen=True)
class Request:
    """One call of the query API: ``range`` (start, end, step) or ``instant`` (time); ``times``: its
    points' values are sample times (``tlast_over_time``), not field values."""

    kind: str
    expression: str
    start_ms: int = 0
    end_ms: int = 0
    step_ms: int = 0
    times: bool = False

    def line(self) -> str:
        if self.kind == "range":
            return f"range {seconds(self.start_ms)} {seconds(self.end_ms)} {duration(self.step_ms)}"
        return f"instant {seconds(self.end_ms)}" + (" times" if self.times else "")


@dataclass(frozen=True)
class Rendering:
    header: AnswerHeader
    requests: list[Request] = field(default_factory=list)

    def text(self) -> str:
        head = json.dumps(self.header.__dict__, separators=(", ", ": "))
        return "\n".join([f"# answer: {head}", *(f"{r.line()}\n{r.expression}" for r in self.requests)])


def seconds(ms: int) -> str:
    """Unix seconds to the millisecond, as the query API reads them."""
    return f"{ms // 1000}.{ms % 1000:03d}"


def duration(ms: int) -> str:
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


def quoted(text: str) -> str:
    return json.dumps(text)  # a MetricsQL string literal: double quotes, backslash escapes


def selector(query: LogicalQuery, fields: tuple[str, ...] | None = None) -> str:
    """The series of ``fields`` (default: the query's) of the query's hosts."""
    names = "|".join(re.escape(f) for f in (fields or query.fields))
    terms = [f"__name__=~{quoted(f'{re.escape(query.measurement)}_({names})')}"]
    if query.hosts is not None:
        hosts = [re.escape(h) for h in query.hosts]
        operator, value = ("=", query.hosts[0]) if len(hosts) == 1 else ("=~", "|".join(hosts))
        terms.append(f"{query.entity}{operator}{quoted(value)}")
    return "{" + ",".join(terms) + "}"


def header(query: LogicalQuery, by: list[str], no_rows: list[object] | None = None) -> AnswerHeader:
    qtype = query.query_type
    columns, _ = answer_columns(qtype, query.fields)
    named = columns[len(columns) - len(query.fields) :]
    values = {f"{query.measurement}_{f}": column for f, column in zip(query.fields, named, strict=True)}
    return AnswerHeader(columns, by, values, query.entity, qtype.bucket_ns, no_rows)


def bucket_requests(query: LogicalQuery, expression: Callable[[int], str]) -> list[Request]:
    """The window's whole buckets as one range query and its partial first and last buckets as an
    instant query each; ``expression(window_ms)`` is the MetricsQL over one bucket's window."""
    start, end = int(query.start_ns) // NS_PER_MS, int(query.end_ns) // NS_PER_MS
    bucket = query.query_type.bucket_ns // NS_PER_MS
    first_whole = -(-start // bucket) * bucket
    last_whole_end = end // bucket * bucket
    if first_whole >= end:  # the window lies inside one bucket
        return [Request("instant", expression(end - start), end_ms=end - 1)]
    requests = []
    if start < first_whole:
        requests.append(Request("instant", expression(first_whole - start), end_ms=first_whole - 1))
    if last_whole_end > first_whole:
        requests.append(
            Request("range", expression(bucket), first_whole + bucket - 1, last_whole_end - 1, bucket)
        )
    if last_whole_end < end:
        requests.append(Request("instant", expression(end - last_whole_end), end_ms=end - 1))
    return requests


def render_groupby(query: LogicalQuery) -> Rendering:
    agg = query.query_type.agg
    if agg not in ACROSS_HOSTS:
        raise NotImplementedError(f"victoriametrics: {agg} over several hosts is not their {agg}s' {agg}")
    rollup, across = ROLLUPS[agg], ACROSS_HOSTS[agg]

    def expression(window_ms: int) -> str:
        inner = f"{rollup}({selector(query)}[{duration(window_ms)}]) keep_metric_names"
        return f"{across} by (__name__) ({inner})"

    return Rendering(header(query, ["bucket"]), bucket_requests(query, expression))


def render_groupby_host(query: LogicalQuery) -> Rendering:
    rollup = ROLLUPS[query.query_type.agg]

    def expression(window_ms: int) -> str:
        return f"{rollup}({selector(query)}[{duration(window_ms)}]) keep_metric_names"

    return Rendering(header(query, ["bucket", "hostname"]), bucket_requests(query, expression))


def render_lastpoint(query: LogicalQuery) -> Rendering:
    """Each host's last sample of every field, and the time of its first field's last sample."""
    window = duration(ALL_TIME_END_MS)
    values = f"last_over_time({selector(query)}[{window}]) keep_metric_names"
    times = f"tlast_over_time({selector(query, query.fields[:1])}[{window}])"
    return Rendering(
        header(query, ["hostname"]),
        [
            Request("instant", values, end_ms=ALL_TIME_END_MS),
            Request("instant", times, end_ms=ALL_TIME_END_MS, times=True),
        ],
    )


def _raw_samples(query: LogicalQuery, start_ns: int, end_ns: int) -> Rendering:
    """The raw samples of the query's series in ``[start, end)`` (a range vector at ``end - 1 ms``)."""
    start, end = start_ns // NS_PER_MS, end_ns // NS_PER_MS
    expression = f"{selector(query)}[{duration(end - start)}]"
    return Rendering(header(query, ["time", "hostname"]), [Request("instant", expression, end_ms=end - 1)])


def render_read(query: LogicalQuery) -> Rendering:
    return _raw_samples(query, int(query.at_ns), int(query.at_ns) + NS_PER_MS)


def render_scan(query: LogicalQuery) -> Rendering:
    return _raw_samples(query, int(query.start_ns), int(query.end_ns))


def render_range_agg(query: LogicalQuery) -> Rendering:
    agg = query.query_type.agg
    start, end = int(query.start_ns) // NS_PER_MS, int(query.end_ns) // NS_PER_MS
    expression = f"{ROLLUPS[agg]}({selector(query)}[{duration(end - start)}]) keep_metric_names"
    return Rendering(header(query, [], [NO_ROWS[agg]]), [Request("instant", expression, end_ms=end - 1)])


RENDERERS: dict[Kind, Callable[[LogicalQuery], Rendering]] = {
    Kind.GROUPBY: render_groupby,
    Kind.GROUPBY_HOST: render_groupby_host,
    Kind.LASTPOINT: render_lastpoint,
    Kind.READ: render_read,
    Kind.SCAN: render_scan,
    Kind.RANGE_AGG: render_range_agg,
}


def render(query: LogicalQuery) -> str:
    if query.type in UNSUPPORTED:
        raise NotImplementedError(f"victoriametrics: {query.type}: {UNSUPPORTED[query.type]}")
    return RENDERERS[query.query_type.kind](query).text()


def parse(text: str) -> tuple[AnswerHeader, list[Request]]:
    """The header and requests of a rendering (ValueError for text ``render`` did not write)."""
    lines = text.strip().split("\n")
    if not lines[0].startswith("# answer: ") or len(lines) % 2 != 1:
        raise ValueError(
            "MetricsQL text without the '# answer: …' header and request lines dialect.py writes"
        )
    head = AnswerHeader(**json.loads(lines[0].removeprefix("# answer: ")))
    requests = []
    for call, expression in zip(lines[1::2], lines[2::2], strict=True):
        kind, *words = call.split()
        ms = [round(float(word) * 1000) for word in words if word[0].isdigit() and not word.endswith("s")]
        if kind == "range":
            step = words[2]
            step_ms = int(step[:-2]) if step.endswith("ms") else int(step[:-1]) * 1000
            requests.append(Request("range", expression, ms[0], ms[1], step_ms))
        else:
            requests.append(Request("instant", expression, end_ms=ms[0], times="times" in words))
    return head, requests
