"""The ClickHouse target against the real ClickHouse engine, in-process (chDB), via the official client.

No ClickHouse server can be installed on these machines (the official apt repository and Docker Hub
are out of reach; Debian's package is from 2018). clickhouse-connect, the client the target uses,
also drives chDB — ClickHouse's engine as a library — behind the same ``Client`` object
(``interface="chdb"``, passed through ``Endpoint.extra["client_options"]``). So the target's own
code runs here unchanged: its DDL, its Arrow batches through ``insert_arrow`` (``INSERT … FORMAT
Arrow``), its rendered SQL for all 20 devops and YCSB-TS query types (compared with the oracle; the
12 iot types: test_clickhouse_iot.py), footprint, version and settings. Not exercised here: the
HTTP transport against a server (only its failure on a closed port), the server recipe's process,
the container and the cloud install (README.md says where they run).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import chdb
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tsbench.runtimes.cloud_install import render_install_script
from tsbench.runtimes.ports import free_port
from tsbench.spec import DatasetSpec
from tsbench.targets.base import Endpoint, Target, TargetError
from tsbench.targets.clickhouse import dialect
from tsbench.targets.clickhouse.batches import InsertShaper
from tsbench.targets.clickhouse.config import LISTENERS_REMOVED, SYSTEM_LOGS_REMOVED
from tsbench.targets.clickhouse.container import CONTAINERS, PASSWORD_VARIABLE
from tsbench.targets.clickhouse.definition import DEFINITION
from tsbench.targets.clickhouse.schema import table_columns
from tsbench.targets.clickhouse.server import CLICKHOUSE_VERSION, ClickHouseServer, password_sha256
from tsbench.targets.clickhouse.target import ClickHouseTarget, connect
from tsbench.workload.answers import Answer, compare
from tsbench.workload.dataset import Dataset, ensure_dataset
from tsbench.workload.oracle import Oracle
from tsbench.workload.queries import DataRange, LogicalQuery, generate_queries
from tsbench.workload.query_types import QUERY_TYPES, get_query_type
from tsbench.workload.usecases import get_use_case


@pytest.fixture(autouse=True, scope="module")
def _fatal_signal_handlers_back(fatal_signal_handlers_kept: None) -> None:
    """chDB's fatal-signal handlers do not outlive this module (``tests/conftest.py``)."""


REPO = Path(__file__).resolve().parents[2]
FOLDER = REPO / "plugins" / "tsbench" / "targets" / "clickhouse"
INSTALL_SCRIPT = FOLDER / "install.sh"
CLOUD_SCRIPT = FOLDER / "cloud_install.sh"


# -- fixtures: one chDB engine path for the whole module (chDB allows one per process) --------------


@pytest.fixture(scope="module")
def engine_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("chdb"))


def chdb_endpoint(engine_path: str, database: str) -> Endpoint:
    return Endpoint(
        host="127.0.0.1",
        ports={"http": 0, "native": 0},
        database=database,
        extra={"client_options": {"interface": "chdb", "path": engine_path}},
    )


@pytest.fixture(scope="module")
def devops_dataset(dataset_cache: Path) -> Dataset:
    spec = DatasetSpec.parse(use_case="devops", scale=3, end="2016-01-01T02:00:00Z", seed=11)
    return ensure_dataset(spec, dataset_cache)[0]


@pytest.fixture(scope="module")
def iot_dataset(dataset_cache: Path) -> Dataset:
    """iot, 6 trucks × 4 h: nulls, and nameless rows in both measurements (20 readings, 19 diagnostics)."""
    spec = DatasetSpec.parse(use_case="iot", scale=6, end="2016-01-01T04:00:00Z", seed=11)
    return ensure_dataset(spec, dataset_cache)[0]


def load(target: Target, dataset: Dataset, batch_rows: int = 5_000) -> int:
    """Create the schema, write every measurement with one writer (the target's own load path)."""
    target.create_schema()
    writer = target.writer()
    written = 0
    try:
        for measurement in dataset.measurements:
            for batch in dataset.iter_batches(measurement, batch_rows):
                written += writer.write(measurement, batch)
    finally:
        writer.close()
    target.flush()
    return written


@pytest.fixture(scope="module")
def cpu_target(engine_path: str, small_dataset: Dataset) -> Iterator[ClickHouseTarget]:
    target = ClickHouseTarget(
        chdb_endpoint(engine_path, "cpu_only"), small_dataset.use_case, small_dataset.tags()
    )
    assert load(target, small_dataset) == small_dataset.rows["cpu"] == 103_680
    yield target
    target.close()


def scalar(target: ClickHouseTarget, sql: str) -> object:
    return target._admin(sql)[0][0]


# -- rendering --------------------------------------------------------------------------------------


def test_instants_are_exact_nanosecond_constants() -> None:
    assert dialect.instant(1_451_606_400_123_456_789) == (
        "toDateTime64('2016-01-01 00:00:00.123456789', 9, 'UTC')"
    )
    assert dialect.instant(0) == "toDateTime64('1970-01-01 00:00:00.000000000', 9, 'UTC')"
    assert dialect.literal("it's a\\b") == "'it\\'s a\\\\b'"


def test_buckets_are_epoch_aligned_integer_nanoseconds() -> None:
    assert dialect.bucket(60_000_000_000) == "intDiv(toUnixTimestamp64Nano(time), 60000000000) * 60000000000"
    with pytest.raises(ValueError):
        dialect.bucket(0)


def _query(type_name: str, **fields: object) -> LogicalQuery:
    qtype = get_query_type(type_name)
    body: dict[str, object] = {"id": f"{type_name}#0", "type": type_name, "fields": qtype.fields, **fields}
    return LogicalQuery(**body)  # type: ignore[arg-type]


def test_rendering_of_each_kind() -> None:
    start, end = 1_451_606_400 * 10**9, 1_451_610_000 * 10**9
    window = (
        "time >= toDateTime64('2016-01-01 00:00:00.000000000', 9, 'UTC') "
        "AND time < toDateTime64('2016-01-01 01:00:00.000000000', 9, 'UTC')"
    )
    groupby = dialect.render(
        _query("single-groupby-1-8-1", hosts=("host_1", "host_2"), start_ns=start, end_ns=end)
    )
    assert groupby == (
        "SELECT intDiv(toUnixTimestamp64Nano(time), 60000000000) * 60000000000 AS bucket, "
        "max(usage_user) AS max_usage_user FROM cpu "
        f"WHERE hostname IN ('host_1', 'host_2') AND {window} GROUP BY bucket"
    )
    double = dialect.render(_query("double-groupby-1", start_ns=start, end_ns=end))
    assert "AS bucket, hostname, avg(usage_user) AS mean_usage_user" in double
    assert double.endswith("GROUP BY bucket, hostname")
    limit = dialect.render(_query("groupby-orderby-limit", end_ns=end))
    assert "WHERE time < toDateTime64('2016-01-01 01:00:00.000000000', 9, 'UTC')" in limit
    assert limit.endswith("GROUP BY bucket ORDER BY bucket DESC LIMIT 5")
    high = dialect.render(_query("high-cpu-1", hosts=("host_3",), start_ns=start, end_ns=end))
    assert high.startswith(
        "SELECT toUnixTimestamp64Nano(time) AS time_ns, hostname, usage_user, usage_system"
    )
    assert high.endswith(f"WHERE hostname = 'host_3' AND {window} AND usage_user > 90.0")
    last = dialect.render(_query("lastpoint"))
    assert last.startswith(
        "SELECT hostname, toUnixTimestamp64Nano(max(time)) AS time_ns, untuple(argMax(tuple("
    )
    assert last.endswith("FROM cpu GROUP BY hostname")
    read = dialect.render(_query("ycsb-read", hosts=("host_0",), at_ns=start + 10**10))
    assert read.endswith(
        "WHERE hostname = 'host_0' AND time = toDateTime64('2016-01-01 00:00:10.000000000', 9, 'UTC')"
    )
    # Empty windows: NULL from sum/avg (the oracle's answer), 0 from count.
    for agg, function in (("sum", "sumOrNull"), ("avg", "avgOrNull"), ("count", "count")):
        text = dialect.render(_query(f"ycsb-{agg}", hosts=("host_0",), start_ns=start, end_ns=end))
        expected = f"SELECT {function}(usage_user) AS {agg}_usage_user FROM cpu WHERE hostname = 'host_0'"
        assert text == f"{expected} AND {window}"


# -- schema and batch shaping on the engine ---------------------------------------------------------


@pytest.mark.parametrize("use_case", ["cpu-only", "devops", "iot"])
def test_schema_on_the_engine(
    engine_path: str, use_case: str, small_dataset: Dataset, devops_dataset: Dataset, iot_dataset: Dataset
) -> None:
    dataset = {"cpu-only": small_dataset, "devops": devops_dataset, "iot": iot_dataset}[use_case]
    target = ClickHouseTarget(
        chdb_endpoint(engine_path, "ddl_" + use_case.replace("-", "_")), dataset.use_case, dataset.tags()
    )
    try:
        target.create_schema()
        target.create_schema()  # drops and recreates
        key = dataset.use_case.entity_key
        for measurement in dataset.use_case.measurements:
            columns = target._admin(
                f"SELECT name, type FROM system.columns WHERE database = '{target.database}' "
                f"AND table = '{measurement.name}' ORDER BY position"
            )
            assert columns == [(c.name, c.type) for c in table_columns(measurement, dataset.use_case)]
            engine, sorting, partition = target._admin(
                f"SELECT engine, sorting_key, partition_key FROM system.tables "
                f"WHERE database = '{target.database}' AND name = '{measurement.name}'"
            )[0]
            assert (engine, sorting, partition) == ("MergeTree", f"{key}, time", "toDate(time)")
        types = dict(columns)
        assert types["time"] == "DateTime64(9, 'UTC')"
        nullable = use_case == "iot"
        # iot's nameless rows have no entity: NULL in every entity tag, the key included.
        tag_type = "LowCardinality(Nullable(String))" if nullable else "LowCardinality(String)"
        assert all(types[t] == tag_type for t in dataset.use_case.entity_tags)
        assert all(types[f].startswith("Nullable(") == nullable for f in measurement.field_names)
        engine_full = scalar(
            target, f"SELECT engine_full FROM system.tables WHERE database = '{target.database}' LIMIT 1"
        )
        assert ("allow_nullable_key = 1" in str(engine_full)) == nullable
    finally:
        target.close()


def test_shaping_joins_entity_tags_like_a_plain_join(devops_dataset: Dataset) -> None:
    tags = devops_dataset.tags()
    shaper = InsertShaper(devops_dataset.use_case, tags)
    batch = next(devops_dataset.iter_batches("disk", 500))
    shaped = shaper.shape("disk", batch)
    measurement = devops_dataset.use_case.measurement("disk")
    assert shaped.column_names == [c.name for c in table_columns(measurement, devops_dataset.use_case)]
    assert pa.types.is_dictionary(shaped.schema.field("region").type)
    assert shaped.column("time").equals(pa.chunked_array([batch.column("time")]))
    # An independent implementation: Arrow's hash join of the batch's keys with the tags table.
    keys = pa.table(
        {"hostname": batch.column("hostname").cast(pa.string()), "row": pa.array(range(batch.num_rows))}
    )
    joined = keys.join(tags, "hostname").sort_by("row")
    for tag in devops_dataset.use_case.entity_tags:
        assert shaped.column(tag).cast(pa.string()).to_pylist() == joined.column(tag).to_pylist(), tag


def test_shaping_refuses_unknown_entities_and_unexpected_nulls(small_dataset: Dataset) -> None:
    shaper = InsertShaper(small_dataset.use_case, small_dataset.tags())
    batch = next(small_dataset.iter_batches("cpu", 100))
    hosts = batch.column("hostname").cast(pa.string()).to_pylist()
    stranger = batch.set_column(1, "hostname", pa.array(["host_999", *hosts[1:]]).dictionary_encode())
    with pytest.raises(TargetError, match="host_999"):
        shaper.shape("cpu", stranger)
    values = batch.column("usage_user").to_pylist()
    holed = batch.set_column(2, "usage_user", pa.array([None, *values[1:]], pa.int64()))
    with pytest.raises(TargetError, match="usage_user has 1 null"):
        shaper.shape("cpu", holed)
    with pytest.raises(TargetError, match="no 'mem'"):
        shaper.shape("mem", batch)
    nameless = batch.set_column(1, "hostname", pa.array([None, *hosts[1:]]).dictionary_encode())
    # cpu-only has no nameless rows: a row without a hostname is refused.
    with pytest.raises(TargetError, match=r"1 row\(s\) of the batch have no hostname"):
        shaper.shape("cpu", nameless)


# -- cpu-only: load and every query type against the oracle -----------------------------------------


def test_load_keeps_every_row_and_exact_timestamps(
    cpu_target: ClickHouseTarget, small_dataset: Dataset
) -> None:
    assert cpu_target.row_count("cpu") == 103_680
    times = small_dataset.read("cpu", ["time"]).column("time").cast(pa.int64())
    stats = cpu_target._admin(
        "SELECT sum(toUnixTimestamp64Nano(time)), min(time), max(time), uniqExact(hostname) FROM cpu_only.cpu"
    )[0]
    assert int(stats[0]) == pc.sum(times).as_py()
    assert stats[3] == small_dataset.scale


def test_every_query_type_matches_the_oracle(cpu_target: ClickHouseTarget, small_dataset: Dataset) -> None:
    assert not cpu_target.capabilities.unsupported
    families = small_dataset.use_case.query_families  # the iot types: test_clickhouse_iot.py
    types = [name for name, qtype in QUERY_TYPES.items() if qtype.family in families]
    queries = generate_queries(DataRange.of(small_dataset), types, 3, seed=5)
    oracle = Oracle(small_dataset)
    session = cpu_target.session()
    failures, nonempty = [], dict.fromkeys(types, 0)
    try:
        for query in queries:
            text = cpu_target.render(query)
            expected = oracle.answer(query)
            result = compare(expected, Answer.build(query.query_type, session.execute(text)))
            if not result.ok:
                failures.append(f"{query.id}: {result.reason} {result.diff[:2]}\n  {text}")
            nonempty[query.type] += bool(expected.rows)
    finally:
        session.close()
        oracle.close()
    assert not failures, "\n".join(failures)
    assert not [name for name, count in nonempty.items() if not count], nonempty  # never vacuous


@pytest.mark.parametrize(
    ("type_name", "wrong", "right"),
    [
        ("groupby-orderby-limit", " DESC", " ASC"),  # the first five buckets instead of the last
        ("single-groupby-5-1-1", "max(", "min("),
        ("ycsb-sum", "sumOrNull(", "sum("),  # only differs on an empty window
        ("cpu-max-all-1", "3600000000000", "600000000000"),  # 10-minute buckets instead of hours
    ],
)
def test_the_comparison_catches_a_broken_rendering(
    cpu_target: ClickHouseTarget, small_dataset: Dataset, type_name: str, wrong: str, right: str
) -> None:
    """The check above can fail: a plausible mistake in the SQL makes at least one answer differ."""
    data = DataRange.of(small_dataset)
    queries = generate_queries(data, [type_name], 3, seed=5)
    if type_name == "ycsb-sum":  # a window after the data: the oracle's answer is NULL
        end = data.end_ns + 7_200 * 10**9
        queries = [
            LogicalQuery("ycsb-sum#x", "ycsb-sum", ("usage_user",), ("host_0",), end - 3_600 * 10**9, end)
        ]
    oracle = Oracle(small_dataset)
    session = cpu_target.session()
    try:
        differ = 0
        for query in queries:
            text = cpu_target.render(query)
            assert wrong in text
            rows = session.execute(text.replace(wrong, right))
            differ += not compare(oracle.answer(query), Answer.build(query.query_type, rows)).ok
    finally:
        session.close()
        oracle.close()
    assert differ, f"a broken {type_name} rendering went unnoticed"


def test_footprint_version_and_settings(cpu_target: ClickHouseTarget) -> None:
    footprint = cpu_target.footprint()
    assert footprint.parts["cpu"] > 103_680  # at least a byte per row, compressed
    assert footprint.bytes == sum(footprint.parts.values())
    assert set(footprint.parts) <= {"cpu", "cpu (outdated parts)"}
    assert "system.parts" in footprint.note and "old_parts_lifetime" in footprint.note
    active = scalar(
        cpu_target, "SELECT sum(bytes_on_disk) FROM system.parts WHERE database = 'cpu_only' AND active"
    )
    assert footprint.parts["cpu"] == active
    assert cpu_target.version() == chdb.engine_version
    settings = cpu_target.settings()
    assert settings["version"] == chdb.engine_version
    assert settings["merge_tree_settings"]["fsync_after_insert"] == "0"
    assert settings["tables"]["cpu"].startswith(
        "MergeTree PARTITION BY toDate(time) ORDER BY (hostname, time)"
    )
    assert not cpu_target.capabilities.durable and "fsync_after_insert" in cpu_target.capabilities.schema_note


# -- devops and iot: every measurement, tags, nulls, reloads ----------------------------------------


@pytest.mark.parametrize("use_case", ["devops", "iot"])
def test_other_use_cases_load_exactly(
    engine_path: str, use_case: str, devops_dataset: Dataset, iot_dataset: Dataset
) -> None:
    dataset = devops_dataset if use_case == "devops" else iot_dataset
    target = ClickHouseTarget(chdb_endpoint(engine_path, use_case), dataset.use_case, dataset.tags())
    key, db = dataset.use_case.entity_key, use_case
    try:
        for _ in range(2):  # the second load starts from create_schema: never double-loaded
            assert load(target, dataset, batch_rows=1_000) == sum(dataset.rows.values())
            assert {m: target.row_count(m) for m in dataset.measurements} == dataset.rows
        tags = sorted(tuple(r.values()) for r in dataset.tags().to_pylist())
        for measurement in dataset.use_case.measurements:
            table = dataset.read(measurement.name)
            columns = ", ".join(dataset.use_case.entity_tags)
            named = f"FROM {db}.{measurement.name} WHERE {key} IS NOT NULL"  # nameless rows: below
            stored = target._admin(f"SELECT DISTINCT {columns} {named} ORDER BY {key}")
            assert sorted(stored) == [
                t for t in tags if t[0] in set(table.column(key).cast(pa.string()).to_pylist())
            ]
            if use_case == "iot":
                check_nameless_rows(target, dataset, f"{db}.{measurement.name}", measurement.name)
            nulls = ", ".join(f"countIf(isNull({f}))" for f in measurement.field_names)
            counted = target._admin(f"SELECT {nulls} FROM {db}.{measurement.name}")[0]
            assert list(counted) == [table.column(f).null_count for f in measurement.field_names]
            ns = scalar(target, f"SELECT sum(toUnixTimestamp64Nano(time)) FROM {db}.{measurement.name}")
            assert int(ns) == pc.sum(table.column("time").cast(pa.int64())).as_py()
        if use_case == "iot":
            assert sum(iot_dataset.read(m).column("latitude").null_count for m in ["readings"]) > 0
    finally:
        target.close()


def check_nameless_rows(target: ClickHouseTarget, dataset: Dataset, table: str, measurement: str) -> None:
    """The dataset's nameless rows (NULL entity key) are all stored, as themselves: the same count,
    the same sorted (time, first field) pairs, and NULL in every entity tag."""
    use_case = dataset.use_case
    key, field = use_case.entity_key, use_case.measurement(measurement).field_names[0]
    data = dataset.read(measurement)
    data = data.filter(pc.is_null(data.column(key)))
    assert data.num_rows > 0, f"no nameless {measurement} rows: the check would be vacuous"
    times = data.column("time").cast(pa.int64()).to_pylist()
    expected = sorted(zip(times, data.column(field).to_pylist(), strict=True), key=repr)
    stored = target._admin(f"SELECT toUnixTimestamp64Nano(time), {field} FROM {table} WHERE {key} IS NULL")
    assert sorted(stored, key=repr) == expected, measurement
    tagged = " OR ".join(f"{tag} IS NOT NULL" for tag in use_case.entity_tags)
    assert scalar(target, f"SELECT countIf({tagged}) FROM {table} WHERE {key} IS NULL") == 0


# -- HTTP client, server recipe, container, install scripts -----------------------------------------


def test_http_client_against_a_closed_port_raises_a_clear_target_error() -> None:
    port = free_port()
    endpoint = Endpoint(
        "127.0.0.1",
        {"http": port, "native": free_port()},
        user="default",
        database="tsbench",
        secrets={"password": "hunter2-secret"},
    )
    started = time.monotonic()
    with pytest.raises(TargetError, match=rf"cannot connect to 127\.0\.0\.1:{port} \(HTTP\)") as caught:
        connect(endpoint, "tsbench")
    assert "hunter2-secret" not in str(caught.value)
    target = ClickHouseTarget(endpoint, get_use_case("cpu-only"), pa.table({"hostname": ["host_0"]}))
    with pytest.raises(TargetError):
        target.version()
    with pytest.raises(TargetError):
        target.session()
    assert time.monotonic() - started < 30


def test_server_recipe_writes_its_config(tmp_path: Path) -> None:
    ports = {"http": free_port(), "native": free_port()}
    recipe = ClickHouseServer(tmp_path, ports)
    assert recipe.port_roles == tuple(CONTAINERS["26.8"].ports)
    recipe.initialise()
    recipe.initialise()  # idempotent: keeps the password
    config = ET.parse(recipe.config_path).getroot()
    assert config.findtext("listen_host") == "127.0.0.1"
    assert config.findtext("http_port") == str(ports["http"])
    assert config.findtext("tcp_port") == str(ports["native"])
    assert config.findtext("path") == f"{tmp_path / 'data'}/"
    assert config.findtext("timezone") == "UTC" and config.findtext("logger/level") == "warning"
    assert config.findtext("logger/console") == "1"
    assert not [name for name in SYSTEM_LOGS_REMOVED if config.find(name) is not None]
    password = recipe.password()
    assert len(password) >= 24 and (recipe.secret_path.stat().st_mode & 0o777) == 0o600
    users = ET.parse(recipe.users_path).getroot()
    assert users.findtext("users/default/password_sha256_hex") == password_sha256(password)
    assert password not in recipe.users_path.read_text() and password not in recipe.config_text()
    endpoint = recipe.endpoint()
    assert endpoint.secrets == {"password": password} and password not in repr(endpoint)
    assert endpoint.database == "tsbench" and endpoint.ports == ports
    assert not recipe.ready()  # nothing listens
    if shutil.which("clickhouse") is None and not os.access("/usr/bin/clickhouse", os.X_OK):
        with pytest.raises(TargetError, match=r"targets/clickhouse/install\.sh"):
            recipe.command()
        assert recipe.version().startswith(CLICKHOUSE_VERSION)


def test_install_script_fails_fast_when_the_repository_is_unreachable(tmp_path: Path) -> None:
    sources = Path("/etc/apt/sources.list.d/clickhouse.list")
    existed = sources.exists()
    env = {
        **os.environ,
        "TSBENCH_OPT": str(tmp_path / "opt"),
        "CLICKHOUSE_REPO": f"http://127.0.0.1:{free_port()}",  # nothing listens there
        "CLICKHOUSE_VERSION": "0.0.0.0",  # never the installed one: the script must reach the probe
    }
    started = time.monotonic()
    result = subprocess.run(
        ["bash", str(INSTALL_SCRIPT)], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode != 0
    assert "cannot reach ClickHouse's apt repository" in result.stderr
    assert "docker or aws runtime" in result.stderr
    assert time.monotonic() - started < 30
    assert sources.exists() == existed  # changed nothing


def test_pins_ports_and_overrides_agree() -> None:
    spec = CONTAINERS["26.8"]
    assert list(CONTAINERS) == ["26.8"] and spec.problems() == []
    assert spec.image == f"clickhouse/clickhouse-server:{CLICKHOUSE_VERSION}"
    assert CLICKHOUSE_VERSION == DEFINITION.version == "26.8.19.9"
    install = INSTALL_SCRIPT.read_text()
    cloud = CLOUD_SCRIPT.read_text()
    for script in (install, cloud):  # the pin comes from definition.py, never restated
        assert ': "${CLICKHOUSE_VERSION:?' in script and CLICKHOUSE_VERSION not in script
    assert f"\nexport CLICKHOUSE_VERSION={CLICKHOUSE_VERSION}\n" in render_install_script(DEFINITION)
    assert (
        f"\nHTTP_PORT={spec.ports['http']}\n" in cloud and f"\nNATIVE_PORT={spec.ports['native']}\n" in cloud
    )
    assert "tsbench-db.service" in cloud and "LimitNOFILE=262144" in cloud
    override = ET.fromstring(spec.files["/etc/clickhouse-server/config.d/tsbench.xml"])
    assert [e.tag for e in override] == ["logger", "timezone", *SYSTEM_LOGS_REMOVED, *LISTENERS_REMOVED]
    assert override.findtext("logger/level") == "warning" and override.findtext("timezone") == "UTC"
    assert spec.secret_env == {"CLICKHOUSE_PASSWORD": PASSWORD_VARIABLE}
    assert spec.client_secrets == {"password": PASSWORD_VARIABLE} and spec.ulimits["nofile"] == (
        262144,
        262144,
    )
    endpoint = spec.endpoint("10.0.0.5", {"http": 31000, "native": 31001}, {PASSWORD_VARIABLE: "pw"})
    assert endpoint.secrets == {"password": "pw"} and endpoint.database == "tsbench"


def test_cloud_install_script_is_valid_bash(tmp_path: Path) -> None:
    assert subprocess.run(["bash", "-n", str(CLOUD_SCRIPT)], capture_output=True).returncode == 0
    assert os.access(CLOUD_SCRIPT, os.X_OK) and os.access(INSTALL_SCRIPT, os.X_OK)
    checker = shutil.which("shellcheck")
    if checker:
        for script in (CLOUD_SCRIPT, INSTALL_SCRIPT):
            result = subprocess.run([checker, "-x", str(script)], capture_output=True, text=True, cwd=REPO)
            assert result.returncode == 0, result.stdout
    # As the host runs it (rendered from the definition), without its contract's variables it
    # refuses to run (before touching the machine).
    rendered = tmp_path / "install_db.sh"
    rendered.write_text(render_install_script(DEFINITION))
    env = {k: v for k, v in os.environ.items() if k not in ("DATA_DIR", "DB_PASSWORD")}
    result = subprocess.run(["bash", str(rendered)], env=env, capture_output=True, text=True, timeout=30)
    assert result.returncode != 0 and ("DATA_DIR" in result.stderr or "root" in result.stderr)
