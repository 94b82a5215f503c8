"""GridDB target, mostly without a GridDB server (the other server tests are in tests/integration).

What is real here: (a) the multi-put payload, built by the target's own code from generated
datasets and turned into GridDB rows by the official Java client in a real JVM, holds exactly each
container's rows; (b) the TQL of every query type, as golden texts; (c) the client-side combine
step, fed with what each TQL of a plan returns — computed independently with DuckDB from the
dataset's Parquet files for the plan's simple TQL forms — agrees with the oracle for every query type;
(d) the real client (JPype + gridstore.jar) fails with a clear TargetError against a closed port;
(e) against the built server (the local runtime), nameless iot rows are all stored, in the nameless
collections, and counted.
"""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from targets.griddb_serving import closed_port, java_or_skip, load, served

from tsbench.spec import DatasetSpec
from tsbench.targets.base import Endpoint, TargetError
from tsbench.targets.griddb import client, combine, dialect
from tsbench.targets.griddb.layout import TIME, check_names, layout
from tsbench.targets.griddb.shape import Payload, StringColumn, shape
from tsbench.targets.griddb.target import GridDBTarget
from tsbench.timeutil import parse_instant
from tsbench.workload.answers import Answer, compare
from tsbench.workload.dataset import Dataset, ensure_dataset
from tsbench.workload.oracle import Oracle
from tsbench.workload.queries import DataRange, LogicalQuery, generate_queries
from tsbench.workload.query_types import QUERY_TYPES
from tsbench.workload.usecases import CPU, CPU_FIELDS, get_use_case

CPU_LAYOUT = layout(CPU)
# The types answered by TQL plans (devops, YCSB-TS); the iot types are SQL (test_griddb_iot.py).
TQL_TYPES = [name for name, qtype in QUERY_TYPES.items() if qtype.family != "iot"]
QUERY_TYPES_INDEX = {name: i for i, name in enumerate(TQL_TYPES)}


# -- datasets ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def devops(dataset_cache: Path) -> Dataset:
    """All nine devops measurements (STRING extra tags), 6 hosts × 30 min."""
    spec = DatasetSpec.parse(use_case="devops", scale=6, end="2016-01-01T00:30:00Z")
    return ensure_dataset(spec, dataset_cache)[0]


@pytest.fixture(scope="module")
def iot(dataset_cache: Path) -> Dataset:
    """Trucks with missing fields (nulls) and late, out-of-order points, 5 trucks × 2 h."""
    spec = DatasetSpec.parse(use_case="iot", scale=5, end="2016-01-01T02:00:00Z")
    return ensure_dataset(spec, dataset_cache)[0]


@pytest.fixture(scope="module")
def sparse(dataset_cache: Path) -> Dataset:
    """cpu-only at one row per 3 minutes: most 1-minute buckets are empty (orderby-limit fallback)."""
    spec = DatasetSpec.parse(scale=8, interval="3m", seed=3)
    return ensure_dataset(spec, dataset_cache)[0]


# -- (a) shaping -------------------------------------------------------------------------------------


def _payload_rows(payload: Payload) -> dict[str, pa.Table]:
    """The payload read back per container, with numpy/pyarrow only."""
    tables = {}
    for index, name in enumerate(payload.containers):
        lo, hi = int(payload.offsets[index]), int(payload.offsets[index + 1])
        columns: dict[str, Any] = {TIME: pa.array(payload.millis[lo:hi])}
        for column, values, nulls in zip(payload.layout.columns, payload.values, payload.nulls, strict=True):
            mask = None if nulls is None else nulls[lo:hi]
            if isinstance(values, StringColumn):
                data = np.array([*values.dictionary, ""], dtype=object)[values.codes[lo:hi]]
            else:
                data = values[lo:hi]
            columns[column.name] = pa.array(data, mask=mask)
        tables[name] = pa.table(columns)
    return tables


def _expected_rows(
    dataset: Dataset, measurement: str, batch: pa.RecordBatch | pa.Table
) -> dict[str, pa.Table]:
    """The batch's rows per container, in batch order, as GridDB keeps them (time in ms); the rows
    without an entity in ``<measurement>_nameless``."""
    key = dataset.use_case.entity_key
    item = layout(dataset.use_case.measurement(measurement))
    table = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
    entities = pc.cast(table.column(key), pa.string())
    selections = {
        f"{measurement}_{e}": pc.equal(entities, e) for e in sorted(set(entities.to_pylist()) - {None})
    }
    if entities.null_count:
        selections[f"{measurement}_nameless"] = pc.is_null(entities)
    expected = {}
    for container, selection in selections.items():
        rows = table.filter(selection)
        columns: dict[str, Any] = {TIME: pc.divide(pc.cast(rows.column("time"), pa.int64()), 1_000_000)}
        for column in item.columns:
            values = rows.column(column.name)
            columns[column.name] = pc.cast(values, pa.string()) if column.kind == "STRING" else values
        expected[container] = pa.table(columns)
    return expected


def _same(actual: pa.Table, expected: pa.Table) -> bool:
    return actual.to_pylist() == expected.to_pylist()


@pytest.mark.parametrize("name", ["devops", "iot"])
def test_payload_holds_exactly_each_containers_rows(name: str, request: pytest.FixtureRequest) -> None:
    dataset: Dataset = request.getfixturevalue(name)
    checked = nameless = 0
    for measurement in dataset.measurements:
        item = layout(dataset.use_case.measurement(measurement))
        for batch in dataset.iter_batches(measurement, 700):
            payloads = shape(item, dataset.use_case.entity_key, batch)
            expected = _expected_rows(dataset, measurement, batch)
            keyed, *rest = payloads
            assert keyed.keyed and keyed.containers == sorted(keyed.containers)
            assert [(p.keyed, p.containers, p.entities) for p in rest] in (
                [],
                [(False, [f"{measurement}_nameless"], [None])],
            )
            actual = {name: rows for p in payloads for name, rows in _payload_rows(p).items()}
            assert set(actual) == set(expected)
            for container, rows in expected.items():
                assert _same(actual[container], rows), container
            assert sum(p.rows for p in payloads) == batch.num_rows
            checked += batch.num_rows
            nameless += sum(p.rows for p in rest)
    assert checked == sum(dataset.rows.values())
    if name == "iot":  # the nulls and the nameless rows really were exercised
        assert any(
            dataset.read(m).column("fuel_state" if m == "diagnostics" else "longitude").null_count
            for m in dataset.measurements
        )
        assert nameless == sum(dataset.read(m).column("name").null_count for m in dataset.measurements) > 0


def test_payload_refuses_a_time_that_is_not_a_whole_millisecond(devops: Dataset) -> None:
    batch = next(devops.iter_batches("cpu", 50))
    times = pc.add(pc.cast(batch.column("time"), pa.int64()), 1_500)
    shifted = batch.set_column(0, "time", pc.cast(times, batch.schema.field("time").type))
    assert [p.rows for p in shape(CPU_LAYOUT, "hostname", batch)] == [50]  # whole seconds pass
    with pytest.raises(TargetError, match="millisecond"):
        shape(CPU_LAYOUT, "hostname", shifted)


def test_entity_names_griddb_cannot_keep_apart_are_refused() -> None:
    use_case = get_use_case("cpu-only")
    assert check_names(use_case, ["host_0", "host-1.a"]) == ["host_0", "host-1.a"]
    with pytest.raises(ValueError, match="differ only in case"):
        check_names(use_case, ["Host_0", "host_0"])
    with pytest.raises(ValueError, match="container name"):
        check_names(use_case, ["host 0"])


# -- the real Java client ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def java() -> Any:
    return java_or_skip()


def _offline_store(java: Any) -> client.Store:
    """A real GridStore object that has not talked to any server (building rows needs none)."""
    return client.Store(client.Connection("127.0.0.1", closed_port(), "tsbench", "admin", "x"), check=False)


def test_the_jvm_runs_without_pythons_fault_handler(java: Any) -> None:
    """pytest switches Python's fault handler on; started after it, the JVM's own SIGSEGV/SIGBUS
    (JIT safepoints) were taken by it and killed pytest workers at random."""
    import faulthandler

    assert java.jpype.isJVMStarted() and not faulthandler.is_enabled()


@pytest.mark.parametrize("name", ["devops", "iot"])
def test_java_rows_built_from_the_payload_are_the_datasets_rows(
    name: str, request: pytest.FixtureRequest, java: Any
) -> None:
    dataset: Dataset = request.getfixturevalue(name)
    store = _offline_store(java)
    containers = 0
    for measurement in dataset.measurements:
        item = layout(dataset.use_case.measurement(measurement))
        schema, nameless = store.schema(item), store.schema(item, keyed=False)
        assert schema.getType().toString() == "TIME_SERIES" and schema.isRowKeyAssigned()
        assert nameless.getType().toString() == "COLLECTION" and not nameless.isRowKeyAssigned()
        for info in (schema, nameless):
            assert [str(info.getColumnInfo(i).getName()) for i in range(info.getColumnCount())] == [
                TIME,
                *item.names,
            ]
        for batch in dataset.iter_batches(measurement, 1_000):
            expected = _expected_rows(dataset, measurement, batch)
            seen = []
            for payload in shape(item, dataset.use_case.entity_key, batch):
                rows = store.rows(payload)  # Map<container, List<Row>> for GridStore.multiPut
                seen += [str(k) for k in rows.keySet()]
                for entry in rows.entrySet():
                    assert entry.getValue().get(0).getSchema().isRowKeyAssigned() == payload.keyed
                    back = client.columns_table(java.Bulk.columns(schema, entry.getValue()))
                    assert _same(back, expected[str(entry.getKey())]), str(entry.getKey())
                    containers += 1
            assert sorted(seen) == sorted(expected)
    assert containers >= len(dataset.measurements) * dataset.scale


def test_the_client_fails_clearly_against_a_closed_port(java: Any) -> None:
    port = closed_port()
    connection = client.Connection("127.0.0.1", port, "tsbench", "admin", "secret-pw", failover_timeout_s=1)
    started = time.monotonic()
    with pytest.raises(TargetError) as raised:
        client.Store(connection)
    message = str(raised.value)
    assert f"127.0.0.1:{port}" in message and "JC_BAD_CONNECTION" in message
    assert "secret-pw" not in message and "secret-pw" not in repr(connection)
    assert time.monotonic() - started < 20


def test_writer_and_session_of_the_target_fail_clearly_when_nothing_listens(java: Any) -> None:
    use_case = get_use_case("cpu-only")
    tags = pa.table({tag: pa.array([f"{tag}_0"]) for tag in use_case.entity_tags})
    ports = {role: closed_port() for role in ("transaction", "system", "cluster", "sync", "sql")}
    endpoint = Endpoint("127.0.0.1", ports, "admin", "public", extra={"failover_timeout_s": 1}, secrets={})
    target = GridDBTarget(endpoint, use_case, tags)
    with pytest.raises(TargetError, match=r"connecting to 127\.0\.0\.1"):
        target.writer()
    with pytest.raises(TargetError, match=r"connecting to 127\.0\.0\.1"):
        target.session()
    with pytest.raises(TargetError, match="/node/stat"):
        target.version()


# -- (b) rendering: golden TQL -----------------------------------------------------------------------

T0 = parse_instant("2016-01-01T03:00:00Z")
HOUR = 3_600 * 10**9
ENTITIES = ["host_0", "host_1", "host_2"]


def _window(hours: int) -> dict[str, int]:
    return {"start_ns": T0, "end_ns": T0 + hours * HOUR}


def _q(name: str, hosts: Sequence[str] | None = ("host_1",), **times: int) -> LogicalQuery:
    qtype = QUERY_TYPES[name]
    return LogicalQuery(
        f"{name}#0", name, qtype.fields, None if qtype.hosts is None else tuple(hosts), **times
    )


W1 = "\"time\" >= TIMESTAMP('2016-01-01T03:00:00.000Z') AND \"time\" < TIMESTAMP('2016-01-01T04:00:00.000Z')"
W8 = "\"time\" >= TIMESTAMP('2016-01-01T03:00:00.000Z') AND \"time\" < TIMESTAMP('2016-01-01T11:00:00.000Z')"
W12 = "\"time\" >= TIMESTAMP('2016-01-01T03:00:00.000Z') AND \"time\" < TIMESTAMP('2016-01-01T15:00:00.000Z')"

GOLDEN: dict[str, tuple[LogicalQuery, list[tuple[str, str]], dict[str, Any]]] = {
    **{
        f"single-groupby-{m}-{h}-{t}": (
            _q(f"single-groupby-{m}-{h}-{t}", ENTITIES[:h] if h > 1 else ("host_1",), **_window(t)),
            [
                (f"cpu_{e}", f"SELECT * WHERE {W1 if t == 1 else W12}")
                for e in (ENTITIES[:h] if h > 1 else ["host_1"])
            ],
            {"kind": "buckets", "agg": "max", "bucket_ns": 60 * 10**9, "by_entity": False, "limit": 0},
        )
        for m, h, t in ((1, 1, 1), (1, 1, 12), (5, 1, 1), (5, 1, 12))
    },
    **{
        f"single-groupby-{m}-8-1": (
            _q(f"single-groupby-{m}-8-1", [f"host_{i}" for i in range(8)], **_window(1)),
            [(f"cpu_host_{i}", f"SELECT * WHERE {W1}") for i in range(8)],
            {"kind": "buckets", "agg": "max", "bucket_ns": 60 * 10**9, "by_entity": False, "limit": 0},
        )
        for m in (1, 5)
    },
    **{
        f"cpu-max-all-{h}": (
            _q(f"cpu-max-all-{h}", [f"host_{i}" for i in range(h)], **_window(8)),
            [(f"cpu_host_{i}", f"SELECT * WHERE {W8}") for i in range(h)],
            {"kind": "buckets", "agg": "max", "bucket_ns": HOUR, "by_entity": False, "limit": 0},
        )
        for h in (1, 8)
    },
    **{
        f"double-groupby-{s}": (
            _q(f"double-groupby-{s}", None, **_window(12)),
            [(f"cpu_{e}", f"SELECT * WHERE {W12}") for e in ENTITIES],
            {"kind": "buckets", "agg": "mean", "bucket_ns": HOUR, "by_entity": True, "limit": 0},
        )
        for s in ("1", "5", "all")
    },
    "high-cpu-1": (
        _q("high-cpu-1", **_window(12)),
        [("cpu_host_1", f'SELECT * WHERE {W12} AND "usage_user" > 90.0')],
        {"kind": "rows"},
    ),
    "high-cpu-all": (
        _q("high-cpu-all", None, **_window(12)),
        [(f"cpu_{e}", f'SELECT * WHERE {W12} AND "usage_user" > 90.0') for e in ENTITIES],
        {"kind": "rows"},
    ),
    "lastpoint": (
        _q("lastpoint", None),
        [(f"cpu_{e}", 'SELECT * ORDER BY "time" DESC LIMIT 1') for e in ENTITIES],
        {"kind": "latest"},
    ),
    "groupby-orderby-limit": (
        _q("groupby-orderby-limit", None, end_ns=T0 + 90 * 10**9),  # 03:01:30
        [
            (
                f"cpu_{e}",
                "SELECT * WHERE \"time\" >= TIMESTAMP('2016-01-01T02:57:00.000Z') "
                "AND \"time\" < TIMESTAMP('2016-01-01T03:01:30.000Z')",
            )
            for e in ENTITIES
        ],
        {"kind": "buckets", "agg": "max", "bucket_ns": 60 * 10**9, "by_entity": False, "limit": 5},
    ),
    "ycsb-read": (
        _q("ycsb-read", at_ns=T0 + 10 * 10**9),
        [("cpu_host_1", "SELECT * WHERE \"time\" = TIMESTAMP('2016-01-01T03:00:10.000Z')")],
        {"kind": "rows"},
    ),
    "ycsb-scan": (
        _q("ycsb-scan", **_window(1)),
        [("cpu_host_1", f"SELECT * WHERE {W1}")],
        {"kind": "rows"},
    ),
    "ycsb-count": (
        _q("ycsb-count", **_window(1)),
        [("cpu_host_1", f'SELECT COUNT(*) WHERE {W1} AND "usage_user" IS NOT NULL')],
        {"kind": "aggregate", "agg": "count", "field_kind": "LONG"},
    ),
    "ycsb-avg": (
        _q("ycsb-avg", **_window(1)),
        [
            ("cpu_host_1", f'SELECT AVG("usage_user") WHERE {W1}'),
            ("cpu_host_1", f'SELECT COUNT(*) WHERE {W1} AND "usage_user" IS NOT NULL'),
        ],
        {"kind": "aggregate", "agg": "avg", "field_kind": "LONG"},
    ),
    "ycsb-sum": (
        _q("ycsb-sum", **_window(1)),
        [
            ("cpu_host_1", f'SELECT SUM("usage_user") WHERE {W1}'),
            ("cpu_host_1", f'SELECT COUNT(*) WHERE {W1} AND "usage_user" IS NOT NULL'),
        ],
        {"kind": "aggregate", "agg": "sum", "field_kind": "LONG"},
    ),
}


def test_golden_covers_every_query_type() -> None:
    assert set(GOLDEN) == set(TQL_TYPES)


@pytest.mark.parametrize("name", sorted(TQL_TYPES))
def test_golden_tql(name: str) -> None:
    query, steps, combine_spec = GOLDEN[name]
    plan = json.loads(dialect.render(query, CPU_LAYOUT, ENTITIES))
    assert [(s["container"], s["tql"]) for s in plan["steps"]] == steps
    assert {k: plan["combine"][k] for k in combine_spec} == combine_spec
    assert plan["type"] == name and plan["measurement"] == "cpu"
    for step in plan["steps"]:
        assert step["tql"] == dialect.tql(step["form"]) and step["entity"] == step["container"][4:]


def test_golden_orderby_limit_has_an_unbounded_fallback() -> None:
    plan = dialect.plan(GOLDEN["groupby-orderby-limit"][0], CPU_LAYOUT, ENTITIES)
    assert [s["tql"] for s in plan["fallback"]] == [
        "SELECT * WHERE \"time\" < TIMESTAMP('2016-01-01T03:01:30.000Z')"
    ] * len(ENTITIES)


def test_instants_are_rounded_so_windows_stay_half_open_over_millisecond_keys() -> None:
    query = _q("ycsb-scan", start_ns=T0 + 1, end_ns=T0 + 1_000_001)  # 1 ns and 1 ms + 1 ns past 03:00
    (step,) = dialect.plan(query, CPU_LAYOUT, ENTITIES)["steps"]
    assert step["form"]["from_ms"] == T0 // 10**6 + 1 and step["form"]["to_ms"] == T0 // 10**6 + 2
    read = _q("ycsb-read", at_ns=T0 + 5)  # between two milliseconds: no row can match
    assert dialect.plan(read, CPU_LAYOUT, ENTITIES)["steps"] == []


# -- (c) the combine step against the oracle ---------------------------------------------------------


class DuckSteps:
    """What GridDB would answer to each step's TQL, computed with DuckDB from the dataset.

    Independent of the TQL text and of combine.py: it reads the step's ``form`` (the selection the
    TQL expresses) and evaluates it over the Parquet files with TQL's documented semantics: ``*``
    returns the row key and every column; ``AVG`` returns no row over an empty selection, ``COUNT``
    and ``SUM`` return one (0); a missing container returns nothing.
    """

    def __init__(self, dataset: Dataset):
        self.connection = duckdb.connect()
        self.largest_call = 0
        source = dataset.glob("cpu").replace("'", "''")
        self.connection.execute(
            "CREATE VIEW cpu AS SELECT epoch_ns(time) // 1000000 AS t, CAST(hostname AS VARCHAR) AS entity, "
            f"* EXCLUDE (time, hostname) FROM read_parquet('{source}')"
        )
        self.entities = {e for (e,) in self.connection.execute("SELECT DISTINCT entity FROM cpu").fetchall()}
        self.calls = 0

    def __call__(self, steps: Sequence[dialect.Step]) -> list[combine.StepResult]:
        self.largest_call = max(self.largest_call, len(steps))
        return [self.one(step) for step in steps]

    def one(self, step: dialect.Step) -> combine.StepResult:
        self.calls += 1
        if step["entity"] not in self.entities:
            return combine.StepResult()
        selection = step["form"]
        where, params = ["entity = ?"], [step["entity"]]
        for key, op in (("from_ms", ">="), ("to_ms", "<"), ("at_ms", "=")):
            if selection[key] is not None:
                where.append(f"t {op} ?")
                params.append(selection[key])
        if selection["above"] is not None:
            where.append(f'"{selection["above"][0]}" > ?')
            params.append(selection["above"][1])
        if selection["not_null"] is not None:
            where.append(f'"{selection["not_null"]}" IS NOT NULL')
        condition = " AND ".join(where)
        if selection["select"] == "*":
            order = " ORDER BY t DESC" if selection["latest_first"] else ""
            limit = f" LIMIT {selection['limit']}" if selection["limit"] is not None else ""
            columns = ", ".join(f'"{c}"' for c in CPU_LAYOUT.names)
            sql = f"SELECT t AS {TIME}, {columns} FROM cpu WHERE {condition}{order}{limit}"
            return combine.StepResult(table=self.connection.sql(sql, params=params).to_arrow_table())
        function = selection["select"]
        target = "*" if function == "COUNT" else f'"{selection["column"]}"'
        ((count, value),) = self.connection.sql(
            f"SELECT count(*), {function}({target}) FROM cpu WHERE {condition}", params=params
        ).fetchall()
        if function == "AVG":
            return combine.StepResult() if count == 0 else combine.StepResult(double=float(value))
        value = value or 0
        return combine.StepResult(long=int(value), double=float(value))


def _queries(dataset: Dataset, per_type: int, seed: int) -> list[LogicalQuery]:
    return generate_queries(DataRange.of(dataset), TQL_TYPES, per_type, seed)


def _check_against_oracle(
    dataset: Dataset, queries: list[LogicalQuery], chunk: int = combine.FETCH_CONTAINERS
) -> dict[str, int]:
    entities = dataset.tags().column("hostname").to_pylist()
    oracle, steps = Oracle(dataset), DuckSteps(dataset)
    failures, nonempty = [], dict.fromkeys(TQL_TYPES, 0)
    try:
        for query in queries:
            plan = json.loads(dialect.render(query, CPU_LAYOUT, entities))
            actual = Answer.build(query.query_type, combine.answer(plan, steps, chunk))
            expected = oracle.answer(query)
            result = compare(expected, actual)
            if not result.ok:
                failures.append(f"{query.id}: {result.reason} {result.diff[:2]}")
            nonempty[query.type] += bool(expected.rows)
    finally:
        oracle.close()
    assert not failures, "\n".join(failures)
    assert steps.largest_call <= chunk
    return nonempty


def test_every_query_type_combines_to_the_oracles_answer(small_dataset: Dataset) -> None:
    queries = _queries(small_dataset, per_type=4, seed=11)
    nonempty = _check_against_oracle(small_dataset, queries)
    sometimes_empty = {"high-cpu-1"}  # 12 h of one host may hold no usage_user > 90
    assert all(nonempty[t] for t in TQL_TYPES if t not in sometimes_empty), nonempty


def test_answers_folded_chunk_by_chunk_equal_the_oracles(small_dataset: Dataset) -> None:
    """Steps fetched 3 containers at a time (the small dataset has more hosts than that), every
    partial aggregate folded into the next: the same answers as the oracle's, for every type."""
    assert len(small_dataset.tags()) > 3
    nonempty = _check_against_oracle(small_dataset, _queries(small_dataset, per_type=3, seed=5), chunk=3)
    assert sum(nonempty.values()) >= len(TQL_TYPES) - 1, nonempty


def test_edges_windows_at_the_data_borders_and_a_read_outside_the_data(small_dataset: Dataset) -> None:
    start, end = small_dataset.start_ns, small_dataset.end_ns
    edges = [
        _q("ycsb-scan", start_ns=start - HOUR // 2, end_ns=start + HOUR // 2),
        _q("ycsb-sum", start_ns=end, end_ns=end + HOUR),  # empty window: NULL, not 0
        _q("ycsb-avg", start_ns=end, end_ns=end + HOUR),
        _q("ycsb-count", start_ns=end, end_ns=end + HOUR),
        _q("ycsb-read", at_ns=end + 10 * 10**9),
        _q("groupby-orderby-limit", None, end_ns=start + 2 * 60 * 10**9),  # only 2 buckets exist
        _q("cpu-max-all-1", ["host_11"], start_ns=end - 2 * HOUR + 10**9, end_ns=end + 6 * HOUR + 10**9),
        _q("double-groupby-1", None, start_ns=start + 1, end_ns=start + 12 * HOUR + 1),
    ]
    _check_against_oracle(small_dataset, edges)


def test_orderby_limit_falls_back_when_the_window_holds_too_few_buckets(sparse: Dataset) -> None:
    _check_against_oracle(sparse, _queries(sparse, per_type=5, seed=2))
    entities = sparse.tags().column("hostname").to_pylist()
    plan = dialect.plan(
        _queries(sparse, 1, 2)[QUERY_TYPES_INDEX["groupby-orderby-limit"]], CPU_LAYOUT, entities
    )
    steps = DuckSteps(sparse)
    combine.answer(plan, steps)
    assert steps.calls == 2 * len(entities)  # the 5-minute window held < 5 buckets: fallback ran


def test_the_oracle_check_is_not_vacuous(small_dataset: Dataset) -> None:
    """A plan whose steps return the wrong rows (the window one bucket early) must fail."""
    entities = small_dataset.tags().column("hostname").to_pylist()
    query = _queries(small_dataset, 1, 4)[QUERY_TYPES_INDEX["single-groupby-1-1-1"]]
    plan = dialect.plan(query, CPU_LAYOUT, entities)
    for step in plan["steps"]:
        step["form"] = {**step["form"], "from_ms": step["form"]["from_ms"] - 60_000}
    actual = Answer.build(query.query_type, combine.answer(plan, DuckSteps(small_dataset)))
    oracle = Oracle(small_dataset)
    try:
        assert not compare(oracle.answer(query), actual).ok
    finally:
        oracle.close()


def test_step_results_from_the_java_columns_feed_the_combine_step(small_dataset: Dataset, java: Any) -> None:
    """The client's Columns → Arrow conversion gives tables the combine step reads like DuckDB's."""
    store = _offline_store(java)
    batch = next(small_dataset.iter_batches("cpu", 2_000))
    [payload] = shape(CPU_LAYOUT, "hostname", batch)
    rows = store.rows(payload)
    container = payload.containers[0]
    table = client.columns_table(java.Bulk.columns(store.schema(CPU_LAYOUT), rows.get(container)))
    query = _q(
        "ycsb-scan", (payload.entities[0],), start_ns=small_dataset.start_ns, end_ns=small_dataset.end_ns
    )
    plan = dialect.plan(query, CPU_LAYOUT, [payload.entities[0]])
    answer = combine.answer(plan, lambda steps: [combine.StepResult(table=table) for _ in steps])
    assert len(answer) == table.num_rows and answer[0][1] == payload.entities[0]
    assert [row[0] for row in answer] == [int(ms) * 10**6 for ms in table.column(TIME).to_pylist()]
    assert list(answer[0][2:]) == [table.column(f)[0].as_py() for f in CPU_FIELDS]


def test_fetched_columns_are_split_into_one_result_per_query(small_dataset: Dataset, java: Any) -> None:
    """``step_results`` over what ``Bulk.fetch`` returns: rows of all row queries concatenated in query
    order, per-query counts, aggregates, missing containers."""
    jp = java.jpype
    store = _offline_store(java)
    [payload] = shape(CPU_LAYOUT, "hostname", next(small_dataset.iter_batches("cpu", 60)))
    rows = store.rows(payload)
    first, second = (rows.get(payload.containers[i]) for i in (0, 1))
    both = jp.JClass("java.util.ArrayList")(first)
    both.addAll(second)
    fetched = SimpleNamespace(
        counts=jp.JArray(jp.JInt)([first.size(), 0, 0, second.size()]),
        missing=jp.JArray(jp.JBoolean)([False, True, False, False]),
        longs=jp.JArray(jp.JClass("java.lang.Long"))([None, None, jp.JClass("java.lang.Long")(7), None]),
        doubles=jp.JArray(jp.JClass("java.lang.Double"))(
            [None, None, jp.JClass("java.lang.Double")(7.0), None]
        ),
        rows=java.Bulk.columns(store.schema(CPU_LAYOUT), both),
    )
    results = client.step_results(fetched)
    assert [r.table is None for r in results] == [False, True, False, False]
    assert (results[2].long, results[2].double, results[2].table.num_rows) == (7, 7.0, 0)
    for result, java_rows in ((results[0], first), (results[3], second)):
        expected = client.columns_table(java.Bulk.columns(store.schema(CPU_LAYOUT), java_rows))
        assert result.table.to_pylist() == expected.to_pylist() and result.long is None


def test_cloud_install_writes_griddb_json_on_the_container_ports() -> None:
    """The two configuration files of the rendered cloud script are valid JSON (evaluated by bash on a
    2-core / 4 GiB machine) and use the ports and cluster of container.py and the definition's table."""
    from tsbench.runtimes.cloud_install import render_install_script
    from tsbench.runtimes.definition import Machine
    from tsbench.targets.griddb.container import PORTS
    from tsbench.targets.griddb.definition import DEFINITION
    from tsbench.targets.griddb.server import tuning_sections

    script = render_install_script(DEFINITION)
    header = script.split("# --- runtimes/cloud_lib.sh ---")[0]
    values = 'DATA_DIR=/data/db GS_HOME=/var/lib/gridstore address=10.0.0.5 public_transaction=""'
    configs = {}
    for name in ("gs_node.json", "gs_cluster.json"):
        function = f"griddb_{name.removeprefix('gs_').replace('.', '_')}"  # the file its script writes
        assert f'{function} >"$GS_HOME/conf/{name}.tmp"' in script
        text = subprocess.run(
            ["bash", "-c", f"{header}\n{values}; {function}"],
            capture_output=True,
            text=True,
            check=True,
            env={"TSBENCH_CORES": "2", "TSBENCH_MEMORY_MIB": "4096", "PATH": "/usr/bin:/bin"},
        ).stdout
        configs[name] = json.loads(text)
    node, cluster = configs["gs_node.json"], configs["gs_cluster.json"]
    assert {role: node[role]["servicePort"] for role in PORTS} == PORTS
    (member,) = cluster["cluster"]["notificationMember"]
    assert {role: member[role]["port"] for role in PORTS} == PORTS
    assert {member[role]["address"] for role in PORTS} == {"10.0.0.5"}
    assert cluster["cluster"]["clusterName"] == "tsbench"
    assert (
        node["dataStore"]["dbPath"] == "/data/db/data"
        and node["dataStore"]["transactionLogPath"] == "/data/db/txnlog"
    )
    tuning = {
        section: {key: value for key, value in node[section].items() if not key.endswith("Path")}
        for section in ("dataStore", "checkpoint")
    }
    assert tuning == {
        "dataStore": {
            "storeMemoryLimit": "2048MB",  # half of 4 GiB
            "concurrency": 2,
            "storeCompressionMode": "NO_COMPRESSION",
            "logWriteMode": 1,
            "persistencyMode": "NORMAL",
            "affinityGroupSize": 4,
        },
        "checkpoint": {"checkpointInterval": "60s"},
    }
    assert DEFINITION.settings(Machine(cores=2, memory_mib=4096))["dataStore.storeMemoryLimit"] == "2048MB"
    assert (
        tuning_sections()["dataStore"]["storeMemoryLimit"]
        == DEFINITION.settings()["dataStore.storeMemoryLimit"]
    )
    assert "tsbench-db.service" in script and "DB_PASSWORD" in script


def test_the_version_is_the_definitions() -> None:
    """One pin: the image, the install recipe and the rendered cloud script take definition.py's."""
    from tsbench.runtimes.cloud_install import render_install_script
    from tsbench.runtimes.source_archive import tree_sha256
    from tsbench.targets.griddb.container import CONTAINERS
    from tsbench.targets.griddb.definition import DEFINITION

    assert DEFINITION.version == "5.9.0" and DEFINITION.main_job == 0
    assert [spec.image for spec in CONTAINERS.values()] == ["griddb/griddb:5.9.0-jammy"]
    folder = Path(dialect.__file__).parent
    pinned = {DEFINITION.version, *DEFINITION.install_env.values()}
    for script in ("build.sh", "install_client.sh", "cloud_install.sh"):
        text = (folder / script).read_text()
        assert not [value for value in pinned if value in text], script
    rendered = render_install_script(DEFINITION)
    assert "\nexport GRIDDB_VERSION=5.9.0\n" in rendered
    assert f"\nexport GRIDDB_SOURCE_COMMIT={DEFINITION.install_env['GRIDDB_SOURCE_COMMIT']}\n" in rendered
    # the commit is the vendored archive's (git archive records it in the pax header)
    vendor = os.environ.get("TSBENCH_VENDOR") or Path(__file__).resolve().parents[3] / "shared" / "vendor"
    archive = Path(vendor) / DEFINITION.install_env["GRIDDB_SOURCE_ARCHIVE"]
    with tarfile.open(archive) as source:
        assert source.pax_headers["comment"] == DEFINITION.install_env["GRIDDB_SOURCE_COMMIT"]
    assert tree_sha256(archive) == DEFINITION.install_env["GRIDDB_SOURCE_TREE_SHA256"]


def test_tags_collection_rows_are_the_datasets_tags(small_dataset: Dataset, java: Any) -> None:
    from tsbench.targets.griddb.layout import TAGS_CONTAINER, tags_layout

    store = _offline_store(java)
    columns = tags_layout(small_dataset.use_case)
    schema = store.collection_schema(TAGS_CONTAINER, columns)
    assert schema.getType().toString() == "COLLECTION" and schema.isRowKeyAssigned()
    tags = small_dataset.tags()
    values = [tags.column(c.name).to_pylist() for c in columns]
    rows = store.string_rows(schema, values)
    read = [[str(row.getString(k)) for k in range(len(columns))] for row in rows]
    assert read == [list(row) for row in zip(*values, strict=True)] and len(read) == small_dataset.scale


# -- (e) nameless rows on the built server -------------------------------------------------------------


@pytest.fixture(scope="module")
def iot_nameless(dataset_cache: Path) -> Dataset:
    """10 trucks × 6 h: nameless rows in both measurements, two of them at one instant."""
    spec = DatasetSpec.parse(use_case="iot", scale=10, end="2016-01-01T06:00:00Z")
    return ensure_dataset(spec, dataset_cache)[0]


@pytest.fixture(scope="module")
def griddb_iot(iot_nameless: Dataset, java: Any) -> Iterator[GridDBTarget]:
    """The built gsserver, started by the local runtime, with ``iot_nameless`` loaded."""
    with served(iot_nameless) as target:
        yield target


def _sorted_rows(table: pa.Table, names: Sequence[str]) -> list[tuple[Any, ...]]:
    return sorted(zip(*(table.column(n).to_pylist() for n in names), strict=True), key=repr)


def _dataset_nameless(dataset: Dataset, measurement: str) -> list[tuple[Any, ...]]:
    """The dataset's rows without an entity as GridDB keeps them: (time in ms, *columns), sorted."""
    expected = _expected_rows(dataset, measurement, dataset.read(measurement))
    nameless = expected.get(f"{measurement}_nameless", pa.table({TIME: pa.array([], pa.int64())}))
    return _sorted_rows(nameless, nameless.column_names)


def _stored_nameless(target: GridDBTarget, measurement: str) -> list[tuple[Any, ...]]:
    """Every row of the measurement's nameless collection, read back from the server, sorted."""
    store = target.connect()
    try:
        [result] = store.fetch([f"{measurement}_nameless"], ["SELECT *"])
    finally:
        store.close()
    assert result.table is not None, f"{measurement}_nameless is missing"
    if not result.table.num_rows:  # an empty result has no columns but the time
        return []
    return _sorted_rows(result.table, [TIME, *target.layouts[measurement].names])


@pytest.mark.integration
def test_nameless_rows_are_all_stored_in_the_nameless_collections(
    griddb_iot: GridDBTarget, iot_nameless: Dataset
) -> None:
    shared_instants = 0
    for measurement, rows in iot_nameless.rows.items():
        expected = _dataset_nameless(iot_nameless, measurement)
        assert len(expected) == iot_nameless.read(measurement).column("name").null_count > 0
        assert griddb_iot.row_count(measurement) == rows, measurement
        stored = _stored_nameless(griddb_iot, measurement)
        assert len(stored) == len(expected) and stored == expected, measurement
        shared_instants += len(expected) - len({row[0] for row in expected})
    assert shared_instants > 0  # a TIME_SERIES container (time = row key) would keep one of each


@pytest.mark.integration
def test_the_nameless_collections_are_recreated_empty_and_reloaded_once(
    griddb_iot: GridDBTarget, iot_nameless: Dataset
) -> None:
    griddb_iot.create_schema()
    store = griddb_iot.connect()
    try:
        names = {name.lower() for name in store.container_names()}
    finally:
        store.close()
    assert {f"{m}_nameless" for m in iot_nameless.measurements} <= names
    assert all(not _stored_nameless(griddb_iot, m) for m in iot_nameless.measurements)
    assert not any(griddb_iot.row_count(m) for m in iot_nameless.measurements)
    load(griddb_iot, iot_nameless)
    for measurement, rows in iot_nameless.rows.items():
        assert griddb_iot.row_count(measurement) == rows, measurement
        assert _stored_nameless(griddb_iot, measurement) == _dataset_nameless(iot_nameless, measurement)
