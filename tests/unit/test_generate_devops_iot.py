"""devops and iot generators: real generation at small scale, checked against the use-case contract."""

from __future__ import annotations

import itertools
import re
from functools import cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tsbench.spec import DatasetSpec
from tsbench.workload.generate import generate
from tsbench.workload.generate.iot import MODELS
from tsbench.workload.usecases import get_use_case

HOUR = {"start": "2016-01-01T00:00:00Z", "end": "2016-01-01T01:00:00Z"}
DEVOPS = {"use_case": "devops", "scale": 5, **HOUR}
IOT = {"use_case": "iot", "scale": 10, "start": "2016-01-01T00:00:00Z", "end": "2016-01-01T06:00:00Z"}
IOT_DAY = {"use_case": "iot", "scale": 4, "start": "2016-01-01T00:00:00Z", "end": "2016-01-02T00:00:00Z"}

COUNTERS = {
    "diskio": ("reads", "writes", "read_bytes", "write_bytes", "read_time", "write_time", "io_time"),
    "kernel": ("interrupts", "context_switches", "processes_forked", "disk_pages_in", "disk_pages_out"),
    "net": (
        "bytes_sent",
        "bytes_recv",
        "packets_sent",
        "packets_recv",
        "err_in",
        "err_out",
        "drop_in",
        "drop_out",
    ),
    "nginx": ("accepts", "handled", "requests"),
    "postgresl": (
        "xact_commit",
        "xact_rollback",
        "blks_read",
        "blks_hit",
        "tup_returned",
        "tup_fetched",
        "tup_inserted",
        "tup_updated",
        "tup_deleted",
        "conflicts",
        "temp_files",
        "temp_bytes",
        "deadlocks",
        "blk_read_time",
        "blk_write_time",
    ),
    "redis": (
        "uptime_in_seconds",
        "total_connections_received",
        "expired_keys",
        "evicted_keys",
        "keyspace_hits",
        "keyspace_misses",
        "used_memory_peak",
        "sync_full",
        "sync_partial_ok",
        "sync_partial_err",
        "master_repl_offset",
        "used_cpu_sys",
        "used_cpu_user",
        "used_cpu_sys_children",
        "used_cpu_user_children",
    ),
}


@cache
def _generated(target_rows: int | None = None, **spec: object) -> tuple[pa.Table, dict[str, pa.Table]]:
    data = generate(DatasetSpec.parse(**spec), target_rows=target_rows)
    batches: dict[str, list[pa.RecordBatch]] = {}
    for name, batch in data.batches:
        batches.setdefault(name, []).append(batch)
    schemas = {m.name: data.use_case.row_schema(m.name) for m in data.use_case.measurements}
    tables = {name: pa.Table.from_batches(batches.get(name, []), schemas[name]) for name in schemas}
    return data.tags, tables


def tables(**spec: object) -> dict[str, pa.Table]:
    return _generated(**spec)[1]


# many small chunks (epoch blocks × entity slices): simulator state must carry over both
SMALL_CHUNKS = {"target_rows": 20, "ingestion": "per-host-runs", "run_length": 5}  # 5 × 4 and 5 × 1
IOT_SMALL_CHUNKS = {"target_rows": 40, "ingestion": "per-host-runs", "run_length": 5, **HOUR}  # 5 × 8, 5 × 2


def _np(table: pa.Table, column: str) -> np.ndarray:
    return table.column(column).to_numpy(zero_copy_only=False)


def _by_entity(table: pa.Table, key: str) -> dict[str, pa.Table]:
    """Rows of each entity, sorted by time (nameless rows belong to none)."""
    names = pc.cast(table.column(key), pa.string())
    return {
        str(name): table.filter(pc.equal(names, name)).sort_by("time")
        for name in pc.unique(names).drop_null().to_pylist()
    }


def _sorted(table: pa.Table, key: str) -> pa.Table:
    table = table.set_column(1, key, pc.cast(table.column(key), pa.string()))
    for i, field in enumerate(table.schema):
        if pa.types.is_dictionary(field.type):
            table = table.set_column(i, field.name, pc.cast(table.column(i), pa.string()))
    return table.sort_by([("time", "ascending"), (key, "ascending")])


# --- devops -------------------------------------------------------------------------------------------


def test_devops_row_counts_and_schema():
    spec = DatasetSpec.parse(**DEVOPS)
    use_case = get_use_case("devops")
    generated = tables(**DEVOPS)
    assert list(generated) == [m.name for m in use_case.measurements]
    for measurement in use_case.measurements:
        table = generated[measurement.name]
        assert table.num_rows == spec.scale * spec.epochs == 1800
        assert table.schema == measurement.arrow_schema("hostname")
        assert sum(column.null_count for column in table.columns) == 0


def test_devops_cpu_and_host_tags_equal_cpu_only():
    tags, generated = _generated(**DEVOPS)
    cpu_tags, cpu_only = _generated(**(DEVOPS | {"use_case": "cpu-only"}))
    assert generated["cpu"].equals(cpu_only["cpu"])
    assert tags.equals(cpu_tags)


@pytest.mark.parametrize("measurement", sorted(COUNTERS))
@pytest.mark.parametrize("chunking", [{}, SMALL_CHUNKS], ids=["one-chunk", "small-chunks"])
def test_devops_counters_never_decrease(measurement, chunking):
    generated = tables(**DEVOPS, **chunking)
    assert generated[measurement].num_rows == 1800
    for name, rows in _by_entity(generated[measurement], "hostname").items():
        for field in COUNTERS[measurement]:
            values = _np(rows, field)
            assert values.min() >= 0, (measurement, name, field)
            assert np.all(np.diff(values) >= 0), (measurement, name, field)
    # frequent counters move in (nearly) every epoch
    rows = _by_entity(generated[measurement], "hostname")["host_0"]
    assert np.mean(np.diff(_np(rows, COUNTERS[measurement][0])) > 0) > 0.95


def test_devops_gauges_in_bounds():
    t = tables(**DEVOPS)
    for field in t["cpu"].column_names[2:]:
        assert 0 <= pc.min(t["cpu"][field]).as_py() <= pc.max(t["cpu"][field]).as_py() <= 100
    for field in ("used_percent", "available_percent", "buffered_percent"):
        values = _np(t["mem"], field)
        assert np.all((values >= 0) & (values <= 100))
    assert np.all((_np(t["disk"], "used_percent") >= 0) & (_np(t["disk"], "used_percent") <= 100))
    backends = _np(t["postgresl"], "numbackends")
    assert np.all((backends >= 1) & (backends <= 300))
    for field in ("reading", "writing", "waiting"):
        assert _np(t["nginx"], field).min() >= 0
    redis = t["redis"]
    assert _np(redis, "connected_clients").min() >= 1
    assert np.all(_np(redis, "mem_fragmentation_ratio") >= 1.0)
    assert set(_np(redis, "repl_backlog_active")) <= {0, 1}


@pytest.mark.parametrize("chunking", [{}, SMALL_CHUNKS], ids=["one-chunk", "small-chunks"])
def test_devops_derived_fields_consistent(chunking):
    t = tables(**DEVOPS, **chunking)
    disk = t["disk"]
    total, used, free = (_np(disk, f) for f in ("total", "used", "free"))
    assert np.array_equal(used + free, total)
    np.testing.assert_allclose(_np(disk, "used_percent"), 100.0 * used / total)
    inodes = _np(disk, "inodes_used") + _np(disk, "inodes_free")
    assert np.array_equal(inodes, _np(disk, "inodes_total"))

    mem = t["mem"]
    total, used, free, cached, buffered, available = (
        _np(mem, f) for f in ("total", "used", "free", "cached", "buffered", "available")
    )
    assert np.array_equal(used + free + cached + buffered, total)
    assert np.all(free >= 0) and np.all(used + available <= total) and np.all(available >= free)
    np.testing.assert_allclose(_np(mem, "used_percent"), 100.0 * used / total)
    np.testing.assert_allclose(_np(mem, "available_percent"), 100.0 * available / total)
    np.testing.assert_allclose(_np(mem, "buffered_percent"), 100.0 * buffered / total)
    assert len(set(total.tolist())) > 1  # sizes vary between hosts

    nginx = t["nginx"]
    parts = _np(nginx, "reading") + _np(nginx, "writing") + _np(nginx, "waiting")
    assert np.array_equal(_np(nginx, "active"), parts)
    assert np.all(_np(nginx, "accepts") >= _np(nginx, "handled"))
    assert np.all(_np(nginx, "requests") >= _np(nginx, "handled"))

    pg = t["postgresl"]
    assert np.all(_np(pg, "tup_returned") >= _np(pg, "tup_fetched"))
    assert np.all(_np(pg, "blks_hit") > _np(pg, "blks_read"))

    redis = t["redis"]
    memory, rss = _np(redis, "used_memory"), _np(redis, "used_memory_rss")
    assert np.all(rss >= memory) and np.all(_np(redis, "used_memory_peak") >= memory)
    np.testing.assert_allclose(_np(redis, "mem_fragmentation_ratio"), rss / memory)
    assert np.all(_np(redis, "repl_backlog_histlen") <= _np(redis, "repl_backlog_size"))
    assert _np(redis, "rdb_changes_since_last_save").min() >= 0

    interval_s = 10
    for rows in _by_entity(t["diskio"], "hostname").values():
        assert np.all(np.diff(_np(rows, "io_time")) <= interval_s * 1000 + 1)
    for rows in _by_entity(redis, "hostname").values():
        assert np.all(np.diff(_np(rows, "uptime_in_seconds")) == interval_s)
        # snapshots (every 5–60 min) reset the change count, which grows in between
        changes = _np(rows, "rdb_changes_since_last_save")
        resets = np.flatnonzero(np.diff(changes) < 0) + 1
        assert len(resets) >= 1 and np.all(changes[resets] == 0)
        forks = _np(rows, "latest_fork_usec")
        assert set(np.flatnonzero(np.diff(forks)) + 1) <= set(np.flatnonzero(changes == 0))
    start = DatasetSpec.parse(**DEVOPS).start // 10**9
    for rows in _by_entity(t["kernel"], "hostname").values():
        boot = _np(rows, "boot_time")
        assert len(set(boot.tolist())) == 1 and boot[0] < start


def test_devops_extra_tags_fixed_per_host():
    t = tables(**DEVOPS)
    formats = {
        ("diskio", "serial"): r"\d{3}-\d{3}-\d{4}",
        ("disk", "path"): r"/dev/sd[a-z]\d",
        ("disk", "fstype"): r"ext3|ext4|btrfs|xfs",
        ("net", "interface"): r"eth[0-3]",
        ("nginx", "port"): r"\d+",
        ("nginx", "server"): r"nginx_\d+",
        ("redis", "port"): r"63\d\d",
        ("redis", "server"): r"redis_\d+",
    }
    for (measurement, tag), pattern in formats.items():
        for rows in _by_entity(t[measurement], "hostname").values():
            values = set(pc.cast(rows[tag], pa.string()).to_pylist())
            assert len(values) == 1, (measurement, tag)
            assert re.fullmatch(pattern, values.pop()), (measurement, tag)


def test_devops_deterministic_and_seeded():
    first = tables(**DEVOPS)
    again = _generated.__wrapped__(**DEVOPS)[1]
    other = tables(**(DEVOPS | {"seed": 7}))
    for name in first:
        assert first[name].equals(again[name]), name
        assert not first[name].equals(other[name]), name


def test_devops_per_host_runs_same_rows():
    interleaved = tables(**DEVOPS)
    runs = tables(**(DEVOPS | {"ingestion": "per-host-runs", "run_length": 10}))
    for name, table in interleaved.items():
        assert not table.equals(runs[name])  # another order …
        assert _sorted(table, "hostname").equals(_sorted(runs[name], "hostname")), name  # … same rows


# --- iot ----------------------------------------------------------------------------------------------


def test_iot_schema_and_tags():
    tags, generated = _generated(**IOT)
    use_case = get_use_case("iot")
    assert tags.column_names == list(use_case.entity_tags)
    assert tags["name"].to_pylist() == [f"truck_{i}" for i in range(10)]
    assert set(tags["fleet"].to_pylist()) <= {"East", "West", "North", "South"}
    assert set(tags["model"].to_pylist()) <= set(MODELS)
    assert set(tags["device_version"].to_pylist()) <= {"v1.0", "v1.5", "v2.0", "v2.3"}
    for measurement in use_case.measurements:
        assert generated[measurement.name].schema == use_case.row_schema(measurement.name)


def test_iot_kept_share_like_tsbs():
    spec = DatasetSpec.parse(**IOT)
    for table in tables(**IOT).values():
        share = table.num_rows / spec.rows_per_measurement
        assert 0.88 <= share <= 0.93, share


def test_iot_nameless_rows_like_tsbs():
    """TSBS clears one of the 5 truck tags on 1 % of its points: the name of 0.2 % of them. A
    nameless row keeps its fields; only iot has such rows."""
    for name, table in tables(**IOT).items():
        nameless = table["name"].is_null()
        share = pc.mean(nameless.cast(pa.float64())).as_py()
        assert 0.001 < share < 0.004, (name, share)
        fields = table.filter(nameless).column_names[2:]
        assert any(table.filter(nameless)[f].null_count < pc.sum(nameless).as_py() for f in fields)
    for table in tables(**DEVOPS).values():
        assert table["hostname"].null_count == 0 and not table.schema.field("hostname").nullable


def test_iot_missing_fields_and_empty_rows():
    for name, table in tables(**IOT).items():
        fields = table.column_names[2:]
        nulls = np.stack([table[f].is_null().to_numpy(zero_copy_only=False) for f in fields])
        per_row = nulls.sum(axis=0)
        empty = per_row == len(fields)
        partial = (per_row > 0) & ~empty
        assert 0.002 < empty.mean() < 0.03, name
        assert 0.005 < partial.mean() < 0.1, name


@pytest.mark.parametrize("chunking", [{}, IOT_SMALL_CHUNKS], ids=["one-chunk", "small-chunks"])
def test_iot_out_of_order_but_unique(chunking):
    for name, table in tables(**(IOT | chunking)).items():
        trucks = pc.cast(table["name"], pa.string())
        keys = [key for key in zip(trucks.to_pylist(), _np(table, "time"), strict=True) if key[0]]
        assert len(set(keys)) == len(keys), name  # a nameless row has no key to repeat
        late = []
        for truck in pc.unique(trucks).drop_null().to_pylist():
            times = _np(table.filter(pc.equal(trucks, truck)), "time").astype(np.int64)  # emission order
            late.append(np.mean(times[1:] < times[:-1]))
        assert 0.005 < np.mean(late) < 0.06, (name, late)


def test_iot_values_in_bounds():
    tags, generated = _generated(**IOT)
    model_of = dict(zip(tags["name"].to_pylist(), tags["model"].to_pylist(), strict=True))
    bounds = {
        "latitude": (-90, 90),
        "longitude": (-180, 180),
        "elevation": (0, 5000),
        "velocity": (0, 100),
        "heading": (0, 360),
        "grade": (-100, 100),
        "fuel_consumption": (0, 200),
        "fuel_state": (0, 1),
        "status": (0, 9),
    }
    for name, table in generated.items():
        for field, (lo, hi) in bounds.items():
            if field in table.column_names:
                values = table[field].drop_null().to_numpy()
                assert lo <= values.min() and values.max() <= hi, (name, field)
        if name == "readings":
            assert pc.max(table["heading"]).as_py() < 360
        for truck, rows in _by_entity(table, "name").items():
            capacity = MODELS[model_of[truck]]
            for i, field in enumerate(("load_capacity", "fuel_capacity", "nominal_fuel_consumption")):
                assert set(rows[field].drop_null().to_pylist()) == {capacity[i]}, (truck, field)
            if name == "diagnostics":
                load = rows["current_load"].drop_null().to_numpy()
                assert load.min() >= 0 and load.max() <= capacity[0]
    diagnostics = generated["diagnostics"]
    assert diagnostics.schema.field("status").type == pa.int64()
    assert set(diagnostics["status"].drop_null().to_pylist()) > {0}  # normal, and some fault codes


def test_iot_trucks_move_and_refuel():
    readings = _by_entity(tables(**IOT_DAY)["readings"], "name")
    for rows in readings.values():
        velocity = rows["velocity"].drop_null().to_numpy()
        assert velocity.max() > 20 and np.mean(velocity < 5) > 0.005  # drives, and stands sometimes
        latitude = rows["latitude"].drop_null().to_numpy()
        assert 0 < np.ptp(latitude) < 25  # moves, at most a day's drive
    refuels = 0
    for rows in _by_entity(tables(**IOT_DAY)["diagnostics"], "name").values():
        fuel = rows["fuel_state"].drop_null().to_numpy()
        refuels += int(np.sum(np.diff(fuel) > 0.3))
        assert np.mean(np.diff(fuel) <= 0) > 0.99  # fuel falls, except when refuelled
    assert refuels > 0


def test_iot_deterministic_and_same_rows_per_host_runs():
    first = tables(**IOT)
    again = _generated.__wrapped__(**IOT)[1]
    other = tables(**(IOT | {"seed": 7}))
    runs = tables(**(IOT | {"ingestion": "per-host-runs", "run_length": 10}))
    for name, table in first.items():
        assert table.equals(again[name]), name
        assert not table.equals(other[name]), name
        assert _sorted(table, "name").equals(_sorted(runs[name], "name")), name


def test_iot_per_host_runs_keep_runs_despite_delays() -> None:
    """Out-of-order points are moved, but every other point keeps the per-host-runs order."""
    spec = DatasetSpec.parse(
        use_case="iot", scale=6, end="2016-01-01T02:00:00Z", ingestion="per-host-runs", run_length=20
    )
    data = generate(spec)
    names = [n for m, b in data.batches if m == "readings" for n in b.column("name").to_pylist()]
    same_as_next = sum(a == b for a, b in itertools.pairwise(names)) / (len(names) - 1)
    assert same_as_next > 0.85  # interleaved order would give about 0
