"""Before the branches: a run's id, its dataset (generated or reused) and its query set with the
oracle's reference answers, written into the scale's run folder (``run.json``, ``queries.jsonl``,
``answers.jsonl``). Reference answers are cached beside the dataset, keyed by the oracle version and
the query set's sha256."""

from __future__ import annotations

import hashlib
import logging
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from tsbench.machine import client_versions, machine_facts, source_commit
from tsbench.machine_state import measure_machine_state
from tsbench.results.files import copy_file_atomic
from tsbench.results.folder import PointFolder
from tsbench.results.model import DatasetFacts, MachineFacts, MachineState, PointFacts, PointRun
from tsbench.spec import RunSpec
from tsbench.targets.registry import load_target
from tsbench.timeutil import format_instant
from tsbench.workload.answer_file import write_answers
from tsbench.workload.dataset import Dataset, ensure_dataset
from tsbench.workload.extract import planned_extract
from tsbench.workload.kept import Keeps, kept_view
from tsbench.workload.oracle import ORACLE_VERSION, Oracle
from tsbench.workload.queries import DataRange, LogicalQuery, generate_queries, write_query_set
from tsbench.workload.recorded import run_dataset
from tsbench.workload.streamed_dataset import ensure_streamed_dataset
from tsbench.workload.usecases import get_use_case

log = logging.getLogger("tsbench.run")


def new_run_id(now: datetime | None = None) -> str:
    moment = now or datetime.now(UTC)
    return f"{moment:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"


def prepare_dataset(
    spec: RunSpec, run_dir: Path, dataset_cache: Path | None = None, point: PointFacts | None = None
) -> PointRun:
    """Generate (or reuse) the dataset; writes ``run.json`` with the spec, dataset and machine facts
    and which point of the comparison the folder is (default: a plain comparison's scale, with its
    own server)."""
    folder = PointFolder(run_dir)
    started = time.perf_counter()
    if spec.streams_dataset:  # its extract keeps the rows its queries read
        dataset, reused = ensure_streamed_dataset(spec.dataset, planned_extract(spec)[0], dataset_cache)
    else:
        dataset, reused = ensure_dataset(spec.dataset, dataset_cache)
    run = PointRun(
        format="tsbench-run/1",
        run_id=folder.run_id,  # the comparison's id; this folder is one point of it
        scale_dir=folder.name,
        created_at=format_instant(time.time_ns()),
        spec=spec.model_dump(),
        dataset=DatasetFacts(
            id=dataset.id,
            path=str(dataset.path),
            reused=reused,
            generate_s=time.perf_counter() - started,
            rows=dataset.rows,
            rows_total=dataset.manifest.rows_total,
            files_sha256=[f.sha256 for f in dataset.manifest.files],
            generator_version=dataset.manifest.generator_version,
            kept_rows=None if dataset.extract is None else sum(dataset.extract.rows.values()),
        ),
        machine=MachineFacts.from_json(machine_facts()),
        machine_state=MachineState.from_json(measure_machine_state()),
        clients=client_versions(),
        tsbench_commit=source_commit(),
        point=point or own_point(spec, run_dir),
    )
    folder.write_run(run)
    return run


def own_point(spec: RunSpec, run_dir: Path) -> PointFacts:
    """A plain comparison's point: the folder's scale, no sweep axis, its own server."""
    return PointFacts(
        name=run_dir.name,
        axes={},
        label=f"{spec.scale:,} {get_use_case(spec.use_case).entities}",
        server_group=run_dir.name,
    )


def prepare_oracle(run_dir: Path) -> PointRun:
    """The logical query set and the oracle's reference answers; adds their facts to ``run.json``."""
    folder = PointFolder(run_dir)
    run = folder.read_run()
    spec = RunSpec.parse(**run.spec)
    dataset = run_dataset(run)
    queries = generate_queries(
        DataRange.of(dataset), spec.resolved_query_types, spec.queries_per_type, spec.effective_query_seed
    )
    write_query_set(folder.queries, queries)
    started = time.perf_counter()
    reused = True
    for view in answer_views(spec, dataset):
        reused &= _answer(dataset, folder, queries, view)
    answered = {"oracle_reused": reused, "oracle_s": time.perf_counter() - started, "queries": len(queries)}
    run = PointRun.from_json({**run.to_json(), **answered})
    folder.write_run(run)
    return run


def answer_views(spec: RunSpec, dataset: Dataset) -> list[Keeps]:
    """The views of the rows the run's targets are checked against (one, all rows, unless the
    data sends rows twice and the targets keep them differently: ``workload.kept``)."""
    views = {kept_view(load_target(name).capabilities.keeps, dataset.copies) for name in spec.targets}
    return sorted(views, key=lambda view: view.answers_view)


def _answer(dataset: Dataset, folder: PointFolder, queries: list[LogicalQuery], view: Keeps) -> bool:
    """Write the reference answers over ``view`` (from the cache when there); whether reused."""
    path = folder.answers_over(view.answers_view)
    cached = _answers_cache_path(dataset, folder, view)
    if _answers_from_cache(cached, path):
        return True
    if queries:
        oracle = Oracle(dataset, keeps=view)
        try:
            write_answers(path, oracle.streamed_answers(queries))
        finally:
            oracle.close()
    else:  # a load-only run (iot has no query types yet): nothing to answer
        write_answers(path, iter(()))
    _answers_to_cache(path, cached)
    return False


def _answers_cache_path(dataset: Dataset, folder: PointFolder, view: Keeps) -> Path:
    """Reference answers depend only on the dataset, the view of its rows and the query set: cache
    them beside the dataset, keyed by the sha256 of queries.jsonl (a nightly run asks the same
    queries again) and named as the view's answers."""
    body = ORACLE_VERSION.encode() + b"\n" + folder.queries.read_bytes()
    digest = hashlib.sha256(body).hexdigest()[:24]
    name = f"{digest}-{view.answers_view}" if view.answers_view else digest
    return dataset.path / "answers" / f"{name}.jsonl"


def _answers_from_cache(cached: Path, answers: Path) -> bool:
    if not cached.is_file():
        return False
    copy_file_atomic(cached, answers)
    return True


def _answers_to_cache(answers: Path, cached: Path) -> None:
    try:
        copy_file_atomic(answers, cached)
    except OSError as error:  # a read-only dataset cache only costs the next run the oracle again
        log.warning("could not cache reference answers: %s", error)


def prepare_run(
    spec: RunSpec, run_dir: Path, dataset_cache: Path | None = None, point: PointFacts | None = None
) -> PointRun:
    """Dataset, query set and reference answers for one point."""
    prepare_dataset(spec, run_dir, dataset_cache, point)
    return prepare_oracle(run_dir)
