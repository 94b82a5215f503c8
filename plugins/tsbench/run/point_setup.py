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

from tsbench.machine import client_versions, machine_facts
from tsbench.results.files import copy_file_atomic
from tsbench.results.folder import PointFolder
from tsbench.results.model import DatasetFacts, MachineFacts, PointFacts, PointRun
from tsbench.spec import RunSpec
from tsbench.timeutil import format_instant
from tsbench.workload.answer_file import write_answers
from tsbench.workload.dataset import Dataset, ensure_dataset
from tsbench.workload.oracle import ORACLE_VERSION, Oracle
from tsbench.workload.queries import DataRange, generate_queries, write_query_set
from tsbench.workload.recorded import run_dataset
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
        ),
        machine=MachineFacts.from_json(machine_facts()),
        clients=client_versions(),
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
    reused = _answers_from_cache(dataset, folder)
    if not reused:
        if queries:
            oracle = Oracle(dataset)
            try:
                write_answers(folder.answers, oracle.answers(queries))
            finally:
                oracle.close()
        else:  # a load-only run (iot has no query types yet): nothing to answer
            write_answers(folder.answers, iter(()))
        _answers_to_cache(dataset, folder)
    answered = {"oracle_reused": reused, "oracle_s": time.perf_counter() - started, "queries": len(queries)}
    run = PointRun.from_json({**run.to_json(), **answered})
    folder.write_run(run)
    return run


def _answers_cache_path(dataset: Dataset, folder: PointFolder) -> Path:
    """Reference answers depend only on the dataset and the query set: cache them beside the
    dataset, keyed by the sha256 of queries.jsonl (a nightly run asks the same queries again)."""
    body = ORACLE_VERSION.encode() + b"\n" + folder.queries.read_bytes()
    digest = hashlib.sha256(body).hexdigest()[:24]
    return dataset.path / "answers" / f"{digest}.jsonl"


def _answers_from_cache(dataset: Dataset, folder: PointFolder) -> bool:
    cached = _answers_cache_path(dataset, folder)
    if not cached.is_file():
        return False
    copy_file_atomic(cached, folder.answers)
    return True


def _answers_to_cache(dataset: Dataset, folder: PointFolder) -> None:
    try:
        copy_file_atomic(folder.answers, _answers_cache_path(dataset, folder))
    except OSError as error:  # a read-only dataset cache only costs the next run the oracle again
        log.warning("could not cache reference answers: %s", error)


def prepare_run(
    spec: RunSpec, run_dir: Path, dataset_cache: Path | None = None, point: PointFacts | None = None
) -> PointRun:
    """Dataset, query set and reference answers for one point."""
    prepare_dataset(spec, run_dir, dataset_cache, point)
    return prepare_oracle(run_dir)
