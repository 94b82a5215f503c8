"""A run folder's layout: the only code that knows its files' names. It reads and writes typed
records (``tsbench.results.model``), each file atomically, over a local folder or a run store
(``RunFolder.opened``: the part of the run a task opens, in the local folder or the S3 store's
scratch copy, pushed back when the task ends)::

    <run id>/                       RunFolder: one comparison
        plan.json                   the validated parameters (``tsbench.run.comparison``)
        comparison.json             every point's result
        validation.json             great_expectations' outcome, validation/<suite>.json
        changes.json                change points in the history of its figures (``ChangeReport``)
        rejected.json               only in a run refused before any work (``Rejection``)
        steps.json                  seconds of each post-run step
        report/report.html report/report.pdf
        scale-<N>[_<axis>-<v>…]/    PointFolder: one point (a scale, or a sweep's point)
            run.json                the point: spec, dataset, machine, oracle (``PointRun``)
            queries.jsonl           the logical query set
            answers.jsonl           the oracle's reference answers (the largest file by far)
            answers-<view>.jsonl    … over the rows a target keeps of rows sent twice (last, distinct)
            result.json             every target's records, collected (``RunResult``)
            targets/<target>/       TargetFolder: one record per file (its ``FILE``), the
                                    failure (``error.json``), rendered.jsonl (queries as sent),
                                    acquire_machine.since (when the lease wait began)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from tsbench.results.change_records import ChangeReport
from tsbench.results.files import read_json, write_json_atomic
from tsbench.results.model import Comparison, Plan, PointRun, Rejection, RunResult, Validation
from tsbench.results.phase_records import PhaseError
from tsbench.results.record import Record
from tsbench.results.workspace import WHOLE, Part, workspace

R = TypeVar("R", bound=Record)
SCALE_PREFIX = "scale-"  # every point folder's name starts with it
PLAN = "plan.json"
COMPARISON = "comparison.json"
VALIDATION = "validation.json"
RESULT = "result.json"
RUN = "run.json"
QUERIES = "queries.jsonl"
ANSWERS = "answers.jsonl"  # in each point folder; the run folder's largest file by far
TARGETS = "targets"
RENDERED = "rendered.jsonl"
WAIT_STARTED = "acquire_machine.since"
REPORT = "report"
REPORT_HTML = "report.html"
REPORT_PDF = "report.pdf"
STEPS = "steps.json"
CHANGES = "changes.json"
REJECTED = "rejected.json"
DOCUMENTS = (COMPARISON, RESULT)  # what makes a folder a (collected) run
PUBLISHED_DOCUMENTS = (*DOCUMENTS, VALIDATION, CHANGES)  # what publication copies beside the report


def is_answers_file(relative: str) -> bool:
    """Whether a path (relative to a run folder, ``/``-separated) names reference answers (of any
    view of the rows: ``PointFolder.answers_over``)."""
    name = relative.rsplit("/", 1)[-1]
    stem, suffix = ANSWERS.split(".", 1)
    return name == ANSWERS or (name.startswith(f"{stem}-") and name.endswith(f".{suffix}"))


@dataclass(frozen=True)
class TargetFolder:
    """One target's records in one point: ``<FILE>.json`` per record type, stamped with the
    record's phase name and the target."""

    path: Path
    name: str

    def file(self, record: type[Record]) -> Path:
        return self.path / f"{record.FILE}.json"  # type: ignore[attr-defined]

    def has(self, record: type[Record]) -> bool:
        return self.file(record).is_file()

    def read(self, record: type[R]) -> R | None:
        """The record as written (without its stamp), None when the file is absent."""
        path = self.file(record)
        if not path.is_file():
            return None
        body = {k: v for k, v in read_json(path).items() if k not in ("phase", "target")}
        return record.from_json(body)

    def write(self, record: Record, phase: str = "") -> dict[str, Any]:
        """``record`` into its file (atomically), stamped ``phase`` (default: its file's name);
        returns the record's JSON. A phase that succeeds clears an earlier attempt's failure."""
        body = record.to_json()
        stamp = phase or type(record).FILE  # type: ignore[attr-defined]
        self.path.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.file(type(record)), {"phase": stamp, "target": self.name, **body})
        failure = self.read(PhaseError)
        if failure is not None and failure.failed_phase == stamp:
            self.file(PhaseError).unlink()  # a retry of the failed phase succeeded
        return body

    @property
    def rendered(self) -> Path:
        """Every query as sent to this target (JSON lines: id, type, text)."""
        return self.path / RENDERED

    @property
    def wait_started(self) -> Path:
        """When the branch first tried to take its machine lease (a handed-back wait's clock)."""
        return self.path / WAIT_STARTED


@dataclass(frozen=True)
class PointFolder:
    """One point of a comparison: its run facts, query set, reference answers, the targets'
    records and the collected result."""

    path: Path

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def run_id(self) -> str:
        """The comparison's id (the point folder's parent)."""
        return self.path.parent.name

    @property
    def queries(self) -> Path:
        return self.path / QUERIES

    @property
    def answers(self) -> Path:
        return self.path / ANSWERS

    def answers_over(self, view: str) -> Path:
        """The reference answers over a view of the rows (``workload.kept``'s name for it; empty:
        every row, ``answers``)."""
        if not view:
            return self.answers
        stem, suffix = ANSWERS.split(".", 1)
        return self.path / f"{stem}-{view}.{suffix}"

    def has_run(self) -> bool:
        return (self.path / RUN).is_file()

    def read_run(self) -> PointRun:
        return PointRun.from_json(read_json(self.path / RUN))

    def write_run(self, run: PointRun) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.path / RUN, run.to_json())

    def has_result(self) -> bool:
        return (self.path / RESULT).is_file()

    def read_result(self) -> RunResult:
        """``result.json``; FileNotFoundError naming it when the point was not collected."""
        path = self.path / RESULT
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no result.json (collect the run first)")
        return RunResult.from_json(read_json(path))

    def write_result(self, result: RunResult) -> None:
        write_json_atomic(self.path / RESULT, result.to_json())

    def target(self, name: str) -> TargetFolder:
        return TargetFolder(self.path / TARGETS / name, name)


@dataclass(frozen=True)
class RunFolder:
    """One comparison run: its plan, points, collected documents and report."""

    path: Path

    @classmethod
    @contextmanager
    def opened(cls, url: str, part: Part = WHOLE) -> Iterator[RunFolder]:
        """The run folder at ``url`` (a local folder or ``s3://…`` run store) for one task: ``part``
        of it, local; what the task wrote is pushed back when it ends (``results.workspace``)."""
        with workspace(url, part=part) as path:
            yield cls(path)

    @property
    def name(self) -> str:
        return self.path.name

    def point(self, name: str) -> PointFolder:
        return PointFolder(self.path / name)

    def points(self) -> list[PointFolder]:
        """Every point folder present, unordered (``tsbench.run.comparison`` orders them)."""
        return [PointFolder(p) for p in self.path.glob(f"{SCALE_PREFIX}*") if p.is_dir()]

    @property
    def plan(self) -> Path:
        return self.path / PLAN

    def has_plan(self) -> bool:
        return self.plan.is_file()

    def read_plan(self) -> Plan:
        return Plan.from_json(read_json(self.plan))

    def write_plan(self, plan: Plan) -> None:
        write_json_atomic(self.plan, plan.to_json())

    def has_comparison(self) -> bool:
        return (self.path / COMPARISON).is_file()

    def read_comparison(self) -> Comparison:
        return Comparison.from_json(read_json(self.path / COMPARISON))

    def write_comparison(self, comparison: Comparison) -> None:
        write_json_atomic(self.path / COMPARISON, comparison.to_json())

    def read_validation(self) -> Validation | None:
        """``validation.json``, None when the run was not validated."""
        path = self.path / VALIDATION
        return Validation.from_json(read_json(path)) if path.is_file() else None

    def write_validation(self, body: dict[str, Any]) -> None:
        """``body``: great_expectations' outcome as ``tsbench.validation`` assembles it."""
        write_json_atomic(self.path / VALIDATION, body)

    def suite_document(self, suite: str) -> Path:
        """One suite's full great_expectations document."""
        return self.path / "validation" / f"{suite}.json"

    def read_changes(self) -> ChangeReport | None:
        """``changes.json``, None when no change detection ran for the run."""
        path = self.path / CHANGES
        return ChangeReport.from_json(read_json(path)) if path.is_file() else None

    def write_changes(self, report: ChangeReport) -> None:
        write_json_atomic(self.path / CHANGES, report.to_json())

    def read_rejection(self) -> Rejection | None:
        """``rejected.json``, None unless the run was refused before any work."""
        path = self.path / REJECTED
        return Rejection.from_json(read_json(path)) if path.is_file() else None

    def write_rejection(self, rejection: Rejection) -> None:
        write_json_atomic(self.path / REJECTED, rejection.to_json())

    @property
    def report(self) -> Path:
        """The report's folder (report.html, report.pdf)."""
        return self.path / REPORT

    @property
    def report_html(self) -> Path:
        return self.report / REPORT_HTML

    @property
    def report_pdf(self) -> Path:
        return self.report / REPORT_PDF

    @property
    def steps(self) -> Path:
        """Seconds of each post-run step (for the overhead benchmark)."""
        return self.path / STEPS
