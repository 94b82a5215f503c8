"""TimescaleDB's two editions on one machine at once: the Apache-2 edition (Debian's PostgreSQL, the
``timescaledb`` target) and the full edition (its own PostgreSQL copy, ``timescaledb_tsl``, built by
``targets/timescaledb/build_tsl.sh`` on first use), both started by the local runtime. The full
edition compresses every chunk: the row counts and every query type's answers stay the oracle's and
the hypertables shrink; the Apache-2 edition refuses compression."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from conftest import check_all_queries, check_refresh_after_append, load_all

from tsbench.results.files import read_json
from tsbench.runtimes.local import LocalServer
from tsbench.targets.base import Target
from tsbench.targets.timescaledb_tsl.server import tsl_prefix
from tsbench.timeutil import NS_PER_MINUTE
from tsbench.workload.dataset import Dataset
from tsbench.workload.query_types import QUERY_TYPES, Kind, types_of
from tsbench.workload.usecases import get_use_case

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]

CPU_TYPES = types_of(get_use_case("cpu-only").query_families)  # the types a cpu dataset answers


@pytest.fixture(scope="module")
def editions(serve, small_dataset: Dataset) -> Iterator[dict[str, tuple[LocalServer, Target]]]:
    with serve("timescaledb", small_dataset) as apache, serve("timescaledb_tsl", small_dataset) as full:
        yield {"apache": apache, "tsl": full}


def test_both_editions_run_side_by_side_from_their_own_installations(editions: dict) -> None:
    (apache_server, apache), (tsl_server, tsl) = editions["apache"], editions["tsl"]
    assert apache_server.running() and tsl_server.running()
    assert "(apache license)" in apache.version() and "(timescale license)" in tsl.version()
    assert all(target.version().startswith("TimescaleDB 2.19.3") for target in (apache, tsl))
    assert "Apache-2 edition" in apache_server.recipe.version()
    assert "Timescale License" in tsl_server.recipe.version()
    assert apache_server.recipe.pg_bin != tsl_server.recipe.pg_bin
    assert tsl_server.recipe.pg_bin.is_relative_to(tsl_prefix())
    assert (tsl_prefix() / "BUILD").is_file()


def test_compression_keeps_every_row_and_answer_and_shrinks_the_data(
    editions: dict, small_dataset: Dataset
) -> None:
    _, tsl = editions["tsl"]
    assert load_all(tsl, small_dataset) == small_dataset.rows["cpu"]
    done = tsl.compress()
    assert done.units >= 2 and done.seconds > 0
    assert done.bytes_after < done.bytes_before / 2, done  # columnar, segmented per host
    assert tsl.row_count("cpu") == small_dataset.rows["cpu"]
    with tsl.connect() as conn:
        uncompressed = conn.execute(
            "SELECT count(*) FROM timescaledb_information.chunks "
            "WHERE hypertable_name = 'cpu' AND NOT is_compressed"
        ).fetchone()[0]
    assert uncompressed == 0
    nonempty = check_all_queries(tsl, small_dataset)  # on compressed chunks
    assert set(nonempty) == set(CPU_TYPES)
    # the footprint counts the compressed hypertable (WAL and tags beside it, as before)
    parts = tsl.footprint().parts
    assert sum(value for key, value in parts.items() if key.startswith("cpu.")) == done.bytes_after


ROLLUP_KINDS = (Kind.GROUPBY, Kind.GROUPBY_HOST)


def test_a_continuous_aggregate_answers_as_the_raw_rows(editions: dict, small_dataset: Dataset) -> None:
    """The 1-minute continuous aggregate of cpu holds one row per host and minute, in less space
    than the raw rows; the types it answers (single-groupby, cpu-max-all, double-groupby) give the
    oracle's answers over windows that start and end at any second; the others are not answered
    from it; an appended hour reaches it when refreshed; a new schema drops it with the table."""
    _, tsl = editions["tsl"]
    load_all(tsl, small_dataset)
    built = tsl.build_rollup()
    minutes = (small_dataset.end_ns - small_dataset.start_ns) // NS_PER_MINUTE
    assert built.rows == small_dataset.scale * minutes and built.seconds > 0
    with tsl.connect() as conn:
        raw_bytes = conn.execute("SELECT hypertable_size('cpu')").fetchone()[0]
    assert 0 < built.bytes < raw_bytes / 2, (built, raw_bytes)
    answered = check_all_queries(tsl, small_dataset, per_type=4, render=tsl.render_on_rollup)
    expected = {name for name, qtype in QUERY_TYPES.items() if qtype.kind in ROLLUP_KINDS}
    assert set(answered) == expected and all(answered.values()), answered
    check_refresh_after_append(tsl, small_dataset)
    assert tsl.build_rollup().rows == built.rows  # a retried queries phase builds it again
    tsl.create_schema()
    with tsl.connect() as conn:
        left = conn.execute("SELECT count(*) FROM timescaledb_information.continuous_aggregates").fetchone()
    assert left[0] == 0


def test_the_apache_edition_refuses_compression(editions: dict, small_dataset: Dataset) -> None:
    _, apache = editions["apache"]
    load_all(apache, small_dataset)
    with apache.connect() as conn, pytest.raises(psycopg.Error, match="apache"):
        conn.execute("ALTER TABLE cpu SET (timescaledb.compress)")
    assert apache.row_count("cpu") == small_dataset.rows["cpu"]


def test_the_pipeline_compresses_after_the_load_and_reports_it(tmp_path: Path, dataset_cache: Path) -> None:
    """``tsbench run --compress-after-load`` with both editions: the full edition compresses in the
    settle phase (timed, bytes before and after), its queries run on compressed chunks and agree
    with the oracle; the Apache-2 edition loads and queries uncompressed; the report says so."""
    out, state = tmp_path / "out", Path("/var/tmp/tsbench-tests") / f"editions-{tmp_path.name}"
    run = ["run", "--targets", "timescaledb,timescaledb_tsl", "--scales", "10", "--duration", "12h"]
    run += ["--compress-after-load", "--rollup-after-load", "--queries-per-type", "2", "--hot-runs", "1"]
    run += ["--run-id", "editions"]
    run += ["--results-dir", str(out / "runs"), "--cache-dir", str(dataset_cache), "--state-dir", str(state)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    result = subprocess.run([sys.executable, "-m", "tsbench", *run], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    folder = out / "runs" / "editions"
    targets = read_json(folder / "comparison.json")["results"]["10"]["targets"]
    compressed = targets["timescaledb_tsl"]["footprint"]["compression"]
    assert compressed["units"] >= 1 and compressed["seconds"] > 0
    assert compressed["bytes_after"] < compressed["bytes_before"] / 2
    assert targets["timescaledb"]["footprint"].get("compression") is None
    for name in ("timescaledb", "timescaledb_tsl"):
        checks = targets[name]["queries"]["answer_checks"]
        assert targets[name]["status"] == "ok" and checks["mismatches"] == 0 and checks["agreed"] > 0
    rollup = targets["timescaledb_tsl"]["queries"]["rollup"]
    assert rollup["name"] == "cpu_1m" and rollup["rows"] > 0 and rollup["seconds"] > 0
    assert rollup["source"] == "cpu"
    assert rollup["passes"] == 1 and set(rollup["on_rollup"]) >= {"single-groupby-1-1-1", "double-groupby-1"}
    refresh = rollup["refresh"]  # an hour appended to compressed data: one rollup row per host and minute
    assert refresh["rollup_rows"] * 6 == refresh["rows_appended"] > 0 and refresh["refresh_s"] > 0
    assert targets["timescaledb"]["queries"].get("rollup") is None
    html = (folder / "report" / "report.html").read_text()
    assert "Compressed after the load" in html and "TimescaleDB (full edition)" in html
    assert "Rollup" in html and "cpu_1m" in html and "Timescale License" in html
    assert f"{refresh['rows_appended']:,} rows appended" in html and "refresh_continuous_aggregate" in html
