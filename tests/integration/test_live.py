"""The live phase's driver on real local servers: ingest and queries at once, open-loop, every
answer checked against the oracle; a server stopped for 2 s shows in the latencies; an offered rate
above capacity shows as lag, not as a lower rate."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest

from tsbench.measure.live import LiveSettings, run_live
from tsbench.report.render import read_inputs, render_document
from tsbench.results.folder import TargetFolder
from tsbench.results.live_records import LivePhase
from tsbench.results.phase_records import CacheReset, LoadPhase, PhaseError, QueriesPhase
from tsbench.run.collect import collect
from tsbench.run.comparison import parse_comparison, scale_dir
from tsbench.run.point_setup import prepare_run
from tsbench.run.target_phases import TargetPhases
from tsbench.runtimes.local import LocalRuntime
from tsbench.targets.base import Target
from tsbench.timeutil import parse_instant
from tsbench.validation import validate_run
from tsbench.workload.dataset import Dataset
from tsbench.workload.live_queries import LiveMix
from tsbench.workload.live_rows import Frontier, LiveRows
from tsbench.workload.oracle import Oracle
from tsbench.workload.queries import DataRange, generate_queries
from tsbench.workload.query_types import types_of

pytestmark = pytest.mark.integration
LOCAL_TARGETS = ("postgres", "timescaledb", "questdb", "influxdb")
# windowed types of every family's kinds; lastpoint stands for the types the mix leaves out
TYPES = (
    "single-groupby-1-1-1",
    "cpu-max-all-1",
    "double-groupby-1",
    "high-cpu-1",
    "groupby-orderby-limit",
    "lastpoint",
)


@contextmanager
def loaded(
    serve: Callable, load_all: Callable, name: str, dataset: Dataset
) -> Iterator[tuple[object, Target]]:
    with serve(name, dataset) as (server, target):
        load_all(target, dataset)
        yield server, target


def live_run(
    target: Target, dataset: Dataset, settings: LiveSettings, at_start: Callable[[], None] = lambda: None
) -> tuple[LivePhase, int]:
    """The driver over ``dataset``'s queries of ``TYPES`` the target answers (``at_start`` called
    right before it starts); the record and the rows written."""
    names = [n for n in TYPES if n in types_of(dataset.use_case.query_families)]
    names = [n for n in names if n not in target.capabilities.unsupported]
    queries = generate_queries(DataRange.of(dataset), names, 4, seed=3)
    oracle = Oracle(dataset)
    try:
        expected = {q.id: oracle.answer(q) for q in queries}
    finally:
        oracle.close()
    seconds = settings.seconds * (1 + len(settings.ramp))
    rows = LiveRows(dataset, settings.batch_rows, int(settings.rows_per_s * seconds) + 1)
    frontier, mix = Frontier(rows), LiveMix(queries, rows.shift_ns, cycles=1)
    at_start()
    record = run_live(target, frontier, mix, expected, settings)
    return record, frontier.acknowledged_rows


@pytest.mark.parametrize("name", LOCAL_TARGETS)
def test_ingest_and_queries_at_once_every_answer_checked(serve, small_dataset: Dataset, name: str) -> None:
    from integration.conftest import load_all

    # 12,000 rows/s for 8 s: 96,000 rows, 22 h of the 12 hosts' data, so that twins' windows close
    # early even when a loaded machine's freshness holds the reads back by seconds
    settings = LiveSettings(
        seconds=8, rows_per_s=12_000, batch_rows=1_000, ingest_workers=2, query_per_s=8, query_workers=2
    )
    with loaded(serve, load_all, name, small_dataset) as (_, target):
        record, written = live_run(target, small_dataset, settings)
        measurement = small_dataset.measurements[0]
        assert target.row_count(measurement) == small_dataset.rows[measurement] + written
    ingest = record.ingest
    assert ingest.errors == 0 and ingest.rows_written == written
    # how much a loaded machine's server takes is measured (bench/), not asserted: every batch is
    # accounted for (sent, or given up at the end), and enough went in for live windows to close
    assert ingest.completed + ingest.unsent == ingest.offered and written == ingest.completed * 1_000, ingest
    assert ingest.latency_ms.p99 > 0 and ingest.histogram
    assert "lastpoint" in record.excluded_types
    assert record.queries, "no query ran"
    for qtype, figures in record.queries.items():
        assert figures.mismatches == 0, (qtype, record.mismatch_samples)
        assert figures.checked == figures.under_ingest.completed + figures.without_ingest.completed
        assert figures.under_ingest.errors == 0 and figures.without_ingest.errors == 0, record.error_samples
        assert (figures.p99_ratio is not None) == (
            min(figures.under_ingest.completed, figures.without_ingest.completed) >= 20
        )
    assert sum(f.on_live_rows for f in record.queries.values()) > 0, "no query read the live rows"
    fresh = record.freshness
    assert fresh is not None and fresh.probes >= 5 and fresh.not_visible == 0 and fresh.errors == 0, fresh
    assert 0 < fresh.latency_ms.p50 <= fresh.latency_ms.max < 10_000


def test_a_server_stopped_for_2s_shows_in_the_open_loop_latencies(serve, small_dataset: Dataset) -> None:
    """SIGSTOP for 2 s in the middle of the phase: every query due during the stall waits for it,
    so the p99 from the due time is ≥ 1.5 s (a closed-loop client sees the stall once per worker)."""
    from integration.conftest import load_all

    settings = LiveSettings(
        seconds=8, rows_per_s=2_000, batch_rows=200, ingest_workers=2, query_per_s=10, query_workers=2
    )
    with loaded(serve, load_all, "postgres", small_dataset) as (server, target):
        stopper = threading.Timer(3.0, _stop_for, args=(server.pid, 2.0))
        record, _ = live_run(target, small_dataset, settings, at_start=stopper.start)
        stopper.join()
    slow = [f.under_ingest.latency_ms.p99 for f in record.queries.values()]
    assert max(slow) >= 1_500, slow
    # ~20 queries fell due in the 2 s (a quarter of each type's): far more than the 2 in flight
    # that a closed-loop client would have timed across the stall
    delayed = [f.under_ingest.latency_ms.p95 >= 500 for f in record.queries.values()]
    assert sum(delayed) >= len(delayed) / 2, [f.under_ingest.latency_ms for f in record.queries.values()]
    assert record.ingest.latency_ms.p99 >= 1_500, record.ingest.latency_ms
    assert all(f.mismatches == 0 for f in record.queries.values()), record.mismatch_samples


def _stop_for(pid: int, seconds: float) -> None:
    """SIGSTOP the server and every process under it (PostgreSQL's backends are each a process
    group of their own), then SIGCONT them."""
    leader = psutil.Process(pid)
    stopped = [leader, *leader.children(recursive=True)]
    for process in stopped:
        process.send_signal(signal.SIGSTOP)
    try:
        time.sleep(seconds)
    finally:
        for process in stopped:
            process.send_signal(signal.SIGCONT)


def test_an_offered_rate_above_capacity_shows_as_lag(serve, small_dataset: Dataset) -> None:
    """10 M rows/s offered for 3 s: the writes fall behind their schedule, and the record says so
    (achieved far below offered, the send lag's p99 over a second)."""
    from integration.conftest import load_all

    settings = LiveSettings(
        seconds=3, rows_per_s=10_000_000, batch_rows=1_000, ingest_workers=2, query_per_s=0, query_workers=1
    )
    with loaded(serve, load_all, "postgres", small_dataset) as (_, target):
        record, written = live_run(target, small_dataset, settings)
    ingest = record.ingest
    assert ingest.achieved_rows_per_s < 0.5 * ingest.offered_rows_per_s, ingest
    assert ingest.lag_ms.p99 >= 1_000, ingest.lag_ms
    assert written == ingest.rows_written > 0


LIVE_RUN = {
    "start": "2016-01-01T00:00:00Z",
    "end": "2016-01-02T00:00:00Z",
    "queries_per_type": 3,
    "hot_runs": 1,
    "query_types": ["single-groupby-1-1-1", "double-groupby-1", "lastpoint"],
    "live_seconds": 6,
    "live_rate": "0.1x",
    "query_rate": 6,
}


def _prepared(tmp_path: Path, dataset_cache: Path, targets: list[str]) -> Path:
    spec = parse_comparison({**LIVE_RUN, "scales": [10], "targets": targets})[0]
    run_dir = scale_dir(tmp_path / "live", 10)
    prepare_run(spec, run_dir, dataset_cache)
    return run_dir


def test_the_live_phase_runs_after_the_queries_and_a_retry_never_doubles_rows(
    runtime: LocalRuntime, tmp_path: Path, dataset_cache: Path
) -> None:
    """The phase's record (the offered rate a fraction of the load's), its rows removed after it,
    and a retried phase that finds an earlier attempt's rows removes them first."""
    run_dir = _prepared(tmp_path, dataset_cache, ["questdb"])
    phases = TargetPhases(run_dir, "questdb", runtime)
    try:
        for name in ("provision", "prepare", "load", "settle", "cache_reset", "queries"):
            phases.run_phase(name)
        first = phases.run_phase("live")
        with phases.connect() as target:
            assert target.row_count("cpu") == 86_400, "the live rows were not removed"
            start = parse_instant(first.live_start)
            rows = LiveRows(phases.dataset, 1_000, 5_000)  # as a failed attempt left them
            writer = target.writer()
            for batch in iter(rows.take, None):
                writer.write(batch.measurement, batch.batch)
            writer.close()
            target.flush()
            assert target.row_count("cpu") == 86_400 + 5_000
        again = phases.run_phase("live")
    finally:
        phases.run_phase("teardown")
    load_rate = TargetFolder(run_dir / "targets" / "questdb", "questdb").read(LoadPhase).median_rows_per_s
    for record in (first, again):
        assert record.rows_removed and record.ingest.errors == 0
        assert record.ingest.offered_rows_per_s == pytest.approx(0.1 * load_rate)
        assert record.ingest.rate_from.startswith("0.1 × the load's median")
        assert set(record.queries) == {"single-groupby-1-1-1", "double-groupby-1"}
        assert all(q.mismatches == 0 and q.checked > 0 for q in record.queries.values())
        assert "lastpoint" in record.excluded_types
    assert start == parse_instant("2016-01-02T00:00:00Z")  # a whole day of history: no gap


def test_a_server_killed_in_its_live_phase_fails_only_its_branch(
    runtime: LocalRuntime, tmp_path: Path, dataset_cache: Path
) -> None:
    run_dir = _prepared(tmp_path, dataset_cache, ["postgres", "questdb"])
    victim = TargetPhases(run_dir, "postgres", runtime)
    outcome: dict[str, bool] = {}
    worker = threading.Thread(target=lambda: outcome.setdefault("ok", victim.run_all()))
    worker.start()
    deadline = time.time() + 300
    while not (victim.dir / "queries.json").exists() and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(2.0)  # inside the 6 s live phase
    runtime.attach(victim.instance).kill()
    worker.join(300)
    assert outcome == {"ok": False}
    error = TargetFolder(victim.dir, "postgres").read(PhaseError)
    assert error is not None and error.failed_phase == "live", error
    assert (victim.dir / "teardown.json").exists() and not (runtime.root / victim.instance).exists()
    assert TargetPhases(run_dir, "questdb", runtime).run_all()
    result = collect(run_dir)
    assert result.targets["postgres"].status == "failed"
    assert result.targets["questdb"].status == "ok" and result.targets["questdb"].live.rows_removed
    html = render_document(read_inputs(run_dir))
    section = html[html.index('live">') :]
    assert "Live: ingest and queries at once" in section and "QuestDB" in section
    assert section.count("<svg") >= 4  # rows/s and slowest query over time, write and query percentiles
    assert "answers checked, 0 wrong" in section


def test_the_ramp_finds_the_highest_rate_within_the_slo(serve, small_dataset: Dataset) -> None:
    """Two steps after the phase, ingest running: a lenient SLO holds at both (sustained: the top
    step); an impossible one at none."""
    from integration.conftest import load_all

    def settings(slo_ms: float) -> LiveSettings:
        return LiveSettings(
            seconds=3,
            rows_per_s=2_000,
            batch_rows=200,
            ingest_workers=2,
            query_per_s=4,
            query_workers=2,
            ramp=(4, 12),
            slo_p99_ms=slo_ms,
        )

    with loaded(serve, load_all, "postgres", small_dataset) as (_, target):
        lenient, _ = live_run(target, small_dataset, settings(60_000))
        strict, _ = live_run(target, small_dataset, settings(0.001))
    assert [s.offered_queries_per_s for s in lenient.ramp] == [4, 12]
    for step in lenient.ramp:  # within the SLO unless the client fell behind (a loaded machine)
        assert step.achieved_queries_per_s > 0 and step.achieved_rows_per_s > 0 and step.completed > 0, step
        assert step.within_slo == (not step.client_behind and not step.errors), step
    held = [s.offered_queries_per_s for s in lenient.ramp]
    first_miss = next((i for i, s in enumerate(lenient.ramp) if not s.within_slo), len(held))
    assert lenient.sustained_queries_per_s == (held[first_miss - 1] if first_miss else None)
    assert not any(s.within_slo for s in strict.ramp) and strict.sustained_queries_per_s is None


def test_a_live_only_run_queries_only_live_and_its_answers_are_validated(
    runtime: LocalRuntime, tmp_path: Path, dataset_cache: Path
) -> None:
    """live_only: the history is loaded once, no cold restart and no closed-loop pass, the live
    phase alone queries; the live suite validates its answers (and fails on a wrong one)."""
    plan = {**LIVE_RUN, "scales": [10], "targets": ["postgres"], "live_only": True, "query_rate": 8}
    spec = parse_comparison(plan)[0]
    run_dir = scale_dir(tmp_path / "live-only", 10)
    prepare_run(spec, run_dir, dataset_cache)
    assert TargetPhases(run_dir, "postgres", runtime).run_all()
    folder = TargetFolder(run_dir / "targets" / "postgres", "postgres")
    queries, reset = folder.read(QueriesPhase), folder.read(CacheReset)
    assert queries is not None and queries.skipped and not queries.cold and not queries.hot
    assert reset is not None and not reset.restarted and "live-only" in reset.note
    live = folder.read(LivePhase)
    assert live is not None and sum(q.checked for q in live.queries.values()) > 0
    collect(run_dir)
    outcome = validate_run(run_dir, [])
    assert outcome.success, outcome.critical_failed
    html = render_document(read_inputs(run_dir))
    assert "Live: ingest and queries at once" in html and "live-only" in html
    wrong = {t: q.model_copy(update={"mismatches": 1}) for t, q in live.queries.items()}
    folder.write(live.model_copy(update={"queries": wrong}))
    collect(run_dir)
    outcome = validate_run(run_dir, [])
    assert not outcome.success
    assert any("postgres: live answers agree with the oracle" in item for item in outcome.critical_failed)
