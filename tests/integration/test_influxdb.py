"""InfluxDB 1.x (the pin, 1.8.10) against a real server (built by targets/influxdb/install.sh)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
import requests
from conftest import (
    check_all_queries,
    check_decoding_in_parts,
    check_refresh_after_append,
    check_ycsb_ts,
    load_all,
)
from iot_checks import RARELY_ANSWERED, answered_types, check_iot_queries

from tsbench.spec import DatasetSpec
from tsbench.targets.base import TargetError
from tsbench.targets.influxdb import dialect, iot_dialect
from tsbench.targets.influxdb.answers import shaped_parts
from tsbench.targets.influxdb.auth import auth_headers, basic
from tsbench.targets.influxdb.server import InfluxDBServer
from tsbench.targets.influxdb.target import InfluxDBTarget
from tsbench.targets.lineprotocol import LineBuilder
from tsbench.timeutil import NS_PER_MINUTE
from tsbench.workload.answers import Answer, compare
from tsbench.workload.dataset import Dataset, ensure_dataset
from tsbench.workload.iot_oracle import measurement_view
from tsbench.workload.kept import Keeps, kept_rows_sql
from tsbench.workload.oracle import Oracle
from tsbench.workload.queries import DataRange, generate_queries
from tsbench.workload.query_types import QUERY_TYPES, Kind
from tsbench.workload.stored_rows import stored_rows

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def influx(serve, small_dataset: Dataset):
    with serve("influxdb", small_dataset) as (server, target):
        yield server, target


def test_load_is_exact_and_retry_safe(influx, small_dataset: Dataset) -> None:
    _, target = influx
    target.create_schema()
    writer = target.writer()  # a half-done attempt that a retry must not double
    first = next(small_dataset.iter_batches("cpu", 7_000))
    assert writer.write("cpu", first) == first.num_rows
    writer.close()
    target.create_schema()
    assert load_all(target, small_dataset) == small_dataset.rows["cpu"]
    assert load_all(target, small_dataset) == small_dataset.rows["cpu"]  # create_schema + load again
    assert target.row_count("cpu") == small_dataset.rows["cpu"] == 103_680


def test_counting_a_complete_field_counts_the_points(influx, small_dataset: Dataset) -> None:
    """``count_rows`` reads one complete field's series; a point written without that field is not
    counted, so the runner's row check would fail rather than pass."""
    server, _ = influx  # a database of its own: the module's data stays as the other tests expect
    endpoint = dataclasses.replace(server.endpoint(), database="counting")
    target = InfluxDBTarget(endpoint, small_dataset.use_case, small_dataset.tags())
    try:
        target.create_schema()
        load_all(target, small_dataset)
        complete = small_dataset.complete_fields("cpu")
        assert complete[0] == "usage_user"
        assert target.count_rows("cpu", complete) == target.row_count("cpu") == 103_680
        line = "cpu,hostname=host_0 usage_system=1i 1700000000000000000"  # a point without usage_user
        posted = requests.post(
            target_write_url(target), data=line, headers=auth_headers(endpoint), timeout=10
        )
        posted.raise_for_status()
        assert target.row_count("cpu") == 103_681
        assert target.count_rows("cpu", complete) == 103_680
        assert target.count_rows("cpu", ()) == 103_681
    finally:
        target.close()


def test_only_the_admin_with_its_password_gets_in_also_after_a_restart(influx) -> None:
    """Authentication is on: no credentials and a wrong password are refused (401), the instance's own
    password (0600, beside its data, in no log and no configuration) gets in, before and after a cold
    restart (which must not try to create the admin again, and must not fail on it)."""
    server, target = influx
    url, show = f"{target.url}/query", {"q": "SHOW DATABASES"}
    password = server.endpoint().secrets["password"]
    for headers, status in (({}, 401), (basic("not-" + password), 401), (basic(password), 200)):
        assert requests.get(url, params=show, headers=headers, timeout=10).status_code == status, headers
    secret = next(server.recipe.home.glob(".secret-*"))
    assert secret.stat().st_mode & 0o777 == 0o600 and secret.read_text().strip() == password
    assert password not in server.recipe.config_text() and password not in server.log_file.read_text()
    server.restart_cold()
    assert requests.get(url, params=show, headers={}, timeout=10).status_code == 401
    answer = requests.get(url, params=show, headers=basic(password), timeout=10)
    assert answer.status_code == 200 and "benchmark" in answer.text


def target_write_url(target: InfluxDBTarget) -> str:
    return f"http://{target.endpoint.host}:{target.endpoint.port('http')}/write?db={target.database}&precision=ns"


def cpu_types(dataset: Dataset) -> set[str]:
    """The query types of the cpu dataset's families (devops, YCSB-TS)."""
    return {name for name, qtype in QUERY_TYPES.items() if qtype.family in dataset.use_case.query_families}


def test_every_query_type_matches_the_oracle(influx, small_dataset: Dataset) -> None:
    _, target = influx
    types = cpu_types(small_dataset)
    assert not types & set(target.capabilities.unsupported)
    nonempty = check_all_queries(target, small_dataset, per_type=3)
    assert set(nonempty) == types
    assert sum(count > 0 for count in nonempty.values()) >= len(types) - 1, nonempty


def test_a_large_answer_decoded_in_parts_is_the_answer_at_once(influx, small_dataset: Dataset) -> None:
    """Decoded in parts and held by columns, as a large answer is (issue 12's 4,000-host point)."""
    _, target = influx
    assert check_decoding_in_parts(target, small_dataset) > 3 * 97  # spans several parts


def test_facts(influx) -> None:
    _, target = influx
    footprint = target.footprint()
    assert footprint.bytes > 0 and footprint.note
    assert sum(footprint.parts.values()) == footprint.bytes
    assert footprint.parts["tsm"] + footprint.parts["wal"] > 2_000_000  # 103,680 rows × 10 fields
    assert footprint.parts["series_file"] > 0
    assert target.version() == InfluxDBServer.definition.version
    settings = target.settings()
    assert settings["data.index-version"] == "inmem" and settings["shard group duration"]


def test_a_continuous_query_rollup_answers_as_the_raw_rows(influx, small_dataset: Dataset) -> None:
    """The continuous query's rollup, filled over the loaded span, holds one point per host and
    minute in its own retention policy (its bytes apart from the raw data's); the types it answers
    (single-groupby, cpu-max-all, double-groupby) give the oracle's answers over windows that start
    and end at any second, merged from the rollup and the raw edge minutes; the others are not
    answered from it; an appended hour reaches it; building again replaces it."""
    _, target = influx
    raw_before = target.footprint().parts["tsm"]
    built = target.build_rollup()
    minutes = (small_dataset.end_ns - small_dataset.start_ns) // NS_PER_MINUTE
    assert built.rows == small_dataset.scale * minutes and built.seconds > 0 and built.bytes > 0, built
    assert target.footprint().parts["tsm"] == raw_before, "the raw footprint counts the rollup"
    queries = target._run("SHOW CONTINUOUS QUERIES")["series"]
    assert any(v[0] == "cq_cpu_1m" for s in queries for v in s.get("values") or []), queries
    answered = check_all_queries(target, small_dataset, per_type=4, render=target.render_on_rollup)
    expected = {
        name for name, qtype in QUERY_TYPES.items() if qtype.kind in (Kind.GROUPBY, Kind.GROUPBY_HOST)
    }
    assert set(answered) == expected and all(answered.values()), answered
    check_refresh_after_append(target, small_dataset)
    assert target.build_rollup().rows == built.rows  # the append was removed; the earlier rollup too
    target.create_schema()  # drops the database: its retention policies and continuous queries
    assert not target._run("SHOW CONTINUOUS QUERIES")["series"][0].get("values")
    load_all(target, small_dataset)  # as the module's later tests expect it


def test_the_rollup_has_no_point_for_a_minute_without_rows(
    influx, dataset_cache: Path, small_dataset: Dataset
) -> None:
    """Rows every 150 s leave minutes empty: the rollup holds a point only for a minute with rows
    (``count`` would write 0 for an empty one), and so does its refresh after an append (which
    ``measure_refresh`` checks: one rollup point per host and minute with rows)."""
    from tsbench.measure.rollup import measure_refresh, remove_appended

    _, target = influx
    spec = DatasetSpec.parse(scale=3, end="2016-01-01T06:00:00Z", interval="150s")
    sparse, _ = ensure_dataset(spec, dataset_cache)
    load_all(target, sparse)
    assert target.build_rollup().rows == sparse.rows["cpu"] == 3 * 144  # at most one row a minute
    refresh = measure_refresh(target, sparse, "influxdb")
    assert refresh.rows_appended == refresh.rollup_rows == 3 * 24, refresh
    remove_appended(target, sparse, "influxdb")
    load_all(target, small_dataset)  # as the module's later tests expect it


def test_cold_restart_keeps_data_and_answers(influx, small_dataset: Dataset) -> None:
    server, target = influx
    report = server.restart_cold()
    assert report["was_down"] and report["restarted"]
    assert target.row_count("cpu") == small_dataset.rows["cpu"]
    nonempty = check_all_queries(target, small_dataset, per_type=1, seed=11)
    assert sum(count > 0 for count in nonempty.values()) >= len(cpu_types(small_dataset)) - 2, nonempty


@pytest.mark.parametrize("tag_order", ["tsbs", "sorted"])
def test_devops_loads_every_measurement(influx, dataset_cache: Path, tag_order: str) -> None:
    server, _ = influx
    spec = DatasetSpec.parse(use_case="devops", scale=4, end="2016-01-01T01:00:00Z")
    devops, _ = ensure_dataset(spec, dataset_cache)
    assert len(devops.measurements) == 9
    endpoint = dataclasses.replace(server.endpoint(), database=f"devops_{tag_order}")
    target_type = type("Target", (InfluxDBTarget,), {"tag_order": tag_order})
    target = target_type(endpoint, devops.use_case, devops.tags())
    try:
        assert load_all(target, devops, batch_rows=1_000) == sum(devops.rows.values())
        for measurement, rows in devops.rows.items():
            assert rows > 0 and target.row_count(measurement) == rows, measurement
        # every tag is stored, whatever the order on the wire: 4 hosts, one series each (cpu)
        keys = influxql(target, 'SHOW TAG KEYS FROM "disk"')["values"]
        assert sorted(k[0] for k in keys) == sorted([*devops.use_case.entity_tags, "path", "fstype"])
        assert len(influxql(target, 'SHOW SERIES FROM "cpu"')["values"]) == 4
    finally:
        target.close()


def influxql(target: InfluxDBTarget, text: str) -> dict:
    """The first series of a query's answer (raw JSON)."""
    params, headers = {"db": target.database, "q": text}, auth_headers(target.endpoint)
    response = requests.get(f"{target.url}/query", params=params, headers=headers, timeout=60)
    body = response.json()
    assert "series" in body.get("results", [{}])[0], body
    return body["results"][0]["series"][0]


def test_iot_nulls_are_left_out(influx, dataset_cache: Path) -> None:
    """iot rows miss single fields (left out of the line) and a few carry none at all (such a point
    cannot exist in InfluxDB: not sent, not counted); nameless rows are points without tags, and
    the nameless rows of one instant are one point (the run expects exactly that many)."""
    server, _ = influx
    spec = DatasetSpec.parse(use_case="iot", scale=100, end="2016-01-01T01:00:00Z")
    iot, _ = ensure_dataset(spec, dataset_cache)
    endpoint = dataclasses.replace(server.endpoint(), database="iot")
    target = InfluxDBTarget(endpoint, iot.use_case, iot.tags())
    try:
        sent, representable = {}, {}
        for m in iot.use_case.measurements:
            table = iot.read(m.name)
            empty = pc.and_kleene(*[pc.is_null(table[f]) for f in m.field_names[:2]])
            for f in m.field_names[2:]:
                empty = pc.and_kleene(empty, pc.is_null(table[f]))
            fielded = table.filter(pc.invert(empty))
            nameless = fielded.filter(pc.is_null(fielded["name"]))
            instants = len(pc.unique(nameless["time"]))
            assert len(nameless) > instants, f"{m.name}: two nameless rows share an instant"
            sent[m.name] = len(fielded)
            representable[m.name] = len(fielded) - len(nameless) + instants
        assert stored_rows(iot, keeps_fieldless=False, merges_nameless=True) == representable
        assert load_all(target, iot, batch_rows=1_000) == sum(sent.values())
        for m in iot.use_case.measurements:
            assert target.row_count(m.name) == representable[m.name] < iot.rows[m.name]
            table = iot.read(m.name)
            named = table.filter(pc.is_valid(table["name"]))
            per_instant = table.filter(pc.is_null(table["name"])).group_by("time")
            counts = influxql(target, f'SELECT count(*) FROM "{m.name}"')
            stored = dict(zip(counts["columns"], counts["values"][0], strict=True))
            for f in m.field_names:
                merged = per_instant.aggregate([(f, "count")])[f"{f}_count"]  # a value per instant
                nameless = pc.sum(pc.greater(merged, 0)).as_py()
                assert stored[f"count_{f}"] == len(named[f]) - named[f].null_count + nameless, f
        body = influxql(target, "SELECT sum(latitude) FROM readings WHERE fleet = 'East'")["values"][0][1]
        table = iot.read("readings")
        east = iot.tags().filter(pc.equal(iot.tags()["fleet"], "East"))["name"]
        chosen = table.filter(pc.is_in(table["name"].cast(pa.string()), value_set=east.combine_chunks()))
        assert body == pytest.approx(pc.sum(chosen["latitude"]).as_py(), rel=1e-9)
    finally:
        target.close()


def test_tag_values_needing_escapes_are_refused(small_dataset: Dataset) -> None:
    """We never escape: a tag value with a space, comma or '=' is an error, not a bad line."""
    tags = small_dataset.tags()
    column = tags.column("rack").combine_chunks().to_pylist()
    for bad in ("rack 1", "rack,1", "rack=1"):
        broken = tags.set_column(tags.schema.get_field_index("rack"), "rack", pa.array([bad, *column[1:]]))
        with pytest.raises(TargetError, match="escaped"):
            LineBuilder("influxdb", small_dataset.use_case, broken)


def test_ycsb_ts_records_load_and_answer_like_the_oracle(influx, ycsb_dataset: Dataset) -> None:
    server, _ = influx
    endpoint = dataclasses.replace(server.endpoint(), database="ycsb")
    target = InfluxDBTarget(endpoint, ycsb_dataset.use_case, ycsb_dataset.tags())
    try:
        check_ycsb_ts(target, ycsb_dataset)
        tags = influxql(target, 'SHOW TAG KEYS FROM "usermetric"')["values"]
        assert sorted(v[0] for v in tags) == ["metric", "tag0", "tag1", "tag2"]
    finally:
        target.close()


def test_iot_queries_answer_as_the_oracle(influx, iot_dataset: Dataset) -> None:
    """Every iot type InfluxDB supports (and the probes) answers as the oracle; the types refused
    for rows without any field (daily-activity, breakdown-frequency) answer as the oracle does over
    the rows InfluxDB keeps, and not over all rows."""
    server, _ = influx
    endpoint = dataclasses.replace(server.endpoint(), database="iot_queries")
    target = InfluxDBTarget(endpoint, iot_dataset.use_case, iot_dataset.tags())
    try:
        assert load_all(target, iot_dataset) > 0
        nonempty = check_iot_queries(target, iot_dataset)
        assert set(nonempty) == answered_types(target) and len(target.capabilities.unsupported) == 6
        check_refused_over_stored_rows(target, iot_dataset)
    finally:
        target.close()


def check_refused_over_stored_rows(target: InfluxDBTarget, dataset: Dataset) -> None:
    """The texts of the types refused for rows without any field (``iot_dialect.RENDERERS``) against
    the oracle over the rows InfluxDB keeps (each measurement's rows with a field); daily-activity and
    breakdown-frequency also differ from it over all rows (the last-row types do only on data whose
    last row of a truck has no field, which this dataset lacks)."""
    refused = ["last-loc", "low-fuel", "high-load", "daily-activity", "breakdown-frequency"]
    differ = {"daily-activity", "breakdown-frequency"}
    assert set(refused) <= set(target.capabilities.unsupported)
    everything, stored = Oracle(dataset), Oracle(dataset)
    for m in dataset.use_case.measurements:
        source = kept_rows_sql(str(dataset.glob(m.name)), dataset.use_case.entity_key, Keeps.ALL)
        view = measurement_view(m.name, source, dataset.use_case.entity_key)
        kept = " OR ".join(f'r."{f}" IS NOT NULL' for f in m.field_names)
        stored.connection.execute(f"{view.replace('CREATE VIEW', 'CREATE OR REPLACE VIEW')} WHERE {kept}")
    session = target.session()
    try:
        for query in generate_queries(DataRange.of(dataset), refused, 1, seed=5):
            with pytest.raises(NotImplementedError):
                target.render(query)
            text = iot_dialect.RENDERERS[query.query_type.kind](query)
            actual = Answer.build(query.query_type, session.execute(text), query.fields)
            assert compare(stored.answer(query), actual).ok, text
            assert stored.answer(query).rows or query.type in RARELY_ANSWERED, text
            assert compare(everything.answer(query), actual).ok is (query.type not in differ), text
    finally:
        session.close()
        everything.close()
        stored.close()


def test_avg_load_refuses_a_group_with_two_load_capacities(iot_dataset: Dataset) -> None:
    """avg-load groups by fleet and model (InfluxQL cannot group by the load_capacity field): the
    answer drops the guard column where a group has one capacity, and is refused where it has two."""
    query = generate_queries(DataRange.of(iot_dataset), ["avg-load"], 1, seed=1)[0]
    answer = dialect.parse_header(iot_dialect.render(query))
    assert answer.equal == ("load_capacity", "lowest_capacity")
    series = {
        "name": "diagnostics",
        "tags": {"fleet": "East", "model": "F-150"},
        "columns": ["time", "load_capacity", "lowest_capacity", "avg_load_share"],
    }
    one = {"series": [{**series, "values": [[0, 2000.0, 2000.0, 0.5]]}]}
    assert [row for part in shaped_parts(answer, one) for row in part] == [("East", "F-150", 2000.0, 0.5)]
    two = {"series": [{**series, "values": [[0, 2000.0, 1500.0, 0.5]]}]}
    with pytest.raises(TargetError, match="lowest_capacity"):
        list(shaped_parts(answer, two))
