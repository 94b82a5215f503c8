"""PostgreSQL 15 and TimescaleDB 2.19 against real local servers (one per target, shared by the tests
of this module): load, every query type against the oracle, reload without doubling, footprint, a
cold restart, then the devops and iot use cases with a column-by-column check of what was stored.

The tests run in file order per target; the devops and iot tests come last because their
``create_schema`` replaces the cpu-only tables the earlier tests read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from conftest import (
    check_all_queries,
    check_decoding_in_parts,
    check_ycsb_ts,
    load_all,
    nameless_rows,
    retargeted,
    sorted_pairs,
)
from iot_checks import PROBES, answered_types, check_iot_queries

from tsbench.runtimes.local import LocalServer
from tsbench.spec import DatasetSpec
from tsbench.targets.base import Target
from tsbench.workload.dataset import Dataset, ensure_dataset
from tsbench.workload.query_types import types_of
from tsbench.workload.usecases import get_use_case

pytestmark = pytest.mark.integration

CPU_TYPES = types_of(get_use_case("cpu-only").query_families)  # the types a cpu dataset answers


@pytest.fixture(scope="module", params=["postgres", "timescaledb"])
def loaded(
    request: pytest.FixtureRequest, serve, small_dataset: Dataset
) -> Iterator[tuple[LocalServer, Target]]:
    """A fresh server of each target with ``small_dataset`` loaded."""
    with serve(request.param, small_dataset) as (server, target):
        written = load_all(target, small_dataset)
        assert written == small_dataset.rows["cpu"]
        yield server, target


def test_load_counts_every_row(loaded: tuple[LocalServer, Target], small_dataset: Dataset) -> None:
    _, target = loaded
    assert target.row_count("cpu") == small_dataset.rows["cpu"] == 103_680


def test_every_query_type_matches_the_oracle(
    loaded: tuple[LocalServer, Target], small_dataset: Dataset
) -> None:
    _, target = loaded
    assert not target.capabilities.unsupported
    nonempty = check_all_queries(target, small_dataset)
    assert set(nonempty) == set(CPU_TYPES)
    # not vacuous: every type has non-empty answers except possibly the 1-host high-cpu window
    empty = {name for name, count in nonempty.items() if count == 0}
    assert empty <= {"high-cpu-1"}, empty


def test_a_large_answer_decoded_in_parts_is_the_answer_at_once(
    loaded: tuple[LocalServer, Target], small_dataset: Dataset
) -> None:
    """Decoded in parts and held by columns, as a large answer is (issue 12's 4,000-host point)."""
    _, target = loaded
    assert check_decoding_in_parts(target, small_dataset) > 3 * 97  # spans several parts


def test_schema_recreated_and_reloaded_never_doubles(
    loaded: tuple[LocalServer, Target], small_dataset: Dataset
) -> None:
    _, target = loaded
    target.create_schema()
    target.create_schema()
    assert target.row_count("cpu") == 0
    load_all(target, small_dataset)
    load_all(target, small_dataset)  # load_all recreates the schema first, as a retried load does
    assert target.row_count("cpu") == small_dataset.rows["cpu"]


def wal_dir_bytes(target: Target) -> int:
    with target.connect() as conn:  # type: ignore[attr-defined]
        row = conn.execute("SELECT sum(size) FROM pg_ls_waldir()").fetchone()
    return int(row[0]) if row else 0


def test_footprint_counts_tables_indexes_and_the_wal_of_the_rows_loaded(
    loaded: tuple[LocalServer, Target], small_dataset: Dataset
) -> None:
    """The WAL counted is the last load's (since its create_schema), and pg_wal itself does not
    grow by a load per trial (each schema starts with a checkpoint): three loads count what one does."""
    _, target = loaded
    load_all(target, small_dataset)
    once, wal_dir_once = target.footprint().parts["wal"], wal_dir_bytes(target)
    load_all(target, small_dataset)
    load_all(target, small_dataset)
    footprint = target.footprint()
    assert footprint.bytes > 0 and footprint.bytes == sum(footprint.parts.values())
    assert footprint.parts["cpu.table"] > 0 and footprint.parts["cpu.indexes"] > 0
    assert "WAL" in footprint.note
    assert 0 < footprint.parts["wal"] < 1.5 * once, (footprint.parts["wal"], once)
    assert wal_dir_bytes(target) < 1.5 * wal_dir_once, (wal_dir_bytes(target), wal_dir_once)


def test_version_and_settings_come_from_the_server(loaded: tuple[LocalServer, Target]) -> None:
    server, target = loaded
    version = target.version()
    assert "15." in version and (target.name != "timescaledb" or "2.19.3" in version)
    settings = target.settings()
    assert settings["synchronous_commit"] == "on" and settings["shared_buffers"] == "6GB"
    assert "tsbench.conf" in (Path(server.recipe.data_dir) / "postgresql.conf").read_text()


def test_only_the_instance_password_logs_in(loaded: tuple[LocalServer, Target]) -> None:
    """scram-sha-256 over TCP: no password and a wrong one are refused; the instance's own password
    (0600 beside the cluster, in no log and no configuration file) gets in."""
    server, _ = loaded
    endpoint = server.endpoint()
    password = endpoint.secrets["password"]
    where = {"host": endpoint.host, "port": endpoint.port("pg"), "user": "postgres", "dbname": "tsbench"}
    for wrong in ("", "not-" + password):
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(**where, password=wrong, connect_timeout=5).close()
    with psycopg.connect(**where, password=password, connect_timeout=5) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    secret = next(server.recipe.home.glob(".secret-*"))
    assert secret.stat().st_mode & 0o777 == 0o600 and not (server.recipe.home / ".initdb-password").exists()
    hba = (Path(server.recipe.data_dir) / "pg_hba.conf").read_text()
    texts = (server.log_file.read_text(), hba, server.recipe.config_text())
    assert all(password not in text for text in texts)
    assert "trust" not in hba


def test_cold_restart_keeps_data_and_answers(
    loaded: tuple[LocalServer, Target], small_dataset: Dataset
) -> None:
    server, target = loaded
    facts = server.restart_cold()
    assert facts["restarted"] and facts["was_down"]
    assert target.row_count("cpu") == small_dataset.rows["cpu"]
    check_all_queries(target, small_dataset, per_type=1, seed=11)


def assert_stored_like_dataset(target: Target, dataset: Dataset, measurement: str) -> None:
    """Per column: non-NULL count and sum of every field, distinct count of every extra tag, and the
    time range, as stored, equal the dataset's (checks the binary COPY encoding of every kind)."""
    table = dataset.read(measurement)
    spec = dataset.use_case.measurement(measurement)
    selects = ["count(*)", "min(time)", "max(time)"]
    expected: list[object] = [table.num_rows, pc.min(table["time"]).as_py(), pc.max(table["time"]).as_py()]
    for tag in spec.extra_tags:
        selects.append(f'count(DISTINCT "{tag}")')
        expected.append(len(pc.unique(table[tag].cast(pa.string()))))
    for field in spec.field_names:
        selects += [f'count("{field}")', f'sum("{field}")']
        expected += [pc.count(table[field]).as_py(), pc.sum(table[field].cast(pa.float64())).as_py()]
    session = target.session()
    try:
        (actual,) = session.execute(f"SELECT {', '.join(selects)} FROM {measurement}")
    finally:
        session.close()
    for label, want, got in zip(selects, expected, actual, strict=True):
        if isinstance(want, float):
            assert got == pytest.approx(want, rel=1e-9), f"{measurement}: {label}"
        else:
            assert got == want, f"{measurement}: {label}"


def test_devops_loads_all_nine_measurements(loaded: tuple[LocalServer, Target], dataset_cache: Path) -> None:
    server, target = loaded
    spec = DatasetSpec.parse(use_case="devops", scale=4, end="2016-01-01T01:00:00Z")
    devops, _ = ensure_dataset(spec, dataset_cache)
    assert len(devops.measurements) == 9
    with retargeted(server, target, devops) as devops_target:
        written = load_all(devops_target, devops, batch_rows=1_000)
        assert written == sum(devops.rows.values())
        for measurement, rows in devops.rows.items():
            assert devops_target.row_count(measurement) == rows > 0, measurement
            assert_stored_like_dataset(devops_target, devops, measurement)


def test_iot_keeps_missing_values_and_nameless_rows_as_null(
    loaded: tuple[LocalServer, Target], dataset_cache: Path
) -> None:
    server, target = loaded
    iot, _ = ensure_dataset(
        DatasetSpec.parse(use_case="iot", scale=10, end="2016-01-01T02:00:00Z"), dataset_cache
    )
    with retargeted(server, target, iot) as iot_target:
        assert load_all(iot_target, iot) == sum(iot.rows.values())
        for measurement in iot.measurements:
            assert_stored_like_dataset(iot_target, iot, measurement)
            expected = nameless_rows(iot, measurement)
            assert expected, f"{measurement}: the dataset has nameless rows"
            field = iot.use_case.measurement(measurement).field_names[0]
            session = iot_target.session()
            try:
                stored = session.execute(
                    f"SELECT (extract(epoch FROM time) * 1000000000)::bigint, {field} FROM {measurement} "
                    "WHERE tags_id IS NULL"
                )
            finally:
                session.close()
            assert sorted_pairs(stored) == expected, f"{measurement}: nameless rows stored with NULL tags_id"


def test_iot_queries_answer_like_the_oracle(loaded: tuple[LocalServer, Target], iot_dataset: Dataset) -> None:
    """The 12 TSBS iot types (and the probes) on 12 trucks × 1 day, every answer the oracle's."""
    server, target = loaded
    with retargeted(server, target, iot_dataset) as iot_target:
        assert load_all(iot_target, iot_dataset) == sum(iot_dataset.rows.values())
        nonempty = check_iot_queries(iot_target, iot_dataset)
        assert set(nonempty) == answered_types(iot_target) and len(nonempty) == 12 + len(PROBES)


def test_ycsb_ts_records_load_and_answer_like_the_oracle(
    loaded: tuple[LocalServer, Target], ycsb_dataset: Dataset
) -> None:
    server, target = loaded
    with retargeted(server, target, ycsb_dataset) as ycsb_target:
        check_ycsb_ts(ycsb_target, ycsb_dataset)
        assert_stored_like_dataset(ycsb_target, ycsb_dataset, "usermetric")
