"""QuestDB against a real server (started from the project's own scripts via the ``serve`` fixture).

One server serves the whole module: load the small cpu-only dataset, answer every query type like
the oracle, reload without double-loading, survive a cold restart, then load the devops use case.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import (
    check_all_queries,
    check_decoding_in_parts,
    check_refresh_after_append,
    check_ycsb_ts,
    load_all,
    retargeted,
)
from iot_checks import PROBES, answered_types, check_iot_queries

from tsbench.runtimes.local import LocalServer
from tsbench.spec import DatasetSpec
from tsbench.targets.base import Target, send_encoded
from tsbench.targets.questdb.target import table_ddl
from tsbench.timeutil import NS_PER_MINUTE
from tsbench.workload.dataset import Dataset, ensure_dataset
from tsbench.workload.query_types import QUERY_TYPES, Kind, types_of
from tsbench.workload.stored_rows import stored_rows

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def questdb(serve, small_dataset: Dataset) -> Iterator[tuple[LocalServer, Target]]:
    with serve("questdb", small_dataset) as (server, target):
        yield server, target


@pytest.fixture(scope="module")
def loaded(questdb: tuple[LocalServer, Target], small_dataset: Dataset) -> tuple[LocalServer, Target]:
    server, target = questdb
    written = load_all(target, small_dataset)
    assert written == small_dataset.rows["cpu"]
    return server, target


def _assert_rows(target: Target, dataset: Dataset) -> None:
    for measurement, rows in dataset.rows.items():
        assert target.row_count(measurement) == rows, measurement


def test_server_reports_its_version(questdb: tuple[LocalServer, Target]) -> None:
    server, target = questdb
    assert target.version() == server.recipe.version() == "9.3.4"
    settings = target.settings()
    assert settings["server"]["shared.worker.count"] and "password" not in repr(settings)
    endpoint = server.endpoint()
    assert endpoint.secrets and "'quest'" not in repr(endpoint) and "secrets" not in endpoint.to_json()


def test_load_then_every_query_type_matches_the_oracle(
    loaded: tuple[LocalServer, Target], small_dataset: Dataset
) -> None:
    _, target = loaded
    assert small_dataset.rows == {"cpu": 103_680}
    _assert_rows(target, small_dataset)
    assert not target.capabilities.unsupported
    nonempty = check_all_queries(target, small_dataset)
    assert set(nonempty) == set(types_of(small_dataset.use_case.query_families))  # all 20 answered
    # Not vacuous: every type has non-empty expected answers (ycsb-avg/sum/count always return a row).
    empty = [name for name, count in nonempty.items() if count == 0]
    assert not empty, f"no non-empty answer for {empty}"


def test_a_large_answer_decoded_in_parts_is_the_answer_at_once(
    loaded: tuple[LocalServer, Target], small_dataset: Dataset
) -> None:
    """Decoded in parts and held by columns, as a large answer is (issue 12's 4,000-host point)."""
    _, target = loaded
    assert check_decoding_in_parts(target, small_dataset) > 3 * 97  # spans several parts


def test_footprint_is_questdbs_own_accounting(loaded: tuple[LocalServer, Target]) -> None:
    server, target = loaded
    footprint = target.footprint()
    assert set(footprint.parts) == {"cpu"} and footprint.bytes == footprint.parts["cpu"]
    # at least the raw column data (8 B timestamp + 10 × 8 B LONG + 10 × 4 B SYMBOL keys per row)
    assert footprint.bytes >= 103_680 * 128
    assert "table_storage" in footprint.note and "WAL" in footprint.note
    assert server.disk_bytes() > 0


def test_a_materialized_view_answers_as_the_raw_rows(
    loaded: tuple[LocalServer, Target], small_dataset: Dataset
) -> None:
    """The 1-minute materialized view of cpu holds one row per host and minute, in less space than
    the raw rows, once refreshed up to cpu's last transaction; the types it answers (single-groupby,
    cpu-max-all, double-groupby) give the oracle's answers over windows that start and end at any
    second; the others are not answered from it; an appended hour reaches it; a new schema drops it."""
    _, target = loaded
    built = target.build_rollup()
    minutes = (small_dataset.end_ns - small_dataset.start_ns) // NS_PER_MINUTE
    assert built.rows == small_dataset.scale * minutes and built.seconds > 0
    partitions = "SELECT sum(diskSize) FROM table_partitions('{}')"
    view_data, raw_data = (target._admin(partitions.format(t))[0][0] for t in ("cpu_1m", "cpu"))
    assert 0 < view_data < raw_data / 2 and built.bytes > view_data, (built, view_data, raw_data)
    answered = check_all_queries(target, small_dataset, per_type=4, render=target.render_on_rollup)
    expected = {
        name for name, qtype in QUERY_TYPES.items() if qtype.kind in (Kind.GROUPBY, Kind.GROUPBY_HOST)
    }
    assert set(answered) == expected and all(answered.values()), answered
    check_refresh_after_append(target, small_dataset)
    target.create_schema()
    assert target._admin("SELECT count() FROM materialized_views()") == [(0,)]
    load_all(target, small_dataset)  # as the module's later tests expect it
    _assert_rows(target, small_dataset)


def test_reload_never_double_loads(loaded: tuple[LocalServer, Target], small_dataset: Dataset) -> None:
    _, target = loaded
    directory = "SELECT directoryName FROM tables() WHERE table_name = 'cpu'"
    before = target._admin(directory)
    target.create_schema()
    assert target.row_count("cpu") == 0
    assert target._admin(directory) == before  # same schema: truncated, not dropped and re-created
    load_all(target, small_dataset)  # creates the schema again itself
    _assert_rows(target, small_dataset)


def _wait_applied(target: Target, table: str, transactions: int) -> None:
    """Until ``table``'s WAL apply has caught up with ``transactions`` committed transactions."""
    deadline = time.monotonic() + 30
    query = f"SELECT writerTxn, sequencerTxn FROM wal_tables() WHERE name = '{table}'"
    while True:
        applied, committed = target._admin(query)[0]
        if committed >= transactions and applied == committed:
            return
        assert time.monotonic() < deadline, f"WAL apply of {table} did not catch up"
        time.sleep(0.02)


def test_dedup_option_absorbs_a_resent_batch(
    loaded: tuple[LocalServer, Target], small_dataset: Dataset
) -> None:
    # DEDUP is off by default (README); the DDL it would use must still be valid and do its job.
    _, target = loaded
    scratch = replace(target.use_case.measurement("cpu"), name="cpu_dedup_check")
    target._admin(f"DROP TABLE IF EXISTS {scratch.name}")
    target._admin(table_ddl(scratch, target.use_case, dedup=True))
    try:
        batch = next(small_dataset.iter_batches("cpu", 2_000))
        scratch_case = replace(target.use_case, measurements=(scratch,))  # lines name the scratch table
        wire = type(target).wire_format(scratch_case, small_dataset.tags())
        writer = target.writer()
        try:
            sent = [send_encoded(writer, wire, scratch.name, batch) for _ in range(2)]
            assert sent == [2_000, 2_000]
        finally:
            writer.close()
        _wait_applied(target, scratch.name, 2)
        assert target._admin(f"SELECT count() FROM {scratch.name}") == [(2_000,)]
    finally:
        target._admin(f"DROP TABLE IF EXISTS {scratch.name}")


def test_cold_restart_keeps_the_data(loaded: tuple[LocalServer, Target], small_dataset: Dataset) -> None:
    server, target = loaded
    outcome = server.restart_cold()
    assert outcome["was_down"] and server.recipe.ready()
    _assert_rows(target, small_dataset)  # its PG-wire connection died with the server: replaced
    check_all_queries(target, small_dataset, per_type=1, seed=11)


def test_devops_loads_every_measurement(questdb: tuple[LocalServer, Target], dataset_cache: Path) -> None:
    # Runs last in this module: it empties the cpu table (same schema) and adds the 8 other tables.
    server, cpu_target = questdb
    spec = DatasetSpec.parse(use_case="devops", scale=4, end="2016-01-01T01:00:00Z")
    devops, _ = ensure_dataset(spec, dataset_cache)
    assert len(devops.measurements) == 9
    with retargeted(server, cpu_target, devops) as target:
        written = load_all(target, devops)
        assert written == sum(devops.rows.values())
        _assert_rows(target, devops)
        # entity tags were joined onto every row of every measurement
        host = devops.tags().to_pylist()[0]
        session = target.session()
        try:
            text = f"SELECT DISTINCT region, team FROM diskio WHERE hostname = '{host['hostname']}'"
            rows = session.execute(text)
        finally:
            session.close()
        assert rows == [(host["region"], host["team"])]


def _row_order(row: tuple) -> tuple:
    """(name, time, fields…) rows in one order although names and fields may be None."""
    return (row[0] or "", row[1], [(v is None, v or 0) for v in row[2:]])


def test_iot_floats_and_nulls_round_trip_exactly(
    questdb: tuple[LocalServer, Target], dataset_cache: Path
) -> None:
    # Floats travel as shortest round-trip text in line protocol: QuestDB must parse every one back
    # to the same double, and a field left out of a line (null) must read back as NULL.
    server, cpu_target = questdb
    spec = DatasetSpec.parse(use_case="iot", scale=10, end="2016-01-01T02:00:00Z")
    iot, _ = ensure_dataset(spec, dataset_cache)
    with retargeted(server, cpu_target, iot) as target:
        assert load_all(target, iot) == sum(stored_rows(iot, keeps_bare=False).values())
        for measurement in iot.use_case.measurements:
            fields = [name for name, _ in measurement.fields]
            key = iot.use_case.entity_key
            expected = sorted(
                (
                    (
                        row[key],
                        row["time"].value if hasattr(row["time"], "value") else row["time"],
                        *map(row.get, fields),
                    )
                    for batch in iot.iter_batches(measurement.name, 100_000)
                    for row in batch.to_pylist()
                    if row[key] is not None or any(row[f] is not None for f in fields)  # a line needs one
                ),
                key=_row_order,
            )
            session = target.session()
            try:
                got = session.execute(f"SELECT {key}, timestamp, {', '.join(fields)} FROM {measurement.name}")
            finally:
                session.close()
            assert len(got) == len(expected)
            nulls = sum(v is None for row in expected for v in row[2:])
            assert nulls, "the iot data should have null fields"
            assert sum(row[0] is None for row in expected), "the iot data should have nameless rows"
            assert sorted(got, key=_row_order) == expected  # a nameless row: a NULL name symbol


def test_iot_queries_answer_like_the_oracle(
    questdb: tuple[LocalServer, Target], iot_dataset: Dataset
) -> None:
    """The 12 TSBS iot types and the shared probes on 12 trucks × 1 day (nameless, late and
    field-less rows included), every answer the oracle's."""
    server, cpu_target = questdb
    with retargeted(server, cpu_target, iot_dataset) as target:
        assert load_all(target, iot_dataset) == sum(stored_rows(iot_dataset, keeps_bare=False).values())
        assert not target.capabilities.unsupported
        nonempty = check_iot_queries(target, iot_dataset)
        assert set(nonempty) == answered_types(target) and len(nonempty) == 12 + len(PROBES)


def test_ycsb_ts_records_load_and_answer_like_the_oracle(
    questdb: tuple[LocalServer, Target], ycsb_dataset: Dataset
) -> None:
    server, cpu_target = questdb
    with retargeted(server, cpu_target, ycsb_dataset) as target:
        check_ycsb_ts(target, ycsb_dataset)
        session = target.session()
        try:  # the three tags ride on every row
            rows = session.execute(
                "SELECT count(DISTINCT tag0), count(*) FROM usermetric WHERE metric = 'metric_3'"
            )
        finally:
            session.close()
        assert rows == [(1, 2_160)]


def test_only_the_login_with_the_instance_password_gets_in(questdb: tuple[LocalServer, Target]) -> None:
    """REST ``/exec``, ILP over HTTP ``/write`` and the PostgreSQL wire refuse no login, a wrong password
    and QuestDB's default one; the instance's own password (0600, beside its data, in no file the report
    shows and in no log) gets in everywhere."""
    import psycopg
    import requests

    from tsbench.runtimes.basic_auth import basic_auth
    from tsbench.targets.questdb.config import HTTP_USER
    from tsbench.targets.questdb.server import DEFAULT_PASSWORD, PG_DATABASE, PG_USER

    server, _ = questdb
    password = server.endpoint().secrets["password"]
    base = f"http://127.0.0.1:{server.recipe.ports['http']}"
    line = "auth_probe,host=a value=1 1451606400000000000\n"
    for given, allowed in (
        (None, False),
        ("not-" + password, False),
        (DEFAULT_PASSWORD, False),
        (password, True),
    ):
        headers = basic_auth(HTTP_USER, given)
        query = requests.get(f"{base}/exec", params={"query": "select 1"}, headers=headers, timeout=10)
        write = requests.post(f"{base}/write", data=line, headers=headers, timeout=10)
        assert (query.status_code, write.status_code) == ((200, 204) if allowed else (401, 401)), given
        pg = {"host": "127.0.0.1", "port": server.recipe.ports["pg"], "user": PG_USER, "dbname": PG_DATABASE}
        if allowed:
            psycopg.connect(**pg, password=given, connect_timeout=10).close()
        else:
            with pytest.raises(psycopg.OperationalError):
                psycopg.connect(**pg, password=given or "", connect_timeout=10)
    secret = next(server.recipe.home.glob(".secret-*"))
    assert secret.stat().st_mode & 0o777 == 0o600 and secret.read_text().strip() == password
    assert password not in server.recipe.config_text() and password not in server.log_file.read_text()
