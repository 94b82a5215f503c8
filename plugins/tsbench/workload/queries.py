"""Logical queries: database-neutral instances of the query types, generated deterministically.

Random parts follow TSBS: a window of the type's length placed uniformly inside the data range
(generation uses an end 1 s after the data's end), hosts drawn uniformly without repeats. Window
starts are whole seconds so that every database represents them exactly (PostgreSQL keeps µs,
QuestDB µs, InfluxDB ns). Each type draws from its own seeded stream, so adding a type never changes
the queries of another.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tsbench.timeutil import NS_PER_SECOND, format_instant
from tsbench.workload.generate.common import stream
from tsbench.workload.query_types import Kind, QueryType, get_query_type
from tsbench.workload.usecases import CPU_FIELDS, get_use_case


@dataclass(frozen=True)
class DataRange:
    """What query generation needs to know of a dataset (times in ns, end exclusive)."""

    start_ns: int
    end_ns: int
    interval_ns: int
    entities: int
    entity_prefix: str = "host_"
    measurement: str = "cpu"  # the measurement queries read
    entity_key: str = "hostname"
    fields: tuple[str, ...] = CPU_FIELDS  # the fields queries may read, in order
    groups: tuple[str, ...] = ()  # the fleets a fleet query draws from (iot)

    @classmethod
    def of(cls, dataset: Any) -> DataRange:
        """From a ``Dataset`` (duck-typed to avoid importing dataset I/O here)."""
        return cls.spanning(
            dataset.use_case, dataset.start_ns, dataset.end_ns, dataset.interval_ns, dataset.scale
        )

    @classmethod
    def of_spec(cls, spec: Any) -> DataRange:
        """From a ``DatasetSpec``, before its dataset exists: what ``of`` gives once it does."""
        return cls.spanning(get_use_case(spec.use_case), spec.start, spec.end, spec.interval, spec.scale)

    @classmethod
    def spanning(
        cls, use_case: Any, start_ns: int, end_ns: int, interval_ns: int, entities: int
    ) -> DataRange:
        return cls(
            start_ns,
            end_ns,
            interval_ns,
            entities,
            use_case.entity_prefix,
            use_case.queried,
            use_case.entity_key,
            use_case.query_fields,
            use_case.groups,
        )


@dataclass(frozen=True)
class LogicalQuery:
    """One query. ``hosts`` None = all hosts. Times are ns UTC; windows are ``[start_ns, end_ns)``.

    ``at_ns`` is the exact timestamp of a READ. ``fields`` are the fields the query reads, of
    ``measurement``, whose entity key (tag or column) is ``entity``. ``fleet`` is the fleet whose
    trucks an iot fleet query reads.
    """

    id: str
    type: str
    fields: tuple[str, ...]
    hosts: tuple[str, ...] | None = None
    start_ns: int | None = None
    end_ns: int | None = None
    at_ns: int | None = None
    measurement: str = "cpu"
    entity: str = "hostname"
    fleet: str | None = None

    @property
    def query_type(self) -> QueryType:
        return get_query_type(self.type)

    @property
    def asks(self) -> tuple[Any, ...]:
        """What the query asks, without its id: equal for two queries with the same answer."""
        return tuple(value for name, value in vars(self).items() if name != "id")

    def to_json(self) -> dict[str, Any]:
        body = asdict(self)
        for key in ("start_ns", "end_ns", "at_ns"):
            if body[key] is not None:
                body[key.removesuffix("_ns")] = format_instant(body[key])
        return body

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> LogicalQuery:
        hosts = body.get("hosts")
        return cls(
            id=body["id"],
            type=body["type"],
            fields=tuple(body["fields"]),
            hosts=None if hosts is None else tuple(hosts),
            start_ns=body.get("start_ns"),
            end_ns=body.get("end_ns"),
            at_ns=body.get("at_ns"),
            measurement=body.get("measurement", "cpu"),
            entity=body.get("entity", "hostname"),
            fleet=body.get("fleet"),
        )


def _seconds(rng: np.random.Generator, low_ns: int, high_ns: int) -> int:
    """A uniform whole-second instant in ``[low_ns, high_ns)`` (``low_ns`` if the range is empty)."""
    span = (high_ns - low_ns) // NS_PER_SECOND
    return low_ns + (int(rng.integers(0, span)) * NS_PER_SECOND if span > 0 else 0)


def _hosts(rng: np.random.Generator, data: DataRange, count: int) -> tuple[str, ...]:
    picks = rng.choice(data.entities, size=count, replace=False)
    return tuple(f"{data.entity_prefix}{int(i)}" for i in picks)


def make_query(qtype: QueryType, index: int, rng: np.random.Generator, data: DataRange) -> LogicalQuery:
    """Instance ``index`` of ``qtype`` over ``data``."""
    query_end = data.end_ns + NS_PER_SECOND
    hosts = None if qtype.hosts is None else _hosts(rng, data, qtype.hosts)
    common: dict[str, Any] = {
        "id": f"{qtype.name}#{index}",
        "type": qtype.name,
        "fields": qtype.reads or data.fields[: qtype.nfields],
        "hosts": hosts,
        "measurement": qtype.measurement or data.measurement,
        "entity": data.entity_key,
    }
    if qtype.fleet:
        common["fleet"] = data.groups[int(rng.integers(0, len(data.groups)))]
    if qtype.kind is not Kind.ORDERBY_LIMIT and qtype.kind is not Kind.READ and not qtype.window_ns:
        return LogicalQuery(**common)  # lastpoint and the all-data iot types
    if qtype.kind is Kind.READ:
        epoch = int(rng.integers(0, (data.end_ns - data.start_ns) // data.interval_ns))
        return LogicalQuery(**common, at_ns=data.start_ns + epoch * data.interval_ns)
    if qtype.kind is Kind.ORDERBY_LIMIT:
        end = _seconds(rng, data.start_ns + qtype.limit * qtype.bucket_ns, query_end)
        return LogicalQuery(**common, end_ns=end)
    start = _seconds(rng, data.start_ns, query_end - qtype.window_ns)
    return LogicalQuery(**common, start_ns=start, end_ns=start + qtype.window_ns)


def generate_queries(data: DataRange, types: Iterable[str], per_type: int, seed: int) -> list[LogicalQuery]:
    """``per_type`` queries of every type, grouped by type in the given order."""
    queries = []
    for name in types:
        qtype = get_query_type(name)
        if qtype.hosts is not None and qtype.hosts > data.entities:
            raise ValueError(f"query type {name} needs {qtype.hosts} hosts; the dataset has {data.entities}")
        rng = stream(seed, f"queries/{name}")
        queries.extend(make_query(qtype, i, rng, data) for i in range(per_type))
    return queries


def write_jsonl(path: str | os.PathLike[str], items: Iterable[dict[str, Any]]) -> Path:
    """Write JSON lines atomically (temporary file + rename)."""
    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}.tmp-{os.getpid()}")
    with open(tmp, "w") as handle:
        for item in items:
            handle.write(json.dumps(item, separators=(",", ":")) + "\n")
    os.replace(tmp, final)
    return final


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    with open(path) as handle:
        return [json.loads(line) for line in handle if line.strip()]


def write_query_set(path: str | os.PathLike[str], queries: Iterable[LogicalQuery]) -> Path:
    return write_jsonl(path, (q.to_json() for q in queries))


def read_query_set(path: str | os.PathLike[str]) -> list[LogicalQuery]:
    return [LogicalQuery.from_json(body) for body in read_jsonl(path)]
