"""The catalogue of logical query types (TSBS devops queries + YCSB-TS operations).

A query type fixes the semantics; a logical query (see ``queries.py``) adds the random parts
(hosts, time window) and what it reads: the use case's queried measurement and its first ``nfields``
fields (``cpu`` and its ten fields for devops data; ``usermetric.value`` for YCSB-TS records). A use
case answers the families it declares (``UseCase.query_families``). Buckets are aligned to the Unix
epoch (``floor(time / bucket) * bucket``); windows are half-open ``[start, end)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tsbench.timeutil import NS_PER_HOUR, NS_PER_MINUTE
from tsbench.workload.iot_query_types import IOT_DESCRIPTIONS, iot_types
from tsbench.workload.query_kinds import Kind
from tsbench.workload.usecases import CPU_FIELDS


def _span_text(ns: int) -> str:
    """``3_600e9`` → ``"1 h"``, ``60e9`` → ``"1 min"``."""
    if ns % NS_PER_HOUR == 0:
        return f"{ns // NS_PER_HOUR} h"
    return f"{ns // NS_PER_MINUTE} min"


@dataclass(frozen=True)
class QueryType:
    """Semantics of one query type. ``hosts`` None means all hosts; ``window_ns`` 0 means none."""

    name: str
    kind: Kind
    agg: str = ""
    nfields: int = len(CPU_FIELDS)
    hosts: int | None = None
    window_ns: int = 0
    bucket_ns: int = 0
    limit: int = 0
    threshold: float = 0.0
    family: str = "devops"
    measurement: str = ""  # the measurement it reads when the type fixes it (iot); else the use case's
    reads: tuple[str, ...] = ()  # the fields it reads when the type fixes them (iot)
    fleet: bool = False  # it reads the trucks of one random fleet (iot)

    @property
    def fields(self) -> tuple[str, ...]:
        """The fields it reads: its own (iot), else the first ``nfields`` cpu fields on devops data
        (a query's own ``fields`` say what it reads)."""
        return self.reads or CPU_FIELDS[: self.nfields]

    @property
    def bucket_text(self) -> str:
        return _span_text(self.bucket_ns).removeprefix("1 ")

    @property
    def window_text(self) -> str:
        return _span_text(self.window_ns)

    @property
    def hosts_text(self) -> str:
        return "all hosts" if self.hosts is None else f"{self.hosts} host(s)"

    @property
    def describe(self) -> str:
        """One sentence for reports."""
        template = _DESCRIPTIONS.get(self.kind) or IOT_DESCRIPTIONS[self.kind]
        return template.format(q=self, fields=", ".join(self.fields))


_DESCRIPTIONS = {
    Kind.GROUPBY: "{q.agg} of {fields} per {q.bucket_text} for {q.hosts} random host(s) over a "
    "{q.window_text} window",
    Kind.GROUPBY_HOST: "{q.agg} of {fields} per host per {q.bucket_text}, all hosts, {q.window_text} window",
    Kind.HIGH_CPU: "rows with usage_user > {q.threshold} for {q.hosts_text} in a {q.window_text} window",
    Kind.LASTPOINT: "the most recent row of every host",
    Kind.ORDERBY_LIMIT: "max(usage_user) per {q.bucket_text} for the last {q.limit} buckets before "
    "a random end time",
    Kind.READ: "one row of one host (metric) by exact timestamp",
    Kind.SCAN: "all rows of one host (metric) in a {q.window_text} window",
    Kind.RANGE_AGG: "{q.agg} of the first field (usage_user; value on ycsb-ts data) of one host (metric) "
    "over a {q.window_text} window",
}


def _groupby_types() -> list[QueryType]:
    """TSBS's aggregations per time bucket: single-groupby, cpu-max-all and double-groupby."""
    types: list[QueryType] = []
    for nfields, hosts, hours in ((1, 1, 1), (1, 1, 12), (1, 8, 1), (5, 1, 1), (5, 1, 12), (5, 8, 1)):
        types.append(
            QueryType(
                f"single-groupby-{nfields}-{hosts}-{hours}",
                Kind.GROUPBY,
                agg="max",
                nfields=nfields,
                hosts=hosts,
                window_ns=hours * NS_PER_HOUR,
                bucket_ns=NS_PER_MINUTE,
            )
        )
    for hosts in (1, 8):
        types.append(
            QueryType(
                f"cpu-max-all-{hosts}",
                Kind.GROUPBY,
                agg="max",
                hosts=hosts,
                window_ns=8 * NS_PER_HOUR,
                bucket_ns=NS_PER_HOUR,
            )
        )
    for suffix, nfields in (("1", 1), ("5", 5), ("all", 10)):
        types.append(
            QueryType(
                f"double-groupby-{suffix}",
                Kind.GROUPBY_HOST,
                agg="mean",
                nfields=nfields,
                window_ns=12 * NS_PER_HOUR,
                bucket_ns=NS_PER_HOUR,
            )
        )
    return types


def _selection_types() -> list[QueryType]:
    """TSBS's row selections: high-cpu, lastpoint and groupby-orderby-limit."""
    high_cpu = [
        QueryType(
            f"high-cpu-{suffix}", Kind.HIGH_CPU, hosts=hosts, window_ns=12 * NS_PER_HOUR, threshold=90.0
        )
        for suffix, hosts in (("1", 1), ("all", None))
    ]
    return [
        *high_cpu,
        QueryType("lastpoint", Kind.LASTPOINT),
        QueryType(
            "groupby-orderby-limit",
            Kind.ORDERBY_LIMIT,
            agg="max",
            nfields=1,
            bucket_ns=NS_PER_MINUTE,
            limit=5,
        ),
    ]


def _ycsb_types() -> list[QueryType]:
    """YCSB-TS's operations on one host: read, scan and the range aggregates."""
    family = "ycsb-ts"
    return [
        QueryType("ycsb-read", Kind.READ, hosts=1, family=family),
        QueryType("ycsb-scan", Kind.SCAN, hosts=1, window_ns=NS_PER_HOUR, family=family),
        *(
            QueryType(
                f"ycsb-{agg}",
                Kind.RANGE_AGG,
                agg=agg,
                nfields=1,
                hosts=1,
                window_ns=NS_PER_HOUR,
                family=family,
            )
            for agg in ("count", "avg", "sum")
        ),
    ]


def _catalogue() -> dict[str, QueryType]:
    """Every query type by name, devops (TSBS) first, in the order reports list them."""
    types = (*_groupby_types(), *_selection_types(), *_ycsb_types(), *iot_types(QueryType))
    return {item.name: item for item in types}


QUERY_TYPES: dict[str, QueryType] = _catalogue()
DEVOPS_QUERY_TYPES = tuple(name for name, q in QUERY_TYPES.items() if q.family == "devops")


def types_of(families: Iterable[str]) -> list[str]:
    """The catalogue's types of the given families (a use case's ``query_families``), in order."""
    wanted = set(families)
    return [name for name, qtype in QUERY_TYPES.items() if qtype.family in wanted]


def get_query_type(name: str) -> QueryType:
    try:
        return QUERY_TYPES[name]
    except KeyError:
        raise ValueError(f"unknown query type {name!r}; known: {', '.join(QUERY_TYPES)}") from None
