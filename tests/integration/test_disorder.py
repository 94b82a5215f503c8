"""Late, out-of-order, duplicate and updated rows on the real servers: each target keeps what it
declares (``Capabilities.keeps``), its row count is the oracle's count of that view, and every
query type's answer equals the oracle's over that view, in the bulk load and in the live phase.
The two views differ on this data, so a target keeping other than it declares fails."""

from __future__ import annotations

import re
import time
from dataclasses import replace
from pathlib import Path

import pytest
from builds import wait_for_build
from conftest import check_all_queries, load_all
from disorder_shape import DISORDER

from tsbench.measure.live import LiveSettings, run_live
from tsbench.results.folder import PointFolder
from tsbench.run.collect import collect
from tsbench.run.comparison import parse_comparison, scale_dir
from tsbench.run.point_setup import prepare_run
from tsbench.run.target_phases import TargetPhases
from tsbench.runtimes.local import LocalRuntime
from tsbench.spec import DatasetSpec
from tsbench.targets.base import send_encoded
from tsbench.targets.questdb.target import table_ddl
from tsbench.workload.answers import Answer, compare
from tsbench.workload.dataset import Dataset, ensure_dataset
from tsbench.workload.kept import Keeps, kept_view
from tsbench.workload.live_queries import LiveMix
from tsbench.workload.live_rows import Frontier, LiveRows
from tsbench.workload.oracle import Oracle
from tsbench.workload.queries import DataRange, generate_queries
from tsbench.workload.stored_rows import stored_rows

pytestmark = pytest.mark.integration
KEEPS = {
    "postgres": Keeps.ALL,
    "timescaledb": Keeps.ALL,
    "questdb": Keeps.ALL,
    "influxdb": Keeps.LAST,
    "griddb": Keeps.LAST,
}
LIVE_TYPES = ("single-groupby-1-1-1", "cpu-max-all-1", "high-cpu-1")


@pytest.fixture(scope="module")
def disordered(dataset_cache: Path) -> Dataset:
    """cpu-only, 12 hosts × 1 day at 10 s, 10 % late (mean 1 min, at most 10 min), 5 % sent twice,
    5 % sent again halved."""
    dataset, _ = ensure_dataset(DatasetSpec.parse(scale=12, seed=7, **DISORDER), dataset_cache)
    return dataset


def test_the_views_differ_on_this_data(disordered: Dataset) -> None:
    """Keeping matters here: the counts and a max query's answers differ between the views."""
    counts = {keeps: stored_rows(disordered, keeps=keeps)["cpu"] for keeps in Keeps}
    assert counts[Keeps.LAST] == 12 * 8_640 < counts[Keeps.DISTINCT] < counts[Keeps.ALL], counts
    query = generate_queries(DataRange.of(disordered), ["cpu-max-all-8"], 1, seed=1)[0]
    answers = {}
    for keeps in Keeps:
        oracle = Oracle(disordered, keeps=keeps)
        answers[keeps] = oracle.answer(query)
        oracle.close()
    assert not compare(answers[Keeps.ALL], answers[Keeps.LAST]).ok
    assert disordered.lateness_ns > 0 and disordered.copies


@pytest.mark.parametrize("name", sorted(KEEPS))
def test_each_target_keeps_what_it_declares(serve, disordered: Dataset, name: str) -> None:
    if name == "griddb":
        wait_for_build("TSBENCH_GRIDDB_BUILD_STATUS", "GridDB 5.9.0 (targets/griddb/build.sh)")
    with serve(name, disordered) as (_, target):
        assert target.capabilities.keeps is KEEPS[name]
        assert load_all(target, disordered) == disordered.rows["cpu"]
        caps = target.capabilities
        expected = stored_rows(
            disordered,
            caps.stores_fieldless_rows,
            caps.merges_nameless_instants,
            caps.stores_bare_rows,
            caps.keeps,
        )
        assert target.row_count("cpu") == expected["cpu"]
        nonempty = check_all_queries(target, disordered, per_type=2, seed=4)
        assert sum(nonempty.values()) > 0
        if name in ("postgres", "influxdb"):  # one target of each keeping: the live phase too
            _live_answers_checked(target, disordered)


def _live_answers_checked(target, dataset: Dataset) -> None:
    """A live phase sending the disordered rows in their arrival order: the queries read windows
    closed by the lateness bound, and every answer equals the oracle's over the target's view."""
    queries = generate_queries(DataRange.of(dataset), list(LIVE_TYPES), 4, seed=3)
    oracle = Oracle(dataset, keeps=kept_view(target.capabilities.keeps, dataset.copies))
    try:
        expected = {q.id: oracle.answer(q) for q in queries}
    finally:
        oracle.close()
    # 10 s, not 6: on a machine running four test workers, InfluxDB's first live windows closed (the
    # lateness bound, then a freshness probe's confirmation) only after every query had been sent
    # (CI at 1ace7a5: no query read the live rows; it passed on this machine idle and beside 3 busy loops)
    settings = LiveSettings(
        seconds=10, rows_per_s=15_000, batch_rows=1_000, ingest_workers=2, query_per_s=8, query_workers=2
    )
    rows = LiveRows(dataset, settings.batch_rows, int(settings.rows_per_s * settings.seconds) + 1)
    assert rows.in_arrival_order
    frontier, mix = Frontier(rows), LiveMix(queries, rows.shift_ns, cycles=1)
    record = run_live(target, frontier, mix, expected, settings)
    assert record.ingest.errors == 0
    for qtype, figures in record.queries.items():
        assert figures.mismatches == 0, (qtype, record.mismatch_samples)
    live_reads = sum(f.on_live_rows for f in record.queries.values())
    assert live_reads > 0, ("no query read the live rows", record.freshness)


def test_questdb_with_dedup_keys_keeps_the_last_write(serve, disordered: Dataset) -> None:
    """QuestDB's DEDUP UPSERT KEYS (off by default: its README says why) keep the last write of a
    key: the disordered rows loaded into a table with them hold the LAST view's rows and answers."""
    with serve("questdb", disordered) as (_, target):
        target.create_schema()
        scratch = replace(target.use_case.measurement("cpu"), name="cpu_dedup")
        target._admin(table_ddl(scratch, target.use_case, dedup=True))
        scratch_case = replace(target.use_case, measurements=(scratch,))
        wire = type(target).wire_format(scratch_case, disordered.tags())
        writer = target.writer()
        try:
            for batch in disordered.iter_batches("cpu", 5_000):
                send_encoded(writer, wire, scratch.name, batch)
        finally:
            writer.close()
        deadline = time.monotonic() + 60
        while any(writer < sequencer for _, _, writer, sequencer, _ in target.wal_state([scratch.name])):
            assert time.monotonic() < deadline, "the WAL apply of the dedup table did not catch up"
            time.sleep(0.05)
        assert target._admin(f"SELECT count() FROM {scratch.name}") == [(12 * 8_640,)]
        last, session = Oracle(disordered, keeps=Keeps.LAST), target.session()
        try:
            for query in generate_queries(DataRange.of(disordered), ["cpu-max-all-8"], 2, seed=2):
                text = re.sub(r"\bcpu\b", scratch.name, target.render(query))
                assert scratch.name in text, text
                actual = Answer.build(query.query_type, session.execute(text), query.fields)
                assert compare(last.answer(query), actual).ok, text
        finally:
            session.close()
            last.close()


def test_a_run_checks_each_target_against_the_rows_it_keeps(
    runtime: LocalRuntime, tmp_path: Path, dataset_cache: Path
) -> None:
    """Through the run's phases (bulk load, queries, live phase): PostgreSQL (every row) and
    InfluxDB (the last write) each checked against its own view's count and answers."""
    plan = {
        **DISORDER,
        "scales": [10],
        "targets": ["postgres", "influxdb"],
        "hash_workers": True,  # InfluxDB keeps the last write: each host's rows on one connection
        "queries_per_type": 2,
        "hot_runs": 1,
        "query_types": ["single-groupby-1-1-1", "cpu-max-all-1", "high-cpu-1", "lastpoint"],
        "live_seconds": 5,
        "live_rate": "5000",
        "query_rate": 6,
    }
    spec = parse_comparison(plan)[0]
    run_dir = scale_dir(tmp_path / "disorder", 10)
    prepare_run(spec, run_dir, dataset_cache)
    for name in ("postgres", "influxdb"):
        assert TargetPhases(run_dir, name, runtime).run_all(), name
    point = PointFolder(run_dir)
    assert point.answers.is_file() and point.answers_over(Keeps.LAST.answers_view).is_file()
    assert len(point.read_run().tsbench_commit.split(" ")[0]) == 40  # the run names tsbench's commit
    result = collect(run_dir)
    # PostgreSQL holds every row of the files (recorded as no difference), InfluxDB one per key
    assert result.targets["postgres"].load.expected_rows == {}
    assert result.targets["influxdb"].load.expected_rows == {"cpu": 10 * 8_640}
    for name in ("postgres", "influxdb"):
        body = result.targets[name]
        assert body.status == "ok" and body.load.row_count_ok
        checks = body.queries.answer_checks
        assert checks.checked > 0 and checks.mismatches == 0 and checks.agreed == checks.checked, name
        assert all(q.mismatches == 0 for q in body.live.queries.values()), name
        assert body.provision.capabilities.keeps == KEEPS[name].meaning
