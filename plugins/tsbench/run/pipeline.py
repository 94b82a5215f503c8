"""The pipeline, declared once for the Airflow DAG and the command line: ``STEPS`` lists every step
in order — validate_params, per point (dataset, oracle; a point per scale, or per point of a sweep),
per branch (server group × target, ``tsbench.run.group``: acquire_machine, then the runner's
phases, teardown last), then collect → validate → report → publish → verdict.
The DAG factory (``tsbench.airflow.comparison_dag``) makes one task per step from it and ``python -m
tsbench run`` (``tsbench.run.local``) walks it in the same order. The post-run steps live here.

Where things go: runs under ``$TSBENCH_RESULTS`` (default ``reports/out/runs``), with the run
index ``index.json`` there; the local publication is ``reports/out/index.html`` (every run, newest
first, and what each latest folder holds) and ``reports/out/<latest folder>/`` (the last run
published under that folder whose validation passed: ``latest/`` for the nightly, e.g.
``latest-tsbench_comparison/`` for on-demand runs, so one never replaces the other). S3
publication happens when a bucket is configured (``TSBENCH_S3_BUCKET``, ``TSBENCH_S3_PREFIX``;
endpoint, region and credentials from the standard AWS environment, or from the Airflow connection
``tsbench_s3``).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from tsbench.results.documents import StoredResult, read_comparison, read_validation
from tsbench.results.files import read_json, write_bytes_atomic
from tsbench.results.folder import CHANGES, COMPARISON, VALIDATION, RunFolder, is_answers_file
from tsbench.results.model import ValidationSummary
from tsbench.results.publish import S3Settings
from tsbench.results.store import RunStore, earlier_results, spec_match
from tsbench.results.workspace import WHOLE, Part
from tsbench.run.comparison import collect_comparison, plan_comparison, write_plan
from tsbench.run.phases import BY_NAME, PHASE_NAMES, phase_steps, step_name
from tsbench.studies import Study
from tsbench.sweep.plan import SweepLimits
from tsbench.sweep.plan_text import fit_lines, stage_lines

log = logging.getLogger("tsbench.run.pipeline")
REPO = Path(__file__).resolve().parents[3]  # plugins/tsbench/run/pipeline.py → the repository
HISTORY_RUNS = 10


def _timed(step: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Record the step's wall time (s) in ``<folder>/steps.json`` (for the overhead benchmark)."""

    def wrap(function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def timed(folder: Path, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(folder, *args, **kwargs)
            finally:
                path = RunFolder(Path(folder)).steps
                steps = read_json(path) if path.is_file() else {}
                steps[step] = time.perf_counter() - started
                write_bytes_atomic(path, json.dumps(steps, indent=2).encode())

        return timed

    return wrap


def results_root() -> Path:
    return Path(os.environ.get("TSBENCH_RESULTS") or REPO / "reports" / "out" / "runs")


def run_store_url() -> str:
    """Where a run's tasks hand each other files (``results.workspace``): ``$TSBENCH_RUN_STORE``
    (``s3://bucket/prefix``, or a folder that every worker mounts), else the results root."""
    return (os.environ.get("TSBENCH_RUN_STORE") or str(results_root())).rstrip("/")


def publish_root() -> Path:
    """Where the local publication (index.html, latest/) goes: the parent of the results root."""
    return results_root().parent


def store() -> RunStore:
    return RunStore(results_root())


def _history(folder: Path) -> list[StoredResult]:
    """Earlier results of the same use case, scale and targets (one list over every scale)."""
    return earlier_results(store(), read_comparison(folder), spec_match, HISTORY_RUNS)


@_timed("collect")
def collect_run(folder: Path) -> str:
    """result.json per point, comparison.json, and the run recorded in the run index."""
    comparison = collect_comparison(folder)
    store().record(folder)
    log.info(
        "collected %s: scales %s, failed targets: %s",
        folder.name,
        comparison.scales,
        ", ".join(comparison.failed_targets) or "none",
    )
    return str(folder)


@_timed("validate")
def validate_run(folder: Path) -> dict[str, Any]:
    """great_expectations suites; returns a small summary's JSON (the step's outcome, which the
    DAG shows as its XCom; validation.json has everything)."""
    from tsbench.validation import validate_run as validate

    summary = ValidationSummary.of(validate(folder, _history(folder)))
    store().record(folder)
    log.info("validation: %s", summary)
    return summary.to_json()


@_timed("report")
def render_run_report(folder: Path) -> str:
    """changes.json (``tsbench.changes.history.detect_folder_changes``), then report.html and
    report.pdf. A detection that fails is logged with its reason and the report says it did not
    run: it never costs the report."""
    from tsbench.changes.history import detect_folder_changes
    from tsbench.report import render_report

    try:
        detect_folder_changes(folder, store())
    except Exception:
        log.exception("change detection failed; the report is rendered without it")
    files = render_report(folder, _history(folder))
    store().record(folder)
    log.info("report: %s and %s", files.html, files.pdf)
    return str(files.html)


def _replace_latest(root: Path, folder: Path, latest_folder: str) -> None:
    """``root/<latest_folder>`` becomes a copy of the run's report files, comparison.json,
    validation.json and ``RUN`` (its name), swapped in by renames: never half-written."""
    staging = root / f".{latest_folder}-{uuid.uuid4().hex[:8]}"
    shutil.copytree(RunFolder(folder).report, staging)
    for name in (COMPARISON, VALIDATION, CHANGES):
        if (folder / name).is_file():
            shutil.copy2(folder / name, staging / name)
    (staging / "RUN").write_text(folder.name + "\n")
    latest, old = root / latest_folder, root / f".{latest_folder}-old-{uuid.uuid4().hex[:8]}"
    if latest.exists():
        latest.rename(old)
    staging.rename(latest)
    shutil.rmtree(old, ignore_errors=True)


def _publish_locally(folder: Path, latest_folder: str = "latest") -> dict[str, Any]:
    """``<latest_folder>/`` replaced when validation passed (the other latest folders are left
    alone); the results explorer, then ``index.html`` (every run, each latest folder's) rewritten."""
    from tsbench.explorer.page import write_explorer
    from tsbench.results.publish import check_latest_folder, local_latest, render_index_html, run_links

    check_latest_folder(latest_folder)
    root = publish_root()
    validation = read_validation(folder)
    passed = validation is not None and validation.success is True
    if passed:
        _replace_latest(root, folder, latest_folder)
    relative = os.path.relpath(results_root(), root)
    runs = [run.with_(links=run_links(f"{relative}/{run.run_id}/", run)) for run in store().index()]
    explorer = write_explorer(root, runs, results_root())
    page = render_index_html(runs, local_latest(root), explorer=explorer.name)
    write_bytes_atomic(root / "index.html", page.encode())
    return {"latest_folder": latest_folder, "latest_replaced": passed, "index": str(root / "index.html")}


def s3_settings() -> S3Settings | None:
    """S3 publication settings from the environment, or None when no bucket is configured."""
    bucket = os.environ.get("TSBENCH_S3_BUCKET")
    if not bucket:
        return None
    return S3Settings(
        bucket=bucket,
        prefix=os.environ.get("TSBENCH_S3_PREFIX", ""),
        endpoint_url=os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL"),
        create_bucket=os.environ.get("TSBENCH_S3_CREATE_BUCKET", "") == "1",
    )


@_timed("publish")
def publish_run(folder: Path, s3: S3Settings | None = None, latest_folder: str = "latest") -> dict[str, Any]:
    """Local publication always; S3 when ``s3`` (or the environment) names a bucket. A passing run
    replaces only ``latest_folder`` (locally and on S3): ``latest`` is the nightly's, ad-hoc runs
    use their own (e.g. ``latest-tsbench_comparison``). ValueError, before anything is published,
    when ``latest_folder`` is not one path component starting with ``latest``."""
    from tsbench.explorer.page import explorer_pages
    from tsbench.results import publish

    publish.check_latest_folder(latest_folder)
    outcome: dict[str, Any] = {"local": _publish_locally(folder, latest_folder)}
    settings = s3 if s3 is not None else s3_settings()
    if settings:
        bucket, prefix = settings.bucket, settings.prefix
        options = {**settings.client_options(), "pages": explorer_pages()}  # + the results explorer
        done = publish.publish_run(folder, bucket, prefix, latest_folder=latest_folder, **options)
        outcome["s3"] = {"bucket": bucket, "prefix": prefix, **{k: v for k, v in done.items() if k != "keys"}}
        log.info("published to s3://%s/%s", bucket, prefix)
    else:
        outcome["s3"] = "skipped: no bucket configured (TSBENCH_S3_BUCKET or connection tsbench_s3)"
        log.info("S3 publication %s", outcome["s3"])
    return outcome


def verdict_of(folder: Path) -> list[str]:
    """Reasons the comparison counts as failed (empty when it passed)."""
    comparison = read_comparison(folder)
    problems = [f"target {name} failed" for name in comparison.failed_targets]
    validation = read_validation(folder)
    if validation is not None:
        problems += [f"critical expectation failed: {name}" for name in validation.critical_failed]
    else:
        problems.append("not validated")
    return problems


class ComparisonFailed(RuntimeError):
    """The verdict: a target or a critical expectation failed (``problems`` says which)."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("comparison finished with failures: " + "; ".join(problems))


def judge_run(folder: Path) -> str:
    """The verdict, after publishing: ComparisonFailed when a target or a critical expectation failed."""
    problems = verdict_of(folder)
    if problems:
        raise ComparisonFailed(problems)
    return "passed"


class PlannedRun(BaseModel):
    """What the planning step hands the run's later steps (the DAG's XCom, as JSON): the run
    folder (a local folder or a run store URL), its scales and targets, the points' names in order
    and the server groups (lists of point names)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    folder: str
    scales: list[int]
    targets: list[str]
    points: list[str]
    groups: list[list[str]]


class PointItem(BaseModel):
    """One point of a planned run as its steps receive it (the DAG's XCom, as JSON): the run
    folder (a local folder or a run store URL) and the point's folder name."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    folder: str
    point: str


def plan_run(
    params: dict[str, Any], folder: Path, limits: SweepLimits | None = None, study: Study | None = None
) -> PlannedRun:
    """Check every parameter (``plan_comparison``: SpecError naming every bad field, and a sweep
    over its limits, before any work), then write the folder's ``plan.json`` (with the ``study``
    the run is an instance of, if any: its report checks the study's claims)."""
    sweep = plan_comparison(params, limits)
    plan = write_plan(folder, sweep, study)
    log.info("plan: %s, %s point(s) × targets %s", folder, len(sweep.points), plan.targets)
    log.info("plan: %s", plan.summary)
    for line in [*stage_lines(sweep.estimate), *fit_lines(sweep.estimate)]:
        log.info("plan: %s", line)  # each stage's estimate and where it came from (docs/planning.md)
    return PlannedRun(
        folder=str(folder),
        scales=plan.scales,
        targets=plan.targets,
        points=[point.name for point in plan.points],
        groups=plan.server_groups(),
    )


@dataclass(frozen=True)
class Publication:
    """Where ``publish`` puts a run: ``latest_folder`` (``latest`` is the nightly's) and the S3
    settings (None: from the environment, see ``s3_settings``)."""

    latest_folder: str = "latest"
    s3: S3Settings | None = None


Scope = Literal["run", "point", "branch", "post"]


@dataclass(frozen=True)
class Step:
    """One step of the pipeline. ``scope``: once before the branches (``run``), once per point,
    once per branch (server group × target), or once after every branch (``post``: ``call(folder,
    publication)`` runs it). ``setup``: what a branch's teardown undoes (it runs when they ran);
    ``teardown``: runs always, also after a failure. ``reads_answers``: a post step that opens the
    reference answers (``post_part``). ``phases``: the runner's phases a branch step runs, in
    order (``phases.phase_steps``; none for ``acquire_machine``)."""

    name: str
    scope: Scope
    summary: str
    call: Callable[[Path, Publication], Any] | None = None
    setup: bool = False
    teardown: bool = False
    reads_answers: bool = False
    phases: tuple[str, ...] = ()


def post_part(step: Step) -> Part:
    """What a post step opens of the run folder in the run store: all of it, but the reference
    answers only when it reads them (publish uploads them; at 4,000 hosts they are over a GB per
    point)."""
    return WHOLE if step.reads_answers else Part(leaves_out=is_answers_file)


STEPS: tuple[Step, ...] = (
    Step(
        "validate_params",
        "run",
        "Check every parameter (RunSpec's messages) before any work; write plan.json.",
    ),
    Step(
        "dataset",
        "point",
        "Generate the dataset of one point, or reuse it from the cache; then the logical query set "
        "and its reference answers (DuckDB over the dataset, on the worker that holds it).",
    ),
    Step(
        "acquire_machine",
        "branch",
        "Wait until no other branch measures on this machine, then take its lease (given back by "
        "this branch's teardown). Waiting is logged every minute.",
        setup=True,
    ),
    *(
        Step(
            step_name(group),
            "branch",
            " ".join(BY_NAME[name].summary for name in group),
            setup=step_name(group) == PHASE_NAMES[0],
            teardown=step_name(group) == PHASE_NAMES[-1],
            phases=group,
        )
        for group in phase_steps()
    ),
    Step(
        "collect",
        "post",
        "Merge every phase file into result.json per point and comparison.json; record history.",
        lambda folder, _: collect_run(folder),
    ),
    Step(
        "validate",
        "post",
        "great_expectations gates: dataset, load, queries (critical), history (warning).",
        lambda folder, _: validate_run(folder),
    ),
    Step(
        "report",
        "post",
        "Change points in the history of every figure (changes.json), then the HTML + PDF report (one "
        "template), with trends over earlier runs and the changes marked.",
        lambda folder, _: render_run_report(folder),
    ),
    Step(
        "publish",
        "post",
        "Local reports/ and, when configured, S3 (run folder, latest folder, index).",
        lambda folder, where: publish_run(folder, where.s3, latest_folder=where.latest_folder),
        reads_answers=True,  # the published run holds its reference answers
    ),
    Step(
        "verdict",
        "post",
        "Fail the run (after publishing) when a target or a critical expectation failed.",
        lambda folder, _: judge_run(folder),
    ),
)


def steps(scope: Scope) -> tuple[Step, ...]:
    """The steps of one scope, in pipeline order."""
    return tuple(step for step in STEPS if step.scope == scope)
