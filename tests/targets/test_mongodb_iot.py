"""The iot query types of both MongoDB targets (``mongodb``: truck-hour documents, ``mongodb_naive``:
event documents).

No MongoDB server can be obtained here (see test_mongodb.py), so the pipelines run on the
**EMULATOR mongomock 4.3** (an in-memory Python re-implementation of part of MongoDB's API, *not*
MongoDB), loaded with ``iot_dataset`` by the layouts' own code, and their answers are compared with
the oracle's (``check_iot_queries``).

mongomock lacks one stage these pipelines use: ``$setWindowFields`` (MongoDB 5.0+; here with
``$shift``, the lag/lead of avg-daily-driving-session and breakdown-frequency). For those two types
the check runs with a **test STAND-IN** for that stage (``set_window_fields_stand_in``, written here
from MongoDB's manual: partition, sort, ``$shift`` by n with a null default) — so what is checked
for them is every other stage on the emulator plus our reading of ``$shift``, not MongoDB's own
``$setWindowFields``; their window stages are also pinned by a golden test. A real server (Docker /
cloud runtime) is the only place where all of it runs as MongoDB.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mongomock
import pytest
from iot_checks import answered_types, check_iot_queries, iot_types
from mongomock import aggregate, filtering
from test_mongodb import emulated_write

from tsbench.spec import DatasetSpec
from tsbench.targets.base import Endpoint
from tsbench.targets.mongodb import dialect as hourly_dialect
from tsbench.targets.mongodb.client import MongoSession
from tsbench.targets.mongodb.hourly import HourlyLayout
from tsbench.targets.mongodb.pipelines import parse_query_text
from tsbench.targets.mongodb.target import MongoHourlyTarget
from tsbench.targets.mongodb_naive import dialect as naive_dialect
from tsbench.targets.mongodb_naive.events import EventLayout
from tsbench.targets.mongodb_naive.target import MongoNaiveTarget
from tsbench.workload.answers import Answer, answer_columns, compare
from tsbench.workload.dataset import Dataset, ensure_dataset
from tsbench.workload.oracle import Oracle
from tsbench.workload.queries import DataRange, LogicalQuery, generate_queries
from tsbench.workload.query_types import QUERY_TYPES

LAYOUTS = {"naive": (MongoNaiveTarget, EventLayout), "hourly": (MongoHourlyTarget, HourlyLayout)}
RENDER = {"naive": naive_dialect.render, "hourly": hourly_dialect.render}
WINDOWED = ("avg-daily-driving-session", "breakdown-frequency")  # the types with $setWindowFields


def set_window_fields_stand_in(
    documents: list[dict[str, Any]], database: Any, options: dict[str, Any]
) -> list:
    """TEST STAND-IN for ``$setWindowFields`` (neither mongomock nor MongoDB): only what these
    pipelines use — ``partitionBy`` an expression, ``sortBy`` one field, ``output`` fields that are
    ``{$shift: {output, by[, default]}}``: the ``output`` expression evaluated on the document
    ``by`` places away in the partition's sort order, ``default`` (null) where there is none."""
    ((sort_field, direction),) = options["sortBy"].items()
    partitions: dict[str, list[dict[str, Any]]] = {}
    for document in documents:
        key = repr(aggregate._parse_expression(options["partitionBy"], document))
        partitions.setdefault(key, []).append(document)
    shifts = {name: spec["$shift"] for name, spec in options["output"].items()}
    assert all(set(spec) == {"$shift"} for spec in options["output"].values()), "only $shift"
    result = []
    for rows in partitions.values():
        rows.sort(key=lambda d: filtering.resolve_sort_key(sort_field, d), reverse=direction < 0)
        values = {n: [aggregate._parse_expression(s["output"], d) for d in rows] for n, s in shifts.items()}
        for index, document in enumerate(rows):
            shifted = dict(document)
            for name, shift in shifts.items():
                other = index + shift["by"]
                shifted[name] = values[name][other] if 0 <= other < len(rows) else shift.get("default")
            result.append(shifted)
    return result


@pytest.fixture()
def stand_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(aggregate._PIPELINE_HANDLERS, "$setWindowFields", set_window_fields_stand_in)


@pytest.fixture(scope="module")
def emulator_dataset(dataset_cache: Path) -> Dataset:
    """iot, 12 trucks × 1 day at 120 s (≈ 15,600 rows; nameless, partial and late points included):
    with 2 queries per type, every type and probe but the rarely answered has a non-empty answer.
    Not the conftest's ``iot_dataset`` (≈ 187,000 rows at 10 s), which is out of the emulator's
    reach: mongomock copies every document of the collection for every ``aggregate`` and its
    ``$unwind`` deep-copies the whole document once per array element — measured 1–1.5 s per naive
    and 15–35 s per hourly query on 16,000 rows at 10 s, i.e. hours for the check."""
    spec = DatasetSpec.parse(use_case="iot", scale=12, seed=2, end="2016-01-02T00:00:00Z", interval="120s")
    return ensure_dataset(spec, dataset_cache)[0]


@pytest.fixture(scope="module")
def emulated_iot(emulator_dataset: Dataset) -> dict[str, Any]:
    """EMULATOR: ``emulator_dataset`` in mongomock, once per layout, written by the layouts' own
    code (the naive layout's ``write``; the hourly layout's upserts one by one, see MONGOMOCK_GAPS
    in test_mongodb.py)."""
    dataset = emulator_dataset
    client = mongomock.MongoClient()
    for name, (_, layout_type) in LAYOUTS.items():
        layout = layout_type(dataset.use_case, dataset.tags())
        for measurement in dataset.measurements:
            collection = client[name][measurement]
            for batch in dataset.iter_batches(measurement, 2_000):
                emulated_write(layout, collection, measurement, batch)
            assert layout.count(collection) == dataset.rows[measurement]
    return {name: client[name] for name in LAYOUTS}


def emulated_target(layout: str, database: Any, dataset: Dataset) -> Any:
    """The layout's target class, its sessions on the EMULATOR database (nothing else changed)."""
    target_type = LAYOUTS[layout][0]

    class Emulated(target_type):  # type: ignore[misc, valid-type]
        def session(self) -> MongoSession:
            return MongoSession(database)

    return Emulated(Endpoint("127.0.0.1", {"mongo": 1}), dataset.use_case, dataset.tags())


# -- rendering -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_every_iot_type_renders_a_pipeline_with_the_query_parameters(layout: str) -> None:
    assert not LAYOUTS[layout][0].capabilities.unsupported
    data = DataRange(1_451_606_400 * 10**9, 1_451_692_800 * 10**9, 10**10, 12, groups=("East", "West"))
    for query in generate_queries(data, iot_types(), 2, seed=3):
        parsed = parse_query_text(RENDER[layout](query, "name"))
        qtype = query.query_type
        columns, _ = answer_columns(qtype)
        assert parsed.collection == qtype.measurement and parsed.columns == columns
        final = parsed.pipeline[-1]["$project"]
        assert [c for c in final if c != "_id"] == columns, query.id
        first = parsed.pipeline[0]["$match"]
        name = "tags.name" if layout == "naive" else "_id.name"
        assert first[name] == {"$ne": None}, "nameless rows never count"
        assert first.get("tags.fleet") == query.fleet
        text = repr(parsed.pipeline)
        for value in (qtype.threshold, qtype.limit):
            assert not value or repr(value) in text or repr(float(value)) in text, query.id


def test_golden_window_stages_of_the_lag_lead_types() -> None:
    """The stages the emulator cannot run, pinned: per truck, sorted by 10-minute bucket,
    ``$shift`` by −1 (the previous bucket) and +1 (the next change / bucket)."""

    def windows(type_name: str) -> list[Any]:
        query = LogicalQuery(
            "q", type_name, QUERY_TYPES[type_name].reads, measurement=QUERY_TYPES[type_name].measurement
        )
        stages = parse_query_text(naive_dialect.render(query, "name")).pipeline
        return [s["$setWindowFields"] for s in stages if "$setWindowFields" in s]

    def window(output: str, value: str, by: int) -> dict[str, Any]:
        shift = {"$shift": {"output": value, "by": by}}
        return {"partitionBy": "$_id.name", "sortBy": {"_id.ten": 1}, "output": {output: shift}}

    assert windows("avg-daily-driving-session") == [
        window("driving_before", "$driving", -1),
        window("next_change", "$_id.ten", 1),
    ]
    assert windows("breakdown-frequency") == [window("next_broken", "$broken", 1)]


# -- EMULATOR checks -----------------------------------------------------------------------------------


def test_mongomock_cannot_run_set_window_fields(
    emulated_iot: dict[str, Any], emulator_dataset: Dataset
) -> None:
    """The gap the stand-in fills (when mongomock learns the stage, drop the stand-in)."""
    query = LogicalQuery("q", "breakdown-frequency", ("status",), measurement="diagnostics")
    target = emulated_target("naive", emulated_iot["naive"], emulator_dataset)
    session = target.session()
    with pytest.raises(NotImplementedError, match=r"\$setWindowFields"):
        session.execute(target.render(query))


@pytest.mark.slow  # mongomock evaluates pipelines in Python
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_emulator_iot_queries_match_the_oracle(
    emulated_iot: dict[str, Any], emulator_dataset: Dataset, stand_in: None, layout: str
) -> None:
    """EMULATOR CHECK (mongomock, not MongoDB; ``$setWindowFields`` by the STAND-IN): all 12 types
    and the three probes equal the oracle, none vacuous."""
    target = emulated_target(layout, emulated_iot[layout], emulator_dataset)
    nonempty = check_iot_queries(target, emulator_dataset, per_type=2)
    assert set(nonempty) == answered_types(target) >= {*iot_types(), *WINDOWED}


@pytest.mark.parametrize(
    ("type_name", "wrong", "right"),
    [
        ("last-loc", '"time": -1', '"time": 1'),  # each truck's first row instead of its last
        ("avg-vs-projected-fuel-consumption", '{"$ne": null}', '{"$exists": true}'),  # nameless rows count
        ("avg-daily-driving-session", '"by": -1', '"by": 1'),  # "previous" bucket = the next one
        (
            "breakdown-frequency",
            '{"$floor": {"$divide": ["$with_status", "$rows"]}}',
            '{"$divide": ["$with_status", "$rows"]}',
        ),
    ],
    ids=["last-row", "nameless", "lag", "integer-division"],
)
def test_emulator_check_catches_a_wrong_pipeline(
    emulated_iot: dict[str, Any],
    emulator_dataset: Dataset,
    stand_in: None,
    type_name: str,
    wrong: str,
    right: str,
) -> None:
    """EMULATOR CHECK: a plausible mistake in a pipeline makes an answer differ from the oracle's."""
    target = emulated_target("naive", emulated_iot["naive"], emulator_dataset)
    oracle, session = Oracle(emulator_dataset), target.session()
    differ = 0
    try:
        for query in generate_queries(DataRange.of(emulator_dataset), [type_name], 2, seed=5):
            text = target.render(query)
            assert wrong in text
            rows = session.execute(text.replace(wrong, right))
            differ += not compare(oracle.answer(query), Answer.build(query.query_type, rows, query.fields)).ok
    finally:
        oracle.close()
    assert differ, f"a broken {type_name} pipeline went unnoticed"
