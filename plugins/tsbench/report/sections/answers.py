"""Answer checks against the oracle (agreement counts, mismatch samples, errors) and validation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


def answers_section(run: RunResult, targets: Sequence[TargetView]) -> dict[str, Any]:
    """Per target: answers checked/agreed/mismatched and errors; the mismatch and error samples."""
    rows, samples, errors = [], [], []
    for target in targets:
        queries = ran_queries(run.targets[target.name])
        if queries is None:
            rows.append({"target": target, "missing": True, "reason": target.problem or "no queries"})
            continue
        checks, error_info = queries.answer_checks, queries.errors
        rows.append(
            {
                "target": target,
                "missing": False,
                "checked": checks.checked,
                "agreed": checks.agreed,
                "mismatches": checks.mismatches,
                "errors": error_info.count,
            }
        )
        samples += [_mismatch_sample(target, sample) for sample in checks.mismatch_samples]
        errors += [{"target": target, **sample} for sample in error_info.samples]
    return {"rows": rows, "samples": samples, "errors": errors, "rel_tol": REL_TOL, "abs_tol": ABS_TOL}


def _status(success: Any, critical: bool) -> str:
    return "pass" if success else ("fail" if critical else "warning")


def _suite_view(suite: SuiteOutcome, counts: dict[str, int]) -> dict[str, Any]:
    critical = bool(suite.critical)
    results = []
    for item in suite.results:
        status = "skipped" if item.skipped else _status(item.success, critical)
        counts[status] += 1
        results.append(
            {
                "expectation": item.expectation,
                "success": bool(item.success),
                "observed": item.observed,
                "details": item.details,
                "status": status,
            }
        )
    suite_status = "skipped" if suite.status == "skipped" else _status(suite.success, critical)
    return {"name": suite.name, "critical": critical, "status": suite_status, "results": results}


def validation_section(validation: Validation | None) -> dict[str, Any] | None:
    """The validation outcome by suite and expectation, with counts per status (None: not validated)."""
    if validation is None:
        return None
    counts = {"pass": 0, "fail": 0, "warning": 0, "skipped": 0}
    suites = [_suite_view(suite, counts) for suite in validation.suites]
    return {
        "success": bool(validation.success),
        "critical_failed": validation.critical_failed,
        "warnings": validation.warnings,
        "suites": suites,
        "counts": counts,
    }
