"""MongoDB targets: ``mongodb`` (one document per host per hour) and ``mongodb_naive`` (one document
per event in a time-series collection).

No MongoDB server can be obtained on our machines, so what runs here is:

(a) document shaping — the layouts' own code turns generated datasets into documents / upserts, and
    those are turned back into rows and compared with the dataset (no server involved);
(b) rendering — golden pipelines for representative queries and structural checks for every type;
(c) **emulator checks** — every rendered pipeline runs on **mongomock 4.3** (an in-memory Python
    re-implementation of part of MongoDB's API, *not* MongoDB) over the documents of (a), and the
    answers are compared with the oracle's. Where mongomock differs from MongoDB in a way that
    matters here (listed in ``MONGOMOCK_GAPS``), that part is checked structurally instead;
(d) the real pymongo client against a closed port, the server recipe's files, the install scripts'
    fail-fast path and the version pins.

What only a real server (Docker / cloud runtime) exercises: time-series bucketing, bulk_write as
sent by the hourly writer, indexes and query plans, write concern / journal, $collStats, buildInfo.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import mongomock
import pyarrow as pa
import pytest
import yaml
from bson import json_util

from tsbench.runtimes.cloud_install import render_install_script
from tsbench.runtimes.definition import load_definition
from tsbench.runtimes.ports import free_port
from tsbench.spec import DatasetSpec
from tsbench.targets.base import Endpoint, TargetError
from tsbench.targets.mongodb import container as mongo_container
from tsbench.targets.mongodb import dialect as hourly_dialect
from tsbench.targets.mongodb.client import MongoSession, connect
from tsbench.targets.mongodb.definition import DEFINITION
from tsbench.targets.mongodb.hourly import HourlyLayout
from tsbench.targets.mongodb.pipelines import EPOCH, instant, parse_query_text
from tsbench.targets.mongodb.server import MongoServer, ping
from tsbench.targets.mongodb.target import MongoHourlyTarget
from tsbench.targets.mongodb_naive import container as naive_container
from tsbench.targets.mongodb_naive import dialect as naive_dialect
from tsbench.targets.mongodb_naive.events import EventLayout
from tsbench.targets.mongodb_naive.target import MongoNaiveTarget
from tsbench.targets.registry import load_target
from tsbench.timeutil import NS_PER_HOUR, NS_PER_SECOND, parse_instant
from tsbench.workload.answers import Answer, answer_columns, compare
from tsbench.workload.dataset import Dataset, ensure_dataset
from tsbench.workload.oracle import Oracle
from tsbench.workload.queries import DataRange, LogicalQuery, generate_queries
from tsbench.workload.query_types import QUERY_TYPES, Kind, QueryType
from tsbench.workload.usecases import get_use_case

TARGETS = Path(__file__).resolve().parents[2] / "plugins" / "tsbench" / "targets"
INSTALL_SCRIPT = TARGETS / "mongodb" / "install.sh"
VERSION = DEFINITION.version
T0 = parse_instant("2016-01-01T00:00:00Z")

# Where mongomock 4.3 (with pymongo 4.20) is not MongoDB, for what these targets use.
MONGOMOCK_GAPS = {
    "timeseries": "create_collection(timeseries=…) raises NotImplementedError: the naive layout's "
    "event documents go into a plain collection (a time-series collection returns the same documents "
    "to queries; its bucketing is not emulated)",
    "bulk_write": "bulk_write(UpdateOne…) fails (pymongo 4.20 passes a 'sort' argument mongomock does "
    "not know): the hourly layout's upserts are applied one by one with update_one — the same filter "
    "and update documents, not the same request",
    "empty $group": "$group {_id: null} over no input yields one document (MongoDB yields none): "
    "range-agg over an empty window is checked structurally ($facet + $ifNull)",
    "$mod": "returns a float (math.fmod); MongoDB returns a long for long operands — the same bucket "
    "instants either way at these magnitudes",
    "plans": "no indexes are used and no plan is chosen: performance-minded shapes (index order, "
    "lastpoint's $sort + $group $first) are checked structurally only",
}


def ns_of(moment: datetime) -> int:
    """A naive-UTC or aware datetime → ns since the epoch, exactly."""
    moment = moment.replace(tzinfo=None) if moment.tzinfo else moment
    delta = moment - EPOCH
    return (delta.days * 86_400 + delta.seconds) * NS_PER_SECOND + delta.microseconds * 1_000


def dataset_rows(dataset: Dataset, measurement: str) -> list[tuple[Any, ...]]:
    """``(time ns, entity, extra tags…, fields…)`` of every stored row, sorted."""
    use_case = dataset.use_case
    m = use_case.measurement(measurement)
    table = dataset.read(measurement)
    columns = [
        pa.compute.cast(table.column("time"), pa.int64()).to_pylist(),
        *(table.column(name).to_pylist() for name in (use_case.entity_key, *m.extra_tags, *m.field_names)),
    ]
    return sorted(zip(*columns, strict=True), key=repr)


def nameless_pairs(dataset: Dataset, measurement: str) -> list[tuple[int, Any]]:
    """``(time ns, first field)`` of the dataset's nameless rows (no entity key), sorted."""
    table = dataset.read(measurement)
    rows = table.filter(pa.compute.is_null(table.column(dataset.use_case.entity_key)))
    field = dataset.use_case.measurement(measurement).field_names[0]
    times = pa.compute.cast(rows.column("time"), pa.int64()).to_pylist()
    return sorted(zip(times, rows.column(field).to_pylist(), strict=True), key=repr)


def has_nameless_rows(dataset: Dataset, measurement: str) -> bool:
    return dataset.read(measurement).column(dataset.use_case.entity_key).null_count > 0


def cpu_types() -> list[str]:
    """The query types of cpu data (devops and YCSB-TS; the iot types are test_mongodb_iot.py's)."""
    families = get_use_case("cpu-only").query_families
    return [name for name, qtype in QUERY_TYPES.items() if qtype.family in families]


def one_host_tags() -> pa.Table:
    """A tags table with one host, ``h``."""
    return pa.table({t: ["h"] if t == "hostname" else ["x"] for t in get_use_case("cpu-only").entity_tags})


def entity_tags(dataset: Dataset) -> dict[str, dict[str, str]]:
    key = dataset.use_case.entity_key
    return {row[key]: row for row in dataset.tags().to_pylist()}


# -- datasets ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cpu_data(dataset_cache: Path) -> Dataset:
    """cpu-only, 8 hosts × 13 h at 120 s (3,120 rows): every query type fits and has rows, and
    mongomock, which copies every document for every pipeline, stays quick."""
    spec = DatasetSpec.parse(scale=8, end="2016-01-01T13:00:00Z", interval="120s", seed=11)
    return ensure_dataset(spec, dataset_cache)[0]


@pytest.fixture(scope="module")
def shaping_data(dataset_cache: Path) -> dict[str, Dataset]:
    """Small datasets of every use case: extra tags (devops), nulls, nameless rows (2 readings, 7
    diagnostics) and another entity key (iot), and per-host runs (rows of one host together), so
    documents of every shape occur."""
    specs = {
        "cpu-only": DatasetSpec.parse(scale=5, end="2016-01-01T03:00:00Z", interval="20s", seed=3),
        "cpu-only-runs": DatasetSpec.parse(
            scale=4, end="2016-01-01T02:00:00Z", ingestion="per-host-runs", run_length=50, seed=4
        ),
        "devops": DatasetSpec.parse(use_case="devops", scale=2, end="2016-01-01T02:00:00Z", interval="60s"),
        "iot": DatasetSpec.parse(use_case="iot", scale=4, end="2016-01-01T03:00:00Z", interval="30s"),
    }
    return {name: ensure_dataset(spec, dataset_cache)[0] for name, spec in specs.items()}


# -- (a) document shaping ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cpu-only", "cpu-only-runs", "devops", "iot"])
def test_event_documents_hold_exactly_the_dataset_rows(shaping_data: dict[str, Dataset], name: str) -> None:
    dataset = shaping_data[name]
    use_case = dataset.use_case
    layout = EventLayout(use_case, dataset.tags())
    tags = entity_tags(dataset)
    key = use_case.entity_key
    for measurement in dataset.measurements:
        m = use_case.measurement(measurement)
        assert has_nameless_rows(dataset, measurement) == use_case.nameless_rows, "vacuous for iot"
        rows = []
        for batch in dataset.iter_batches(measurement, 777):  # batches that split hours and epochs
            for document in layout.documents(measurement, batch):
                assert set(document) == {"time", "tags", *m.field_names}
                meta = document["tags"]
                extra = {t: meta[t] for t in m.extra_tags}
                entity = tags[meta[key]] if meta[key] is not None else {key: None}  # nameless: no tags
                assert meta == {**entity, **extra}, "tags must be the entity's + the extra tags"
                values = [document[f] for f in m.field_names]
                rows.append((ns_of(document["time"]), meta[key], *extra.values(), *values))
        assert sorted(rows, key=repr) == dataset_rows(dataset, measurement), f"{name}/{measurement}"


@pytest.mark.parametrize("name", ["cpu-only", "cpu-only-runs", "devops", "iot"])
def test_hour_upserts_hold_exactly_the_dataset_rows(shaping_data: dict[str, Dataset], name: str) -> None:
    dataset = shaping_data[name]
    use_case = dataset.use_case
    layout = HourlyLayout(use_case, dataset.tags())
    tags = entity_tags(dataset)
    key = use_case.entity_key
    for measurement in dataset.measurements:
        m = use_case.measurement(measurement)
        assert has_nameless_rows(dataset, measurement) == use_case.nameless_rows, "vacuous for iot"
        rows = []
        for batch in dataset.iter_batches(measurement, 777):
            seen_in_batch = set()
            for selector, update in layout.updates(measurement, batch):
                identity = selector["_id"]
                assert list(identity) == [key, *m.extra_tags, "hour"], "the _id fields, in order"
                assert repr(identity) not in seen_in_batch, "one upsert per document per batch"
                seen_in_batch.add(repr(identity))
                # The nameless document (_id name null) has no tags and appends with $push.
                named = identity[key] is not None
                append = "$addToSet" if named else "$push"
                assert set(update) == {"$setOnInsert", append}
                entity = {k: v for k, v in tags[identity[key]].items() if k != key} if named else {}
                assert update["$setOnInsert"] == {"tags": entity}
                hour = ns_of(identity["hour"])
                assert hour % NS_PER_HOUR == 0
                events = update[append]["events"]["$each"]
                times = [ns_of(e["time"]) for e in events]
                assert times == sorted(times), "events in time order"
                for event in events:
                    assert list(event) == ["time", *m.field_names]
                    assert hour <= ns_of(event["time"]) < hour + NS_PER_HOUR, "event outside its hour"
                    extra = [identity[t] for t in m.extra_tags]
                    rows.append((ns_of(event["time"]), identity[key], *extra, *list(event.values())[1:]))
        assert sorted(rows, key=repr) == dataset_rows(dataset, measurement), f"{name}/{measurement}"


def test_times_that_are_not_whole_milliseconds_are_refused() -> None:
    use_case = get_use_case("cpu-only")
    tags = one_host_tags()
    batch = pa.RecordBatch.from_pydict(
        {
            "time": pa.array([T0 + 1_500_000], pa.timestamp("ns", tz="UTC")),
            "hostname": pa.array(["h"]).dictionary_encode(),
            **{f: pa.array([1], pa.int64()) for f in use_case.measurement("cpu").field_names},
        }
    )
    for layout in (EventLayout(use_case, tags), HourlyLayout(use_case, tags)):
        with pytest.raises(TargetError, match="not whole milliseconds"):
            layout.shaper.shape("cpu", batch)


def test_an_entity_missing_from_the_tags_table_is_refused() -> None:
    use_case = get_use_case("cpu-only")
    tags = one_host_tags()
    batch = pa.RecordBatch.from_pydict(
        {
            "time": pa.array([T0], pa.timestamp("ns", tz="UTC")),
            "hostname": pa.array(["stranger"]).dictionary_encode(),
            **{f: pa.array([1], pa.int64()) for f in use_case.measurement("cpu").field_names},
        }
    )
    with pytest.raises(TargetError, match="stranger"):
        EventLayout(use_case, tags).documents("cpu", batch)
    with pytest.raises(TargetError, match="stranger"):
        HourlyLayout(use_case, tags).updates("cpu", batch)


def test_a_row_without_an_entity_is_refused_where_the_use_case_has_no_nameless_rows() -> None:
    use_case = get_use_case("cpu-only")
    assert not use_case.nameless_rows
    batch = pa.RecordBatch.from_pydict(
        {
            "time": pa.array([T0, T0], pa.timestamp("ns", tz="UTC")),
            "hostname": pa.array(["h", None]).dictionary_encode(),
            **{f: pa.array([1, 2], pa.int64()) for f in use_case.measurement("cpu").field_names},
        }
    )
    for layout in (EventLayout(use_case, one_host_tags()), HourlyLayout(use_case, one_host_tags())):
        with pytest.raises(TargetError, match="1 null values"):
            layout.shaper.shape("cpu", batch)


# -- (b) rendering -------------------------------------------------------------------------------------

HOST_QUERY = LogicalQuery(
    id="q",
    type="single-groupby-1-1-1",
    fields=("usage_user",),
    hosts=("host_3",),
    start_ns=T0 + 3_725 * NS_PER_SECOND,  # 01:02:05
    end_ns=T0 + 7_325 * NS_PER_SECOND,  # 02:02:05
)


def d(text: str) -> datetime:
    return datetime.fromisoformat(text)


def datetimes_in(value: Any) -> list[datetime]:
    """Every datetime anywhere inside a (parsed) pipeline."""
    if isinstance(value, datetime):
        return [value]
    if isinstance(value, dict):
        return [found for item in value.values() for found in datetimes_in(item)]
    if isinstance(value, list):
        return [found for item in value for found in datetimes_in(item)]
    return []


def test_golden_naive_single_groupby() -> None:
    parsed = parse_query_text(naive_dialect.render(HOST_QUERY))
    assert parsed.collection == "cpu" and parsed.columns == ["bucket", "max_usage_user"]
    time_bucket = {"$subtract": ["$time", {"$mod": [{"$subtract": ["$time", EPOCH]}, 60_000]}]}
    assert parsed.pipeline == [
        {
            "$match": {
                "tags.hostname": "host_3",
                "time": {"$gte": d("2016-01-01T01:02:05"), "$lt": d("2016-01-01T02:02:05")},
            }
        },
        {"$group": {"_id": time_bucket, "max_usage_user": {"$max": "$usage_user"}}},
        {"$project": {"_id": 0, "bucket": "$_id", "max_usage_user": 1}},
    ]


def test_golden_hourly_double_groupby_reduces_documents_without_unwind() -> None:
    query = LogicalQuery(
        id="q",
        type="double-groupby-1",
        fields=("usage_user",),
        start_ns=T0 + 3_725 * NS_PER_SECOND,
        end_ns=T0 + 3_725 * NS_PER_SECOND + 12 * NS_PER_HOUR,
    )
    parsed = parse_query_text(hourly_dialect.render(query))
    assert parsed.columns == ["bucket", "hostname", "mean_usage_user"]
    start, end = d("2016-01-01T01:02:05"), d("2016-01-01T13:02:05")
    window = {"$and": [{"$gte": ["$$event.time", start]}, {"$lt": ["$$event.time", end]}]}
    assert parsed.pipeline == [
        {"$match": {"_id.hour": {"$gte": d("2016-01-01T01:00:00"), "$lt": end}}},
        {"$project": {"events": {"$filter": {"input": "$events", "as": "event", "cond": window}}}},
        {"$match": {"events": {"$ne": []}}},
        {
            "$project": {
                "sum_usage_user": {"$sum": "$events.usage_user"},
                "count_usage_user": {
                    "$size": {"$filter": {"input": "$events.usage_user", "cond": {"$isNumber": "$$this"}}}
                },
            }
        },
        {
            "$group": {
                "_id": {"bucket": "$_id.hour", "hostname": "$_id.hostname"},
                "sum_usage_user": {"$sum": "$sum_usage_user"},
                "count_usage_user": {"$sum": "$count_usage_user"},
            }
        },
        {
            "$project": {
                "_id": 0,
                "bucket": "$_id.bucket",
                "hostname": "$_id.hostname",
                "mean_usage_user": {
                    "$cond": [
                        {"$eq": ["$count_usage_user", 0]},
                        None,
                        {"$divide": ["$sum_usage_user", "$count_usage_user"]},
                    ]
                },
            }
        },
    ]
    assert "$unwind" not in json.dumps(json_util.loads(json_util.dumps(parsed.pipeline)), default=str)


def test_golden_hourly_lastpoint_reads_the_newest_document_per_host_first() -> None:
    query = LogicalQuery(id="q", type="lastpoint", fields=("usage_user", "usage_system"))
    parsed = parse_query_text(hourly_dialect.render(query))
    assert parsed.pipeline == [
        {"$sort": {"_id.hostname": 1, "_id.hour": -1}},
        {"$group": {"_id": "$_id.hostname", "events": {"$first": "$events"}}},
        {"$unwind": "$events"},
        {"$sort": {"events.time": -1}},
        {
            "$group": {
                "_id": "$_id",
                "time": {"$first": "$events.time"},
                "usage_user": {"$first": "$events.usage_user"},
                "usage_system": {"$first": "$events.usage_system"},
            }
        },
        {"$project": {"_id": 0, "hostname": "$_id", "time": 1, "usage_user": 1, "usage_system": 1}},
    ]
    # The first $sort must match the compound index in key order and direction (DISTINCT_SCAN).
    layout = HourlyLayout(get_use_case("cpu-only"), one_host_tags())
    index = layout.indexes(get_use_case("cpu-only").measurement("cpu"))[0]
    assert dict(index) == parsed.pipeline[0]["$sort"]


def test_golden_range_agg_yields_one_row_even_for_an_empty_window() -> None:
    """MongoDB's $group over no input yields nothing; $facet always yields one document, so count
    reads 0 ($ifNull) and avg/sum read missing → None, as the oracle answers."""
    base = {"id": "q", "fields": ("usage_user",), "hosts": ("host_1",), "start_ns": T0, "end_ns": T0 + 1}
    count = parse_query_text(naive_dialect.render(LogicalQuery(type="ycsb-count", **base))).pipeline
    assert count[-2:] == [
        {
            "$facet": {
                "result": [
                    {
                        "$group": {
                            "_id": None,
                            "value": {"$sum": {"$cond": [{"$isNumber": "$usage_user"}, 1, 0]}},
                        }
                    }
                ]
            }
        },
        {"$project": {"count_usage_user": {"$ifNull": [{"$arrayElemAt": ["$result.value", 0]}, 0]}}},
    ]
    for agg, operator in (("avg", "$avg"), ("sum", "$sum")):
        stages = parse_query_text(hourly_dialect.render(LogicalQuery(type=f"ycsb-{agg}", **base))).pipeline
        assert stages[-2] == {
            "$facet": {"result": [{"$group": {"_id": None, "value": {operator: "$events.usage_user"}}}]}
        }
        assert stages[-1] == {"$project": {f"{agg}_usage_user": {"$arrayElemAt": ["$result.value", 0]}}}


@pytest.mark.parametrize("render", [naive_dialect.render, hourly_dialect.render], ids=["naive", "hourly"])
def test_every_query_type_renders_a_well_formed_pipeline(render: Any) -> None:
    data = DataRange(T0, T0 + 24 * NS_PER_HOUR, 10 * NS_PER_SECOND, 10)
    for query in generate_queries(data, cpu_types(), 3, seed=2):  # the iot types: test_mongodb_iot.py
        text = render(query)
        assert '{"$date": "' in text or query.query_type.kind is Kind.LASTPOINT, "dates as Extended JSON"
        parsed = parse_query_text(text)
        columns, _ = answer_columns(query.query_type)
        assert parsed.collection == "cpu" and parsed.columns == columns
        last = parsed.pipeline[-1]["$project"]
        assert [c for c in last if c != "_id"] == columns, f"{query.id}: last stage names the columns"
        assert all(len(stage) == 1 and next(iter(stage)).startswith("$") for stage in parsed.pipeline)
        if query.hosts is not None:
            first = parsed.pipeline[0]["$match"]
            host = next(v for k, v in first.items() if k.endswith(".hostname"))
            assert host == (query.hosts[0] if len(query.hosts) == 1 else {"$in": list(query.hosts)})
        instants = set(datetimes_in(parsed.pipeline))
        for bound in (query.start_ns, query.end_ns, query.at_ns):
            assert bound is None or instant(bound) in instants, f"{query.id}: bound {bound} not used"
        if query.query_type.kind is Kind.ORDERBY_LIMIT:
            names = [next(iter(s)) for s in parsed.pipeline]
            assert names[-3:] == ["$sort", "$limit", "$project"]
            assert parsed.pipeline[-3] == {"$sort": {"_id": -1}} and parsed.pipeline[-2] == {"$limit": 5}


def test_window_bounds_are_exact_milliseconds_and_a_sub_millisecond_read_matches_nothing() -> None:
    query = LogicalQuery(
        id="q",
        type="ycsb-scan",
        fields=("usage_user",),
        hosts=("host_0",),
        start_ns=T0 + 1,
        end_ns=T0 + 2_000_001,
    )
    match = parse_query_text(naive_dialect.render(query)).pipeline[0]["$match"]
    # ns bounds are rounded up: t >= 1 ns ⇔ t >= 1 ms and t < 2.000001 ms ⇔ t < 3 ms over ms data.
    assert match["time"] == {
        "$gte": EPOCH + timedelta(milliseconds=1_451_606_400_001),
        "$lt": d("2016-01-01T00:00:00.003"),
    }
    read = LogicalQuery(id="q", type="ycsb-read", fields=("usage_user",), hosts=("host_0",), at_ns=T0 + 5)
    assert parse_query_text(naive_dialect.render(read)).pipeline[0]["$match"]["time"] == {"$in": []}
    assert parse_query_text(hourly_dialect.render(read)).pipeline[0]["$match"]["_id.hour"] == {"$in": []}


def test_buckets_that_are_not_whole_milliseconds_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    odd = QueryType(
        "test-odd-bucket", Kind.GROUPBY, agg="max", nfields=1, hosts=1, window_ns=NS_PER_HOUR, bucket_ns=1_500
    )
    monkeypatch.setitem(QUERY_TYPES, odd.name, odd)
    query = LogicalQuery(
        id="q", type=odd.name, fields=odd.fields, hosts=("host_0",), start_ns=T0, end_ns=T0 + NS_PER_HOUR
    )
    for render in (naive_dialect.render, hourly_dialect.render):
        with pytest.raises(ValueError, match="whole milliseconds"):
            render(query)


# -- (c) emulator checks: mongomock runs the pipelines ---------------------------------------------------

EXTRA_TYPES = (
    # buckets of two hours: the hourly layout combines two documents per bucket
    QueryType(
        "test-mean-2h",
        Kind.GROUPBY_HOST,
        agg="mean",
        nfields=3,
        window_ns=7 * NS_PER_HOUR,
        bucket_ns=2 * NS_PER_HOUR,
    ),
    # 90-second buckets: aligned to the epoch, not to hours
    QueryType(
        "test-max-90s",
        Kind.GROUPBY,
        agg="max",
        nfields=2,
        hosts=2,
        window_ns=NS_PER_HOUR,
        bucket_ns=90 * NS_PER_SECOND,
    ),
)


@pytest.fixture()
def extra_types(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    for qtype in EXTRA_TYPES:
        monkeypatch.setitem(QUERY_TYPES, qtype.name, qtype)
    return [q.name for q in EXTRA_TYPES]


@pytest.fixture(scope="module")
def emulated(cpu_data: Dataset) -> dict[str, Any]:
    """EMULATOR: the cpu dataset loaded into mongomock by the layouts' own code — the naive layout
    through its real ``write`` (insert_many, ordered=False) into a plain collection, the hourly layout's
    upserts one by one (see MONGOMOCK_GAPS)."""
    client = mongomock.MongoClient()
    tags = cpu_data.tags()
    naive = EventLayout(cpu_data.use_case, tags)
    hourly = HourlyLayout(cpu_data.use_case, tags)
    written = 0
    for batch in cpu_data.iter_batches("cpu", 1_000):
        written += naive.write(client.naive.cpu, "cpu", batch)
        for selector, update in hourly.updates("cpu", batch):
            client.hourly.cpu.update_one(selector, update, upsert=True)
    assert written == cpu_data.rows["cpu"]
    assert naive.count(client.naive.cpu) == hourly.count(client.hourly.cpu) == cpu_data.rows["cpu"]
    return {"naive": (client.naive, naive_dialect.render), "hourly": (client.hourly, hourly_dialect.render)}


def run_against_oracle(
    database: Any, render: Any, dataset: Dataset, types: list[str], per_type: int, seed: int = 9
) -> dict[str, int]:
    oracle = Oracle(dataset)
    session = MongoSession(database)
    nonempty = dict.fromkeys(types, 0)
    failures = []
    try:
        for query in generate_queries(DataRange.of(dataset), types, per_type, seed=seed):
            text = render(query)
            actual = Answer.build(query.query_type, session.execute(text))
            expected = oracle.answer(query)
            result = compare(expected, actual)
            if not result.ok:
                failures.append(f"{query.id}: {result.reason}\n  {text}\n  {result.diff[:2]}")
            nonempty[query.type] += bool(expected.rows)
    finally:
        oracle.close()
    assert not failures, "answers differ from the oracle:\n" + "\n".join(failures)
    return nonempty


@pytest.mark.slow  # mongomock evaluates pipelines in Python: ~10-20 s per layout
@pytest.mark.parametrize("layout", ["naive", "hourly"])
def test_emulator_every_pipeline_answers_like_the_oracle(
    emulated: dict[str, Any], cpu_data: Dataset, extra_types: list[str], layout: str
) -> None:
    """EMULATOR CHECK (mongomock, not MongoDB): all 20 query types plus two extra bucket widths, one
    query each (seed 11: every one of them has rows in ``cpu_data``, which the last line checks)."""
    database, render = emulated[layout]
    types = cpu_types()
    nonempty = run_against_oracle(database, render, cpu_data, types, per_type=1, seed=11)
    assert set(types) >= set(extra_types) and len(types) == 20 + len(extra_types)
    assert all(nonempty.values()), f"vacuous check, empty expected answers: {nonempty}"


def test_emulator_check_catches_a_wrong_pipeline(emulated: dict[str, Any], cpu_data: Dataset) -> None:
    """The comparison is not vacuous: the TSBS-style bug (ascending order, i.e. the *first* five
    minutes) in groupby-orderby-limit is caught."""
    database, render = emulated["naive"]

    def ascending(query: LogicalQuery) -> str:
        body = json_util.loads(render(query))
        for stage in body["pipeline"]:
            if "$sort" in stage:
                stage["$sort"] = {"_id": 1}
        return json_util.dumps(body)

    with pytest.raises(AssertionError, match="answers differ"):
        run_against_oracle(database, ascending, cpu_data, ["groupby-orderby-limit"], per_type=2)


def test_emulator_hour_upserts_are_idempotent_and_merge_split_hours(cpu_data: Dataset) -> None:
    """EMULATOR CHECK: $setOnInsert + $addToSet $each — a batch sent twice stores its events once,
    and batches that split an hour fill the same document."""
    client = mongomock.MongoClient()
    layout = HourlyLayout(cpu_data.use_case, cpu_data.tags())
    batches = list(cpu_data.iter_batches("cpu", 700))  # 700 rows = 87.5 epochs of 8 hosts: hours split
    for batch in [*batches, *batches[:3]]:  # the first three batches again
        for selector, update in layout.updates("cpu", batch):
            client.db.cpu.update_one(selector, update, upsert=True)
    documents = list(client.db.cpu.find())
    assert len(documents) == 8 * 13, "one document per host per hour"
    assert all(len(doc["events"]) == 30 for doc in documents), "30 events per host-hour at 120 s"
    assert layout.count(client.db.cpu) == cpu_data.rows["cpu"]


def emulated_write(layout: EventLayout | HourlyLayout, collection: Any, measurement: str, batch: Any) -> None:
    """EMULATOR: one batch into a mongomock collection — the naive layout's real ``write``, the
    hourly layout's upserts one by one (see MONGOMOCK_GAPS)."""
    if isinstance(layout, EventLayout):
        layout.write(collection, measurement, batch)
        return
    for selector, update in layout.updates(measurement, batch):
        collection.update_one(selector, update, upsert=True)


def stored_nameless_pairs(layout: EventLayout | HourlyLayout, collection: Any, field: str) -> list[Any]:
    """``(time ns, field)`` of the nameless rows a collection holds, sorted."""
    key = layout.shaper.key
    if isinstance(layout, EventLayout):
        pairs = [(ns_of(d["time"]), d[field]) for d in collection.find({f"tags.{key}": None})]
    else:
        documents = collection.find({f"_id.{key}": None})
        pairs = [(ns_of(e["time"]), e[field]) for d in documents for e in d["events"]]
    return sorted(pairs, key=repr)


@pytest.mark.parametrize("layout_type", [EventLayout, HourlyLayout])
def test_emulator_iot_load_stores_every_nameless_row(
    shaping_data: dict[str, Dataset], layout_type: Any
) -> None:
    """EMULATOR CHECK (mongomock, not MongoDB): an iot load keeps every row, the nameless ones (no
    ``name``) included — as many as the dataset has, with the same (time, first field) pairs; the
    hourly layout puts them into one document per hour."""
    dataset = shaping_data["iot"]
    layout = layout_type(dataset.use_case, dataset.tags())
    database = mongomock.MongoClient().db
    for measurement in dataset.measurements:
        collection = database[measurement]
        for batch in dataset.iter_batches(measurement, 250):  # several batches per hour
            emulated_write(layout, collection, measurement, batch)
        expected = nameless_pairs(dataset, measurement)
        assert expected, f"no nameless {measurement} rows: the check would be vacuous"
        assert layout.count(collection) == dataset.rows[measurement]  # what row_count() returns
        field = dataset.use_case.measurement(measurement).field_names[0]
        assert stored_nameless_pairs(layout, collection, field) == expected, measurement
        if layout_type is HourlyLayout:
            hours = {t // NS_PER_HOUR for t, _ in expected}
            assert collection.count_documents({"_id.name": None}) == len(hours)
            assert all(d["tags"] == {} for d in collection.find({"_id.name": None}))


@pytest.mark.parametrize("layout_type", [EventLayout, HourlyLayout])
def test_emulator_equal_nameless_rows_of_one_instant_are_all_kept(
    shaping_data: dict[str, Dataset], layout_type: Any
) -> None:
    """EMULATOR CHECK: nameless rows of different trucks can be equal (same instant, no field set,
    as iot's fieldless points); each is a row, in one batch and across batches. ($addToSet in the
    hourly layout's nameless document would keep one of them.)"""
    dataset = shaping_data["iot"]
    use_case = dataset.use_case
    truck = dataset.tags().column(use_case.entity_key)[0].as_py()
    schema = use_case.row_schema("diagnostics")
    fields = use_case.measurement("diagnostics").field_names

    def batch(names: list[str | None]) -> pa.RecordBatch:
        columns = {"time": [T0] * len(names), use_case.entity_key: names}
        return pa.RecordBatch.from_pydict({**columns, **{f: [None] * len(names) for f in fields}}, schema)

    layout = layout_type(use_case, dataset.tags())
    collection = mongomock.MongoClient().db.diagnostics
    for names in ([None, None, truck], [None]):
        emulated_write(layout, collection, "diagnostics", batch(names))
    assert layout.count(collection) == 4
    assert stored_nameless_pairs(layout, collection, fields[0]) == [(T0, None)] * 3


# -- (d) client, server recipe, containers, scripts --------------------------------------------------------


def test_client_fails_with_a_clear_target_error_on_a_closed_port() -> None:
    port = free_port()  # nothing listens there
    endpoint = Endpoint("127.0.0.1", {"mongo": port}, user="tsbench", secrets={"password": "not-for-logs"})
    started = time.perf_counter()
    with pytest.raises(TargetError) as raised:
        connect(endpoint, timeout_ms=300)
    assert time.perf_counter() - started < 5
    message = str(raised.value)
    assert f"127.0.0.1:{port}" in message and "cannot reach" in message
    assert "not-for-logs" not in message


@pytest.mark.parametrize("target_type", [MongoHourlyTarget, MongoNaiveTarget])
def test_target_entry_points_fail_with_target_error_when_the_server_is_down(target_type: Any) -> None:
    endpoint = Endpoint("127.0.0.1", {"mongo": free_port()}, extra={"server_selection_timeout_ms": 200})
    target = target_type(endpoint, get_use_case("cpu-only"), one_host_tags())
    for entry in (target.writer, target.session, target.create_schema, target.flush):
        with pytest.raises(TargetError, match="cannot reach"):
            entry()
    target.close()


def test_server_recipe_writes_its_config_under_home(tmp_path: Path) -> None:
    port = free_port()
    recipe = MongoServer(tmp_path, {"mongo": port})
    recipe.initialise()
    config = yaml.safe_load(recipe.config_path.read_text())
    assert config["storage"]["dbPath"] == str(tmp_path / "data") and (tmp_path / "data").is_dir()
    assert config["net"] == {"bindIp": "127.0.0.1", "port": port, "unixDomainSocket": {"enabled": False}}
    assert config["setParameter"] == {"diagnosticDataCollectionEnabled": False}
    assert recipe.data_dirs() == [tmp_path / "data"]
    endpoint = recipe.endpoint()
    assert endpoint.port("mongo") == port and endpoint.database == "tsbench"
    assert not recipe.ready() and not ping(port, timeout_ms=200)
    assert (
        load_target("mongodb").server_recipe() is load_target("mongodb_naive").server_recipe() is MongoServer
    )


def test_install_script_fails_fast_when_the_repository_is_unreachable(tmp_path: Path) -> None:
    """The real script, pointed at a host that cannot resolve (.invalid, RFC 6761)."""
    env = {
        **os.environ,
        **DEFINITION.install_environment(),
        "MONGODB_REPO_HOST": "repo.mongodb.invalid",
        "TSBENCH_OPT": str(tmp_path),
    }
    installed = subprocess.run(["sh", "-c", "mongod --version"], capture_output=True, text=True)
    if f"db version v{VERSION}" in installed.stdout:
        pytest.skip("the pinned mongod is installed: the script exits before contacting the repository")
    started = time.perf_counter()
    result = subprocess.run(["bash", str(INSTALL_SCRIPT)], capture_output=True, text=True, env=env)
    assert result.returncode != 0
    assert time.perf_counter() - started < 30
    assert "cannot reach repo.mongodb.invalid" in result.stderr and "Docker" in result.stderr


def test_versions_are_pinned_alike_everywhere() -> None:
    """One pin (definition.py) for both targets: the scripts take it from there, the image is it."""
    naive = load_definition("mongodb_naive")
    assert VERSION == "8.0.20" and naive is not None and naive.version == VERSION
    assert naive.tuning == DEFINITION.tuning and (naive.main_job, DEFINITION.main_job) == (0, 0)
    assert naive.install_path.resolve() == INSTALL_SCRIPT.resolve()
    assert naive.cloud_scripts == DEFINITION.cloud_scripts
    assert naive.install_environment() == DEFINITION.install_environment() == {"MONGODB_VERSION": VERSION}
    for script in (INSTALL_SCRIPT, TARGETS / "mongodb" / "cloud_install.sh"):
        text = script.read_text()
        assert ': "${MONGODB_VERSION:?' in text and VERSION not in text, script.name
    for definition in (DEFINITION, naive):
        assert f"\nexport MONGODB_VERSION={VERSION}\n" in render_install_script(definition)
    spec = next(iter(mongo_container.CONTAINERS.values()))
    assert spec.image == f"mongo:{VERSION}"
    assert VERSION in (TARGETS / "mongodb" / "README.md").read_text()


def test_container_spec() -> None:
    assert naive_container.CONTAINERS is mongo_container.CONTAINERS
    flavour, spec = next(iter(mongo_container.CONTAINERS.items()))
    assert flavour == VERSION.rsplit(".", 1)[0]
    assert spec.command == ("--setParameter", "diagnosticDataCollectionEnabled=false")
    with pytest.raises(ValueError, match=r"storage\.engine"):
        mongo_container.set_parameters({"storage.engine": "wiredTiger"})
    assert spec.problems() == []
    assert set(spec.ports) == set(MongoServer.port_roles) and spec.data_paths == ("/data/db",)
    assert spec.secret_env == {"MONGO_INITDB_ROOT_PASSWORD": "TSBENCH_MONGODB_PASSWORD"}
    assert spec.environment["MONGO_INITDB_ROOT_USERNAME"] == spec.client_user
    assert spec.client_secrets == {"password": "TSBENCH_MONGODB_PASSWORD"}
    assert "mongosh" in spec.healthcheck.command[-1] and "ping" in spec.healthcheck.command[-1]
    endpoint = spec.endpoint("db.example", {"mongo": 27017}, {"TSBENCH_MONGODB_PASSWORD": "pw"})
    assert endpoint.secrets == {"password": "pw"} and endpoint.extra["auth_source"] == "admin"
    assert "pw" not in json.dumps(endpoint.to_json())


def test_cloud_install_scripts() -> None:
    script = TARGETS / "mongodb" / "cloud_install.sh"
    naive = TARGETS / "mongodb_naive" / "cloud_install.sh"
    assert naive.resolve() == script.resolve() and os.access(script, os.X_OK)
    assert (TARGETS / "mongodb_naive" / "install.sh").resolve() == INSTALL_SCRIPT.resolve()
    text = render_install_script(DEFINITION)
    for needle in ("tsbench-db.service", "DATA_DIR", "DB_PASSWORD", "bindIpAll: true", "repo.mongodb.org"):
        assert needle in text
    for path in (script, INSTALL_SCRIPT):
        assert subprocess.run(["bash", "-n", str(path)]).returncode == 0


def test_cloud_config_is_the_local_ones_options_on_all_interfaces() -> None:
    """The rendered cloud script's mongod.conf (printed by bash) carries the tuning table."""
    header = render_install_script(DEFINITION).split("# --- runtimes/cloud_lib.sh ---")[0]
    probe = "DB_DIR=/data/db/mongodb authorization=enabled; mongodb_conf"
    result = subprocess.run(["bash", "-c", header + "\n" + probe], capture_output=True, text=True, check=True)
    assert yaml.safe_load(result.stdout) == {
        "storage": {"dbPath": "/data/db/mongodb"},
        "net": {"bindIpAll": True, "port": 27017},
        "security": {"authorization": "enabled"},
        "setParameter": {"diagnosticDataCollectionEnabled": False},
    }
