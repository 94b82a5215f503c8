"""The run options ``compress_after_load`` and ``rollup_after_load``: refused up front (naming the
field and the targets that can) when no target of the run can; accepted when one can, the others
then run as always. The rollup's query texts: only the types it answers exactly, reading the view
for whole minutes and the raw rows for the window's partial edge minutes."""

from __future__ import annotations

from datetime import datetime

import pyarrow as pa
import pytest

from tsbench.spec import RunSpec
from tsbench.targets.base import TargetError
from tsbench.targets.influxdb import rollup as influx_rollup
from tsbench.targets.influxdb.answers import combined_rows
from tsbench.targets.influxdb.dialect import AnswerHeader, parse_header
from tsbench.targets.registry import load_target
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_types import get_query_type


def test_a_run_whose_targets_cannot_compress_is_refused_naming_the_field() -> None:
    refused = r"compress_after_load: none of the run's targets can .*timescaledb_tsl"
    with pytest.raises(ValueError, match=refused):
        RunSpec(targets=["questdb", "postgres"], compress_after_load=True)


def test_a_run_with_one_target_that_compresses_is_accepted() -> None:
    spec = RunSpec(targets=["questdb", "timescaledb_tsl"], compress_after_load=True)
    assert spec.compress_after_load and not RunSpec(targets=["questdb"]).compress_after_load


def test_only_the_full_timescaledb_edition_declares_compression_after_the_load() -> None:
    from tsbench.targets.registry import target_names

    able = [name for name in target_names() if load_target(name).capabilities.compresses_after_load]
    assert able == ["timescaledb_tsl"]
    apache = load_target("timescaledb")
    with pytest.raises(TargetError, match="timescaledb cannot compress after the load: none: the Apache-2"):
        apache.compress(object.__new__(apache))


def test_a_run_whose_targets_cannot_roll_up_is_refused_naming_both_options() -> None:
    with pytest.raises(ValueError) as refused:
        RunSpec(targets=["postgres"], rollup_after_load=True, compress_after_load=True)
    text = str(refused.value)
    assert (
        "rollup_after_load: none of the run's targets can build a rollup; influxdb, questdb, timescaledb_tsl"
        " can" in text
    )
    assert "compress_after_load:" in text
    assert RunSpec(targets=["postgres", "timescaledb_tsl"], rollup_after_load=True).rollup_after_load


def _query(qtype: str, start: str, hours: int, hosts: tuple[str, ...] | None) -> LogicalQuery:
    start_ns = int(datetime.fromisoformat(start).timestamp()) * 10**9
    fields = get_query_type(qtype).fields
    return LogicalQuery("q1", qtype, fields, hosts, start_ns, start_ns + hours * 3_600 * 10**9)


def test_the_rollup_answers_only_max_and_mean_per_bucket() -> None:
    tsl = load_target("timescaledb_tsl")
    at = "2016-01-01T03:17:25+00:00"
    assert tsl.render_on_rollup(object.__new__(tsl), _query("high-cpu-all", at, 12, None)) is None
    text = tsl.render_on_rollup(object.__new__(tsl), _query("single-groupby-1-1-1", at, 1, ("host_3",)))
    assert text is not None
    # whole minutes 03:18 … 04:17 from the view, the rows of 03:17:25 … 03:18 and 04:17 … 04:17:25 raw
    first, last = "TIMESTAMPTZ '2016-01-01 03:18:00+00'", "TIMESTAMPTZ '2016-01-01 04:17:00+00'"
    assert f"FROM cpu_1m WHERE minute >= {first} AND minute < {last}" in text
    assert f"NOT (time >= {first} AND time < {last})" in text
    assert "max(v_usage_user) AS max_usage_user" in text
    mean = tsl.render_on_rollup(object.__new__(tsl), _query("double-groupby-1", at, 12, None))
    assert mean is not None and "sum(v_usage_user) / sum(n_usage_user) AS mean_usage_user" in mean
    for name in ("timescaledb", "postgres"):
        target = load_target(name)
        assert not target.capabilities.builds_rollups
        assert (
            target.render_on_rollup(object.__new__(target), _query("double-groupby-1", at, 12, None)) is None
        )


def test_questdb_answers_from_its_view_and_the_raw_edge_minutes() -> None:
    questdb = load_target("questdb")
    at = "2016-01-01T03:17:25+00:00"
    assert questdb.render_on_rollup(object.__new__(questdb), _query("lastpoint", at, 1, None)) is None
    text = questdb.render_on_rollup(
        object.__new__(questdb), _query("single-groupby-1-1-1", at, 1, ("host_3",))
    )
    assert text is not None
    # whole minutes 03:18 … 04:17 from the view, 03:17:25 … 03:18 and 04:17 … 04:17:25 from cpu
    first, last = "'2016-01-01T03:18:00.000000Z'", "'2016-01-01T04:17:00.000000Z'"
    assert f"FROM cpu_1m WHERE timestamp >= {first} AND timestamp < {last} AND hostname IN ('host_3')" in text
    assert f"FROM cpu WHERE timestamp >= '2016-01-01T03:17:25.000000Z' AND timestamp < {first}" in text
    assert f"FROM cpu WHERE timestamp >= {last} AND timestamp < '2016-01-01T04:17:25.000000Z'" in text
    assert "max(v_usage_user) max_usage_user" in text and "timestamp_floor('1m', minute)" in text
    mean = questdb.render_on_rollup(object.__new__(questdb), _query("double-groupby-1", at, 12, None))
    assert (
        mean is not None and "CAST(sum(v_usage_user) AS DOUBLE) / sum(n_usage_user) mean_usage_user" in mean
    )
    assert "GROUP BY bucket, hostname ORDER BY bucket, hostname" in mean


def test_influxdb_answers_from_its_rollup_and_the_raw_edge_minutes_merged() -> None:
    at = "2016-01-01T03:17:25+00:00"
    assert influx_rollup.render_on_rollup(_query("lastpoint", at, 1, None), "benchmark") is None
    text = influx_rollup.render_on_rollup(_query("single-groupby-1-1-1", at, 1, ("host_3",)), "b")
    assert text is not None
    first, last = 1451618280 * 10**9, 1451621820 * 10**9  # 03:18 and 04:17
    rollup, before, after = text.split("\n", 1)[1].split("; ")
    assert rollup.startswith('SELECT max("max_usage_user") AS "max_usage_user" FROM "b"."rollup"."cpu_1m"')
    assert f"time >= {first} AND time < {last} GROUP BY time(60s) fill(none)" in rollup
    assert (
        f'FROM "cpu" WHERE "hostname" = \'host_3\' AND time >= {first - 35 * 10**9} AND time < {first}'
        in before
    )
    assert f"time >= {last} AND time < {last + 25 * 10**9}" in after
    assert parse_header(text) == AnswerHeader(["bucket", "max_usage_user"], combine="max")


def test_influxdb_merges_the_statements_rows_per_key() -> None:
    """Max of maxima; mean = sum of sums / sum of counts, a missing value or a zero count ignored."""
    text = "-- answer: bucket,hostname,mean_a; combine: mean\nSELECT …"
    series = [
        {
            "tags": {"hostname": "h1"},
            "columns": ["time", "s:mean_a", "n:mean_a"],
            "values": [[0, 10, 2], [60, None, 0]],
        },
        {"tags": {"hostname": "h2"}, "columns": ["time", "s:mean_a", "n:mean_a"], "values": [[0, 3, 1]]},
    ]
    edge = [{"tags": {"hostname": "h1"}, "columns": ["time", "s:mean_a", "n:mean_a"], "values": [[0, 5, 1]]}]
    body = {"results": [{"statement_id": 0, "series": series}, {"statement_id": 1, "series": edge}]}
    assert combined_rows(parse_header(text), body, text) == [(0, "h1", 5.0), (0, "h2", 3.0), (60, "h1", None)]
    maxima = "-- answer: bucket,max_a; combine: max\nSELECT …"
    parts = [
        {"series": [{"columns": ["time", "max_a"], "values": [[0, 4], [60, 1]]}]},
        {"series": [{"columns": ["time", "max_a"], "values": [[0, 7]]}]},
    ]
    assert combined_rows(parse_header(maxima), {"results": parts}, maxima) == [(0, 7), (60, 1)]
    with pytest.raises(TargetError, match="influxdb: boom"):
        combined_rows(parse_header(maxima), {"results": [parts[0], {"error": "boom"}]}, maxima)


def test_influxdb_2_says_it_builds_no_rollup() -> None:
    """InfluxDB 2 (the 2.7 container, ``api: v2``) has tasks in Flux, not continuous queries: its
    target instance declares no rollup (a run skips it), answers nothing from one and refuses to
    build one; a 1.x instance of the same class builds one."""
    from tsbench.targets.base import Endpoint
    from tsbench.targets.influxdb.target import InfluxDBTarget
    from tsbench.workload.usecases import get_use_case

    use_case = get_use_case("cpu-only")
    tags = pa.table({tag: pa.array([], pa.string()) for tag in use_case.entity_tags})
    v2 = InfluxDBTarget(Endpoint("127.0.0.1", {"http": 1}, extra={"api": "v2"}), use_case, tags)
    assert not v2.capabilities.builds_rollups and "Flux" in v2.capabilities.rollups
    assert v2.render_on_rollup(_query("double-groupby-1", "2016-01-01T03:17:25+00:00", 12, None)) is None
    with pytest.raises(TargetError, match="influxdb 2: no continuous queries"):
        v2.build_rollup()
    v1 = InfluxDBTarget(Endpoint("127.0.0.1", {"http": 1}), use_case, tags)
    assert v1.capabilities.builds_rollups and InfluxDBTarget.capabilities.builds_rollups


def test_a_target_that_cannot_count_gapped_rows_is_refused_for_iot_before_any_work() -> None:
    """VictoriaMetrics counts a measurement's rows by a field every row carries; iot data has none
    sure to be (any field may be left out of a point), so the run is refused, naming the target."""
    with pytest.raises(
        ValueError, match=r"targets: victoriametrics counts rows by a field every row carries"
    ):
        RunSpec(targets=["questdb", "victoriametrics"], use_case="iot")
    assert RunSpec(targets=["questdb", "iotdb", "influxdb"], use_case="iot").use_case == "iot"
    assert RunSpec(targets=["victoriametrics"], use_case="cpu-only").targets == ["victoriametrics"]
