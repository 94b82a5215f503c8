"""A run's end, read from its run folder into a ``RunSummary``: what a notification says.

The outcome, in this order of precedence: the run was **rejected** (``rejected.json``: the task that
refused it and why), it **failed** before its results were collected (no ``comparison.json``: the
task the orchestrator names), **failed targets** (each with its point, failed phase and reason),
**failed validation** (the critical expectations that failed), **failed** after validation (a later
task: the report, publication), else **passed**. Key figures: per point, each target's load rows/s
and the hot median latency and queries/s of the first few query types. Changes: ``changes.json``'s
recent change points, or None when change detection did not run. Every text taken from the run
goes through the caller's redactor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from tsbench.results.documents import results_of
from tsbench.results.folder import (
    CHANGES,
    COMPARISON,
    PLAN,
    REJECTED,
    REPORT,
    REPORT_PDF,
    VALIDATION,
    RunFolder,
)
from tsbench.results.model import Comparison, RunResult, TargetResult
from tsbench.results.workspace import Part

HEADLINE_QUERY_TYPES = 3  # query types per point in the key figures
MOST_POINTS = 4  # points with key figures (a sweep's others: in the report)
MOST_CHANGES = 10  # recent changes listed
REASON_CHARS = 600  # a failure's reason is cut after this many characters
REASON_LINES = 8
# What a notice reads of a run folder in the run store (a task's workspace pulls only these)
NOTICE_PART = Part(paths=(PLAN, COMPARISON, VALIDATION, CHANGES, REJECTED, f"{REPORT}/{REPORT_PDF}"))


class Outcome(StrEnum):
    PASSED = "passed"
    FAILED_VALIDATION = "failed validation"
    FAILED_TARGETS = "failed targets"
    REJECTED = "run rejected"
    FAILED = "failed"


@dataclass(frozen=True)
class RunEnd:
    """How the orchestrator saw the run end: its pipeline (the DAG id), its run id, whether it
    succeeded, the task that failed last (empty: none known) and its own reason (Airflow's
    ``success``, ``task_failure`` …)."""

    pipeline: str
    run_id: str
    succeeded: bool
    failed_task: str = ""
    reason: str = ""


@dataclass(frozen=True)
class Failure:
    """What failed (``where``: a target at a point, ``the run``, ``validation``), in which phase
    or task, and why (redacted, at most ``REASON_LINES`` lines of ``REASON_CHARS`` characters)."""

    where: str
    phase: str
    reason: str


@dataclass(frozen=True)
class QueryFigure:
    """One query type's hot passes at one target: median latency (ms) and queries/s."""

    query_type: str
    p50_ms: float | None
    qps: float | None


@dataclass(frozen=True)
class TargetFigures:
    """One target at one point: its status, load rows/s (median trial) and headline queries."""

    target: str
    status: str
    load_rows_per_s: float | None
    queries: tuple[QueryFigure, ...]


@dataclass(frozen=True)
class PointFigures:
    """One point's key figures (``label``: its scale or sweep point; ``query_types``: the headline
    types, the columns of ``targets``' queries)."""

    label: str
    query_types: tuple[str, ...]
    targets: tuple[TargetFigures, ...]


@dataclass(frozen=True)
class RunSummary:
    """What a notification says of a run. ``run``: its folder's name (empty: the run made none);
    ``validation``: ``passed``, ``failed`` or ``not validated``; ``changes``: the recent changes'
    summaries (None: change detection did not run), ``changes_total``: every change found;
    ``report``: the PDF to attach (None: no report was made); ``location``: where the report is
    published; ``more_points``: points left out of the key figures."""

    end: RunEnd
    run: str
    outcome: Outcome
    failures: tuple[Failure, ...]
    points: tuple[PointFigures, ...]
    more_points: int
    validation: str
    changes: tuple[str, ...] | None
    changes_total: int
    report: Path | None
    location: str

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASSED


def _short(text: str, redact: Callable[[str], str]) -> str:
    lines = redact(text).strip().splitlines()[:REASON_LINES]
    joined = "\n".join(lines)
    return joined if len(joined) <= REASON_CHARS else joined[: REASON_CHARS - 1] + "…"


def point_label(result: RunResult) -> str:
    """A point for people: a sweep point's label, else its scale."""
    if result.point is not None and result.point.label:
        return result.point.label
    return f"scale {result.spec.get('scale', '?')}"


def _target_failure(
    name: str, body: TargetResult, label: str, redact: Callable[[str], str]
) -> Failure | None:
    if body.status == "failed":
        return Failure(
            f"{name} at {label}", body.failed_phase or "?", _short(body.error or "no reason recorded", redact)
        )
    if body.status != "ok":
        phase = body.stopped_before or "?"
        return Failure(f"{name} at {label}", phase, f"never ran: the branch stopped before {phase}")
    return None


def target_failures(comparison: Comparison, redact: Callable[[str], str]) -> list[Failure]:
    """Every target that failed or never finished, point by point (smallest first)."""
    return [
        failure
        for result in results_of(comparison)
        for name, body in result.targets.items()
        if (failure := _target_failure(name, body, point_label(result), redact)) is not None
    ]


def _figures(result: RunResult) -> PointFigures:
    types = list(
        dict.fromkeys(t for body in result.targets.values() if body.queries for t in body.queries.hot)
    )
    headline = tuple(types[:HEADLINE_QUERY_TYPES])
    targets = []
    for name, body in result.targets.items():
        hot = body.queries.hot if body.queries is not None else {}
        queries = tuple(
            QueryFigure(t, hot[t].p50_ms if t in hot else None, body.clean_hot_qps(t)) for t in headline
        )
        load = body.load.median_rows_per_s if body.load is not None else None
        targets.append(TargetFigures(name, body.status, load, queries))
    return PointFigures(point_label(result), headline, tuple(targets))


def _changes(folder: RunFolder, redact: Callable[[str], str]) -> tuple[tuple[str, ...] | None, int]:
    report = folder.read_changes()
    if report is None:
        return None, 0
    return tuple(redact(change.summary()) for change in report.recent()[:MOST_CHANGES]), len(report.changes)


def _outcome(
    end: RunEnd, comparison: Comparison | None, validation_ok: bool, failures: list[Failure]
) -> Outcome:
    if comparison is None:
        return Outcome.FAILED
    if failures:
        return Outcome.FAILED_TARGETS
    if not validation_ok:
        return Outcome.FAILED_VALIDATION
    return Outcome.PASSED if end.succeeded else Outcome.FAILED


def _task_failure(end: RunEnd, redact: Callable[[str], str]) -> Failure:
    reason = end.reason or "no reason given"
    return Failure(
        "the run", end.failed_task or "an unknown task", _short(f"{reason} (see the task's log)", redact)
    )


def summarize(
    folder: RunFolder | None, end: RunEnd, redact: Callable[[str], str], location: str = ""
) -> RunSummary:
    """The summary of the run in ``folder`` (None: the run made no folder) as it ended (``end``);
    ``location``: where its report is published (shown as it is)."""
    empty = RunSummary(
        end,
        "",
        Outcome.FAILED,
        (_task_failure(end, redact),),
        (),
        0,
        "not validated",
        None,
        0,
        None,
        location,
    )
    if folder is None:
        return empty
    rejection = folder.read_rejection()
    if rejection is not None:
        failure = Failure("the run", rejection.task or end.failed_task, _short(rejection.reason, redact))
        return RunSummary(
            end, folder.name, Outcome.REJECTED, (failure,), (), 0, "not validated", None, 0, None, location
        )
    comparison = folder.read_comparison() if folder.has_comparison() else None
    validation = folder.read_validation()
    validation_ok = validation is not None and validation.success
    failures = target_failures(comparison, redact) if comparison is not None else []
    outcome = _outcome(end, comparison, validation_ok, failures)
    if outcome is Outcome.FAILED_VALIDATION and validation is not None:
        failures = [
            Failure("validation", "validate", _short(str(item), redact))
            for item in validation.critical_failed
        ]
    elif outcome in (Outcome.FAILED, Outcome.FAILED_VALIDATION):
        failures = [_task_failure(end, redact)]
    results = results_of(comparison) if comparison is not None else []
    changes, total = _changes(folder, redact)
    return RunSummary(
        end=end,
        run=folder.name,
        outcome=outcome,
        failures=tuple(failures),
        points=tuple(_figures(result) for result in results[:MOST_POINTS]),
        more_points=max(0, len(results) - MOST_POINTS),
        validation="not validated" if validation is None else ("passed" if validation.success else "failed"),
        changes=changes,
        changes_total=total,
        report=folder.report_pdf if folder.report_pdf.is_file() else None,
        location=location,
    )
