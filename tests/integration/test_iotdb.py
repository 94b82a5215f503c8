"""Apache IoTDB (the pin, 2.0.1-beta, from Maven Central: targets/iotdb/install.sh) as a target:
loads counted exactly and retry-safe, every devops query type equal to the oracle's answer, the
facts the report prints (scripts/test.sh installs the server in the background; these tests wait)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pytest
from builds import wait_for_build
from conftest import check_all_queries, check_ycsb_ts, load_all, retargeted

from tsbench.spec import DatasetSpec
from tsbench.targets.iotdb import dialect
from tsbench.targets.iotdb.client import endpoint_session, query
from tsbench.targets.iotdb.writer import NAMELESS
from tsbench.workload.dataset import Dataset, ensure_dataset
from tsbench.workload.query_types import QUERY_TYPES
from tsbench.workload.stored_rows import stored_rows

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def iotdb(serve, small_dataset: Dataset):
    wait_for_build("TSBENCH_IOTDB_BUILD_STATUS", "IoTDB (install.sh)")
    with serve("iotdb", small_dataset) as (server, target):
        yield server, target


def test_load_is_exact_and_retry_safe(iotdb, small_dataset: Dataset) -> None:
    _, target = iotdb
    target.create_schema()
    writer = target.writer()  # a half-done attempt that a retry must not double
    first = next(small_dataset.iter_batches("cpu", 7_000))
    assert writer.write("cpu", first) == first.num_rows
    writer.close()
    target.flush()
    assert target.row_count("cpu") == 7_000
    assert load_all(target, small_dataset) == small_dataset.rows["cpu"] == 103_680
    assert target.row_count("cpu") == 103_680


def test_rows_from_an_instant_on_are_removed(iotdb, small_dataset: Dataset) -> None:
    """What a live phase's end and a retried rollup refresh need: rows at or after an instant go."""
    _, target = iotdb
    hour = 3_600 * 10**9
    assert load_all(target, small_dataset) == 103_680
    target.remove_rows_from("cpu", small_dataset.start_ns + 23 * hour)
    assert target.row_count("cpu") == 103_680 - 12 * 360  # 12 hosts, the last hour at 10 s
    assert load_all(target, small_dataset) == 103_680  # the other tests read the whole day again


def test_every_query_type_of_cpu_data_matches_the_oracle(iotdb, small_dataset: Dataset) -> None:
    """devops' 15 types and YCSB-TS's 5 over cpu rows, 4 queries each, none of them empty."""
    _, target = iotdb
    families = small_dataset.use_case.query_families
    types = {name for name, q in QUERY_TYPES.items() if q.family in families}
    assert not set(target.capabilities.unsupported) & types
    nonempty = check_all_queries(target, small_dataset, per_type=4)
    assert set(nonempty) == types
    assert all(count > 0 for count in nonempty.values()), nonempty


def test_facts(iotdb) -> None:
    server, target = iotdb
    assert target.version() == server.recipe.version() == "2.0.1-beta"
    footprint = target.footprint()
    assert footprint.bytes > 100_000 and footprint.parts, footprint
    settings = target.settings()
    assert settings["timestamp_precision"] == "ms" and server.recipe.password not in str(settings)


def test_devops_loads_every_measurement(iotdb, dataset_cache: Path) -> None:
    """devops' nine measurements (disk, net, nginx, … with their extra tags as device levels; field
    names such as ``free`` or ``time``-like ones declared backquoted), each counted, then the queries."""
    server, cpu_target = iotdb
    spec = DatasetSpec.parse(use_case="devops", scale=8, end="2016-01-01T12:00:00Z")
    devops, _ = ensure_dataset(spec, dataset_cache)
    with retargeted(server, cpu_target, devops) as target:
        assert load_all(target, devops) == sum(devops.rows.values())
        assert {m: target.row_count(m) for m in devops.measurements} == devops.rows
        check_all_queries(target, devops, per_type=1, seed=3)


def test_ycsb_ts_records(serve, ycsb_dataset: Dataset) -> None:
    wait_for_build("TSBENCH_IOTDB_BUILD_STATUS", "IoTDB (install.sh)")
    with serve("iotdb", ycsb_dataset) as (_, target):
        check_ycsb_ts(target, ycsb_dataset)


def test_iot_data_loads_and_nameless_instants_merge(iotdb, dataset_cache: Path) -> None:
    """iot rows miss single fields (bitmap nulls) and a few carry none (an aligned device stores no
    such row); nameless rows share one device per measurement, so those of one instant are one row
    holding each field any of them had — the count the run expects (``stored_rows``)."""
    server, cpu_target = iotdb
    spec = DatasetSpec.parse(use_case="iot", scale=100, end="2016-01-01T01:00:00Z")
    iot, _ = ensure_dataset(spec, dataset_cache)
    expected = stored_rows(iot, keeps_fieldless=False, merges_nameless=True)
    session = endpoint_session(server.endpoint())
    try:
        with retargeted(server, cpu_target, iot) as target:
            assert load_all(target, iot, batch_rows=1_000) > 0
            for m in iot.use_case.measurements:
                assert target.row_count(m.name) == expected[m.name] < iot.rows[m.name]
                table = iot.read(m.name)
                nameless = table.filter(pc.is_null(table["name"]))
                assert len(nameless) > len(pc.unique(nameless["time"])), f"{m.name}: no instant to merge"
                counted = _nameless_field_counts(session, m.name)
                for field in m.field_names:
                    instants = len(pc.unique(nameless.filter(pc.is_valid(nameless[field]))["time"]))
                    assert counted[field] == instants, (m.name, field)
    finally:
        session.close()


def _nameless_field_counts(session, measurement: str) -> dict[str, int]:
    """Points per field on the measurement's device of nameless rows."""
    device = f"{dialect.measurement_path(measurement)}.{dialect.node(NAMELESS)}"
    names, columns = query(session, f"SELECT count(*) FROM {device} ALIGN BY DEVICE")
    return {
        name.removeprefix("count(").removesuffix(")").strip("`"): int(column[0])
        for name, column in zip(names, columns, strict=True)
        if name.startswith("count(")
    }
