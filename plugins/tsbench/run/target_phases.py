"""One target's phases (``tsbench.run.phases``) over one point folder. Every phase reads what
earlier phases wrote and writes its own record atomically (``tsbench.results.folder``), so phases
can run in one process (``run_comparison``) or as separate pipeline tasks (Airflow), and a failed
target never stops the others."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tsbench.measure.load import load
from tsbench.measure.query_runner import PassResult, per_pass, pooled, run_pass
from tsbench.measure.resources import ResourceSampler
from tsbench.measure.rollup import measure_rollup, remove_appended
from tsbench.measure.wire_cache import WireCache
from tsbench.measure.wire_stream import WireStream, wire_bodies
from tsbench.results import model as records
from tsbench.results.folder import PointFolder, TargetFolder
from tsbench.results.record import Record
from tsbench.run.live_phase import live as live_phase
from tsbench.run.phases import ERROR_RECORD, PHASE_NAMES
from tsbench.run.point_setup import new_run_id, prepare_run
from tsbench.runtimes.base import Runtime, Server
from tsbench.runtimes.select import RuntimeOptions, runtime_for
from tsbench.spec import RunSpec
from tsbench.targets.base import Target, TargetError
from tsbench.targets.registry import load_target
from tsbench.timeutil import format_instant
from tsbench.workload.answer_file import AnswerFile
from tsbench.workload.dataset import Dataset
from tsbench.workload.kept import kept_view
from tsbench.workload.queries import read_query_set, write_jsonl
from tsbench.workload.recorded import run_dataset
from tsbench.workload.stored_rows import stored_rows

log = logging.getLogger("tsbench.run")
LIVE_ONLY = "a live-only run (live_only): the live phase alone queries"


class TargetPhases:
    """The phases of one target in one run, wherever its server runs (the spec's runtime unless one
    is given). Each phase is safe to call from a fresh process: it re-attaches to the server
    instance named after the run and target."""

    def __init__(
        self,
        run_dir: Path,
        name: str,
        runtime: Runtime | None = None,
        runtime_options: RuntimeOptions | None = None,
    ):
        """Without ``runtime``, the spec's runtime is built by ``runtime_for`` with
        ``runtime_options`` (credentials for its tools, an engine client factory)."""
        self.run_dir = run_dir
        self.name = name
        self.point = PointFolder(run_dir)
        self.folder: TargetFolder = self.point.target(name)
        self.dir = self.folder.path
        self.dir.mkdir(parents=True, exist_ok=True)
        self.run = self.point.read_run()
        self.spec = RunSpec.parse(**self.run.spec)
        self.runtime = runtime or runtime_for(
            self.spec, options=runtime_options, run=self.run.run_id, handoff=self.dir
        )
        # Unique per comparison; the points of one server group (see tsbench.run.group) share it.
        group = (self.run.point.server_group if self.run.point else "") or run_dir.name
        self.instance = f"{self.run.run_id}-{group}-{name}"
        self.target_type = load_target(name)
        self._dataset: Dataset | None = None
        self._phase, self._started = "", None  # the running phase and when it began (perf_counter)

    @property
    def dataset(self) -> Dataset:
        if self._dataset is None:
            self._dataset = run_dataset(self.run)
        return self._dataset

    @property
    def answers(self) -> Path:
        """The reference answers this target's answers are checked against: over the rows it keeps
        when the data sends rows twice (``workload.kept``)."""
        view = kept_view(self.target_type.capabilities.keeps, self.dataset.copies)
        return self.point.answers_over(view.answers_view)

    def server(self) -> Server:
        return self.runtime.attach(self.instance)

    @contextmanager
    def connect(self) -> Iterator[Target]:
        target = self.target_type(self.server().endpoint(), self.dataset.use_case, self.dataset.tags())
        try:
            yield target
        finally:
            target.close()

    def run_phase(self, name: str) -> Record:
        """Run phase ``name``; its record gets ``wall_s``, the phase's wall time inside the library."""
        self._phase, self._started = name, time.perf_counter()
        try:
            return getattr(self, name)()
        finally:
            self._started = None

    def write(self, record: Record, phase: str = "", **extra: Any) -> Record:
        """The record into its file (``TargetFolder.write``), with ``extra`` keys and ``wall_s`` when
        a phase is running, stamped with ``phase`` (default: the running phase); returns it as
        written."""
        running = self._started is not None
        if running:
            extra["wall_s"] = time.perf_counter() - self._started
        if extra:
            record = type(record).from_json({**record.to_json(), **extra})
        self.folder.write(record, phase or (self._phase if running else ""))
        return record

    # -- phases ---------------------------------------------------------------------------------
    def provision(self) -> Record:
        """Start the server; ``started_at``: when a cloud host's life (and its bill) may begin."""
        started, started_at = time.perf_counter(), format_instant(time.time_ns())
        server = self.runtime.provision(self.target_type, self.instance)
        with self.connect() as target:
            facts = {"version": target.version(), "settings": target.settings()}
            declared = target.capabilities  # the instance's: a flavour may differ (InfluxDB 2)
        where = server.facts()
        return self.write(
            records.Provision(
                runtime=self.runtime.name,
                seconds=time.perf_counter() - started,
                endpoint=server.endpoint().to_json(),
                server_binary=where.pop("server_binary", ""),
                config=where.pop("config", ""),
                placement=where,
                capabilities=records.Capabilities(
                    durable=declared.durable,
                    compression=declared.compression,
                    rollups=declared.rollups,
                    unsupported=dict(declared.unsupported),
                    schema_note=declared.schema_note,
                    row_model_note=declared.row_model_note,
                    keeps=declared.keeps.meaning,
                ),
                started_at=started_at,
                **facts,
            ),
        )

    def prepare(self) -> Record:
        """The schema, and the wire-ready load bodies (encoded here, outside the load's timed
        window, and timed on their own: ``wire``; streamed bodies are encoded during the load)."""
        with self.connect() as target:
            started = time.perf_counter()
            target.create_schema()
            schema_s = time.perf_counter() - started
        wire = self.wire_cache()
        return self.write(records.Prepare(seconds=schema_s, wire=wire.facts() if wire else None))

    def wire_cache(self) -> WireCache | WireStream | None:
        """This target's wire-ready bodies of the dataset in the run's ``wire_bodies`` form: the
        cache (built once, then found there) or a stream (``measure.wire_stream``)."""
        partitions = self.spec.workers if self.spec.hash_workers else 1
        return wire_bodies(
            self.dataset, self.target_type, self.spec.batch_size, partitions, self.spec.streams_wire_bodies
        )

    def load(self) -> Record:
        """``trials`` loads, each into a freshly created schema (so a retry never double-loads);
        the last trial's data stays for the queries."""
        trials = []
        server = self.server()
        wire = self.wire_cache()
        with self.connect() as target:
            expected = self.expected_rows(target)
            kept = {} if expected == self.dataset.rows else expected  # recorded when it differs
            complete = {m: self.dataset.complete_fields(m) for m in self.dataset.measurements}
            for trial in range(self.spec.trials):
                target.create_schema()  # fresh every time: a retried load never double-loads
                with ResourceSampler(server.usage_probe()) as sampler:
                    result = load(
                        target,
                        self.dataset,
                        self.spec.workers,
                        self.spec.batch_size,
                        self.spec.hash_workers,
                        label=f"{self.name} trial {trial + 1}/{self.spec.trials}",
                        wire=wire,
                    )
                counts = {m: target.count_rows(m, complete[m]) for m in self.dataset.measurements}
                trials.append(
                    records.LoadTrial.from_json(
                        {**result.to_json(), "resources": sampler.summary(), "row_counts": counts}
                    )
                )
                if counts != expected:
                    self.write(records.LoadPhase(trials=trials, row_count_ok=False, expected_rows=kept))
                    raise TargetError(
                        f"{self.name}: rows after load {counts} differ from the expected {expected} (the "
                        "dataset's, less rows its data model cannot keep)"
                    )
                log.info("%s: row counts checked, %s equal the expected rows", self.name, counts)
        rates = sorted(t.rows_per_s for t in trials)
        return self.write(
            records.LoadPhase(
                trials=trials,
                row_count_ok=True,
                median_rows_per_s=rates[len(rates) // 2],
                wire=wire.facts() if wire else None,
                expected_rows=kept,
            ),
        )

    def expected_rows(self, target: Target) -> dict[str, int]:
        """Rows per measurement the target must hold after a load: the dataset's, less what its
        data model cannot keep (``Capabilities.stores_fieldless_rows``, ``stores_bare_rows``,
        ``merges_nameless_instants``), and rows sent twice as it keeps them (``keeps``)."""
        model = target.capabilities
        return stored_rows(
            self.dataset,
            model.stores_fieldless_rows,
            model.merges_nameless_instants,
            model.stores_bare_rows,
            model.keeps,
        )

    def _footprint(self, target: Target, server: Server) -> records.FootprintFigures:
        own = target.footprint()
        return records.FootprintFigures(
            bytes=own.bytes, note=own.note, parts=own.parts, disk_bytes=server.disk_bytes()
        )

    def settle(self) -> Record:
        server = self.server()
        compression = None
        with self.connect() as target:
            after_load = self._footprint(target, server)
            if self.spec.compress_after_load and target.capabilities.compresses_after_load:
                done = target.compress()
                compression = records.CompressionFigures(
                    **asdict(done), footprint=self._footprint(target, server)
                )
            time.sleep(self.spec.settle_seconds)
            after_settle = self._footprint(target, server)
        return self.write(
            records.FootprintPhase(
                after_load=after_load,
                compression=compression,
                after_settle=after_settle,
                settle_seconds=self.spec.settle_seconds,
            ),
        )

    def cache_reset(self) -> Record:
        server = self.server()
        if not self.spec.resolved_query_types:
            return self.write(records.CacheReset(note="no queries in this run: no cold restart"))
        if self.spec.live_only:
            return self.write(records.CacheReset(note=LIVE_ONLY + ": no cold restart"))
        if not self.target_type.capabilities.restartable:
            return self.write(
                records.CacheReset(restarted=False, os_cache_dropped=False, note="not restartable")
            )
        return self.write(records.CacheReset.from_json(server.restart_cold()))

    def queries(self) -> Record:
        if self.spec.live_only:
            return self.write(records.QueriesPhase(skipped=LIVE_ONLY + ": no cold or hot pass"))
        queries = read_query_set(self.point.queries)
        expected = AnswerFile(self.answers)
        unsupported = self.target_type.capabilities.unsupported
        runnable = [q for q in queries if q.type not in unsupported]
        server = self.server()
        with self.connect() as target:
            rollup_asked = self.spec.rollup_after_load and target.capabilities.builds_rollups
            if rollup_asked:
                remove_appended(target, self.dataset, self.name)
            rendered = {q.id: target.render(q) for q in runnable}
            write_jsonl(
                self.folder.rendered,
                ({"id": q.id, "type": q.type, "text": rendered[q.id]} for q in runnable),
            )
            passes = []
            with ResourceSampler(server.usage_probe()) as sampler:
                for index in range(1 + self.spec.hot_runs):
                    name = "cold" if index == 0 else f"hot-{index}"
                    passes.append(
                        run_pass(
                            name, runnable, rendered, expected, target.session, self.spec.workers, self.name
                        )
                    )
            rollup, rollup_passes = None, []
            if rollup_asked:
                rollup, rollup_passes = measure_rollup(
                    target, self.dataset, runnable, expected, self.spec.workers, self.spec.hot_runs, self.name
                )
        in_run = {t: r for t, r in unsupported.items() if t in {q.type for q in queries}}
        record = _queries_record(passes, in_run, sampler.summary(), rollup, rollup_passes)
        return self.write(record)

    def live(self) -> Record:
        return self.write(live_phase(self))

    def teardown(self) -> Record:
        """Stop the server and remove its files; safe to call at any point, even twice.
        ``finished_at``: when a cloud host (and its bill) is gone."""
        started = time.perf_counter()
        self.runtime.teardown(self.instance)
        finished_at = format_instant(time.time_ns())
        return self.write(records.Teardown(seconds=time.perf_counter() - started, finished_at=finished_at))

    def fail(self, phase: str, error: BaseException) -> Record:
        log.error("target %s failed in %s: %s", self.name, phase, error)
        return self.write(ERROR_RECORD(failed_phase=phase, error=f"{type(error).__name__}: {error}"))

    def run_all(self) -> bool:
        """Every phase in order; teardown always runs. Returns True when the target succeeded."""
        phase = "provision"
        try:
            for phase in PHASE_NAMES[:-1]:
                self.run_phase(phase)
            return True
        except Exception as error:
            self.fail(phase, error)
            return False
        finally:
            self.run_phase(PHASE_NAMES[-1])


def _queries_record(
    passes: list[PassResult],
    unsupported: Mapping[str, str],
    resources: Any,
    rollup: records.RollupFigures | None = None,
    rollup_passes: Sequence[PassResult] = (),
) -> records.QueriesPhase:
    """The cold pass and the hot passes summed per type, answer checks over every pass, the rollup's
    included (up to 20 mismatches and errors kept as samples), the server's resources over the raw
    passes, and the rollup where one was built."""
    cold, hot = passes[0], passes[1:]
    hot_all = pooled("hot", hot)
    checked = [*passes, *rollup_passes]
    checks = [e for p in checked for e in p.executions]
    mismatches = [
        {"pass": p.name, "query_id": e.query_id, **e.diff}
        for p in checked
        for e in p.executions
        if e.answer_ok is False
    ]
    errors = [
        {"pass": p.name, "query_id": e.query_id, "error": e.error}
        for p in checked
        for e in p.executions
        if e.error
    ]
    return records.QueriesPhase.from_json(
        {
            "cold": cold.stats(),
            "hot": hot_all.stats(),
            "hot_passes": len(hot),
            "hot_qps_by_pass": per_pass(hot, "qps"),
            "hot_mean_ms_by_pass": per_pass(hot, "mean_ms"),
            "unsupported": dict(unsupported),
            "answer_checks": {
                "checked": sum(e.answer_ok is not None for e in checks),
                "agreed": sum(e.answer_ok is True for e in checks),
                "mismatches": len(mismatches),
                "mismatch_samples": mismatches[:20],
            },
            "errors": {"count": len(errors), "samples": errors[:20]},
            "resources": resources,
            **({"rollup": rollup.to_json()} if rollup else {}),
        }
    )


def run_comparison(
    specs: list[RunSpec],
    results_root: Path,
    run_id: str | None = None,
    dataset_cache: Path | None = None,
    runtime: Runtime | None = None,
) -> Path:
    """A whole comparison in this process: every scale (prepare, every target in turn, isolated),
    then ``comparison.json``. Returns the comparison folder."""
    from tsbench.run.comparison import collect_comparison, scale_dir

    folder = results_root / (run_id or new_run_id())
    for spec in specs:
        run_dir = scale_dir(folder, spec.scale)
        prepare_run(spec, run_dir, dataset_cache)
        for name in spec.targets:
            TargetPhases(run_dir, name, runtime).run_all()
    collect_comparison(folder)
    return folder
