"""Answer checks against the oracle (agreement counts, mismatch samples, errors) and validation."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tsbench.report import fmt
from tsbench.report.sections.common import query_answer_columns
from tsbench.report.sections.queries import ran_queries
from tsbench.report.sections.status import TargetView
from tsbench.results.model import RunResult, SuiteOutcome, Validation
from tsbench.timeutil import format_instant
from tsbench.workload.answers import ABS_TOL, REL_TOL

TIME_COLUMNS = ("bucket", "time")


def show_values(columns: Sequence[str], values: Sequence[Any]) -> list[str]:
    """An answer row for a person: ns timestamps under time columns as ISO instants."""
    shown = []
    for column, value in zip(columns, values, strict=False):
        if column in TIME_COLUMNS and isinstance(value, int) and not isinstance(value, bool):
            shown.append(format_instant(value))
        else:
            shown.append(fmt.cell(value))
    return shown


def _diff_row(diff: Mapping[str, Any], columns: Sequence[str], width: int) -> dict[str, Any]:
    want, got = diff.get("expected"), diff.get("actual")
    differs = [
        want is None or got is None or i >= len(want) or i >= len(got) or want[i] != got[i]
        for i in range(width)
    ]
    return {
        "row": diff.get("row"),
        "expected": None if want is None else show_values(columns, want),
        "actual": None if got is None else show_values(columns, got),
        "differs": differs,
    }


def _mismatch_sample(target: TargetView, sample: Mapping[str, Any]) -> dict[str, Any]:
    """One recorded mismatch as a table: the query type's answer columns, differing cells marked."""
    qtype = str(sample.get("query_id", "")).split("#")[0]
    diff_rows = sample.get("rows") or []
    width = max((len(r.get("expected") or r.get("actual") or []) for r in diff_rows), default=0)
    columns = query_answer_columns(qtype)
    if len(columns) != width:
        columns = [f"col {i + 1}" for i in range(width)]
    return {
        "target": target,
        "pass": sample.get("pass", ""),
        "query_id": sample.get("query_id", ""),
        "type": qtype,
        "reason": sample.get("reason", ""),
        "columns": columns,
        "rows": [_diff_row(diff, columns, width) for diff in diff_rows],
    }


@dataclass(frozen=True)
class AnswerRow:
    """One target's answers over every pass: checked, agreed with the oracle, wrong; query errors.
    ``missing``: it ran no queries (``reason`` says why)."""

    target: TargetView
    missing: bool
    reason: str = ""
    checked: int = 0
    agreed: int = 0
    mismatches: int = 0
    errors: int = 0


@dataclass(frozen=True)
class AnswersSection:
    """Rows per target, mismatch and error samples (free-form dicts as recorded, with ``target``),
    and the oracle's tolerance: |a − b| ≤ ``abs_tol`` + ``rel_tol`` × |b|."""

    rows: list[AnswerRow]
    samples: list[dict[str, Any]]
    errors: list[dict[str, Any]]
    rel_tol: float
    abs_tol: float


@dataclass(frozen=True)
class ExpectationView:
    """One expectation's outcome: ``status`` pass | fail | warning | skipped, what was observed."""

    expectation: str
    success: bool
    observed: Any
    details: Any
    status: str


@dataclass(frozen=True)
class SuiteView:
    """One validation suite: its status (as an expectation's) and every expectation."""

    name: str
    critical: bool
    status: str
    results: list[ExpectationView]


@dataclass(frozen=True)
class StatusCounts:
    """How many expectations passed, failed, only warned and were skipped."""

    passed: int = 0
    failed: int = 0
    warnings: int = 0
    skipped: int = 0


@dataclass(frozen=True)
class ValidationView:
    """``validation.json`` for the report: verdict, critical failures, warnings, suites, counts."""

    success: bool
    critical_failed: list[Any]
    warnings: list[Any]
    suites: list[SuiteView]
    counts: StatusCounts


def answers_section(run: RunResult, targets: Sequence[TargetView]) -> AnswersSection:
    """Per target: answers checked/agreed/mismatched and errors; the mismatch and error samples."""
    rows, samples, errors = [], [], []
    for target in targets:
        queries = ran_queries(run.targets[target.name])
        if queries is None:
            rows.append(AnswerRow(target, missing=True, reason=target.problem or "no queries"))
            continue
        checks, error_info = queries.answer_checks, queries.errors
        rows.append(
            AnswerRow(
                target,
                missing=False,
                checked=checks.checked,
                agreed=checks.agreed,
                mismatches=checks.mismatches,
                errors=error_info.count,
            )
        )
        samples += [_mismatch_sample(target, sample) for sample in checks.mismatch_samples]
        errors += [{"target": target, **sample} for sample in error_info.samples]
    return AnswersSection(rows=rows, samples=samples, errors=errors, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def _status(success: Any, critical: bool) -> str:
    return "pass" if success else ("fail" if critical else "warning")


def _suite_view(suite: SuiteOutcome) -> SuiteView:
    critical = bool(suite.critical)
    results = [
        ExpectationView(
            expectation=item.expectation,
            success=bool(item.success),
            observed=item.observed,
            details=item.details,
            status="skipped" if item.skipped else _status(item.success, critical),
        )
        for item in suite.results
    ]
    suite_status = "skipped" if suite.status == "skipped" else _status(suite.success, critical)
    return SuiteView(name=suite.name, critical=critical, status=suite_status, results=results)


def validation_section(validation: Validation | None) -> ValidationView | None:
    """The validation outcome by suite and expectation, with counts per status (None: not validated)."""
    if validation is None:
        return None
    suites = [_suite_view(suite) for suite in validation.suites]
    statuses = Counter(item.status for suite in suites for item in suite.results)
    counts = StatusCounts(
        passed=statuses["pass"],
        failed=statuses["fail"],
        warnings=statuses["warning"],
        skipped=statuses["skipped"],
    )
    return ValidationView(
        success=bool(validation.success),
        critical_failed=validation.critical_failed,
        warnings=validation.warnings,
        suites=suites,
        counts=counts,
    )
