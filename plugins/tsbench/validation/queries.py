"""The queries suite (critical): did every requested query type run without errors, and did every
answer agree with the oracle?

The requested types and their query counts come from the run's ``queries.jsonl`` (the query set
every target was given). One frame with a row per (target, query type):

- ``coverage``: ``ran`` (cold and hot stats present, every execution accounted for: successful +
  failed = queries × passes), ``unsupported`` (declared by the target, with its reason), or
  ``not run`` / ``incomplete``;
- ``errors`` and ``mismatches`` summed over the cold and hot passes, and the passes on a rollup
  where the run built one (run option ``rollup_after_load``).

Per target three expectations, each naming it: every type ran or is declared unsupported, zero
errors, zero answers differing from the oracle. A second frame per target checks that every
successful answer was compared with the oracle (``answer_checks.checked`` = successful executions),
so a missing reference answer cannot pass as agreement.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from tsbench.results.folder import PointFolder
from tsbench.results.model import QueriesPhase, QueryStats, RunResult, TargetResult
from tsbench.spec import RunSpec
from tsbench.validation.checks import Check, Frame, SuiteSpec, entry, none_check
from tsbench.validation.load import target_names

PASSES = ("cold", "hot")


def requested_types(run_dir: Path, result: RunResult) -> dict[str, int]:
    """Query type → number of queries of that type in the run's query set (in query-set order)."""
    path = PointFolder(run_dir).queries
    counts: dict[str, int] = {}
    if path.is_file():
        with path.open() as handle:
            for line in handle:
                if line.strip():
                    qtype = json.loads(line)["type"]
                    counts[qtype] = counts.get(qtype, 0) + 1
        return counts
    spec = RunSpec.recorded(result.spec)
    return dict.fromkeys(spec.query_types or [], spec.queries_per_type)


def _coverage(stats: dict[str, QueryStats | None], queries: int, hot_passes: int) -> tuple[str, int]:
    executed = sum(int(s.count or 0) + int(s.errors or 0) for s in stats.values() if s is not None)
    if not any(s is not None for s in stats.values()):
        return "not run", executed
    expected = queries * (1 + hot_passes)
    if any(s is None for s in stats.values()) or executed != expected:
        return "incomplete", executed
    return "ran", executed


def _declared_unsupported(body: TargetResult) -> dict[str, str]:
    """Types the target did not run, with the reason: from its queries record and its capabilities."""
    declared = dict(body.queries.unsupported) if body.queries is not None else {}
    if body.provision is not None:
        declared.update(body.provision.capabilities.unsupported)
    return declared


def _on_rollup(queries: QueriesPhase) -> dict[str, QueryStats]:
    """The rollup's passes per type (none when the run built no rollup)."""
    return queries.rollup.on_rollup if queries.rollup is not None else {}


def _type_row(
    name: str, qtype: str, count: int, queries: QueriesPhase, declared: dict[str, str], hot_passes: int
) -> dict[str, Any]:
    """One (target, type) row: coverage, executions against expected, errors and mismatches."""
    stats = {p: getattr(queries, p).get(qtype) for p in PASSES}
    present = [s for s in stats.values() if s is not None]
    judged = present + [s for s in [_on_rollup(queries).get(qtype)] if s is not None]
    if qtype in declared and not present:
        coverage, executed = "unsupported", 0
    else:
        coverage, executed = _coverage(stats, count, hot_passes)
    return {
        "target": name,
        "query_type": qtype,
        "coverage": coverage,
        "executed": executed,
        "expected": 0 if coverage == "unsupported" else count * (1 + hot_passes),
        "errors": sum(int(s.errors or 0) for s in judged) if present else None,
        "mismatches": sum(int(s.mismatches or 0) for s in judged) if present else None,
    }


def _coverage_check(
    name: str, body: TargetResult, per_type: dict[str, dict[str, Any]], declared: dict[str, str]
) -> Check:
    uncovered = {t: r["coverage"] for t, r in per_type.items() if r["coverage"] not in ("ran", "unsupported")}
    unsupported = {t: declared[t] for t, r in per_type.items() if r["coverage"] == "unsupported"}
    detail = f"{len(per_type)} type(s) requested"
    if unsupported:
        detail += "; declared unsupported: " + "; ".join(f"{t} ({why})" for t, why in unsupported.items())
    if uncovered:
        detail += "; not covered: " + ", ".join(f"{t} ({c})" for t, c in uncovered.items())
    if body.status == "failed":
        detail += f"; the target failed in {body.failed_phase if body.has('failed_phase') else '?'}"
    return Check(
        f"{name}: every requested query type ran or is declared unsupported",
        "ExpectColumnValuesToBeInSet",
        {"column": "coverage", "value_set": ["ran", "unsupported"]},
        where=("target", name),
        observed={
            "ran": sum(r["coverage"] == "ran" for r in per_type.values()),
            "unsupported": len(unsupported),
            "not_covered": uncovered,
        },
        details=detail,
    )


def _errors_check(name: str, queries: QueriesPhase, per_type: dict[str, dict[str, Any]]) -> Check:
    samples = queries.errors.samples
    details = f"first error: {samples[0]['error']}" if samples else "errors summed over cold and hot passes"
    return none_check(name, "no query errors", "errors", per_type, details)


def _answers_check(name: str, queries: QueriesPhase, per_type: dict[str, dict[str, Any]]) -> Check:
    checks = queries.answer_checks
    first = checks.mismatch_samples[0] if checks.mismatch_samples else None
    details = (
        f"first mismatch: {first.get('query_id')} ({first.get('reason', '')})"
        if first
        else f"{checks.agreed}/{checks.checked} answers agree"
    )
    return none_check(name, "answers agree with the oracle", "mismatches", per_type, details)


def _compared_check(name: str, queries: QueriesPhase) -> tuple[dict[str, Any], Check]:
    """Every successful answer was compared with the oracle: its row and its check."""
    successful = sum(int(s.count or 0) for p in PASSES for s in getattr(queries, p).values())
    successful += sum(int(s.count or 0) for s in _on_rollup(queries).values())
    checked = queries.answer_checks.checked if queries.answer_checks.has("checked") else None
    row = {"target": name, "checked": checked, "successful": successful}
    return row, Check(
        f"{name}: every successful answer was compared with the oracle",
        "ExpectColumnPairValuesToBeEqual",
        {"column_A": "checked", "column_B": "successful", "ignore_row_if": "neither"},
        where=("target", name),
        observed={"checked": checked, "successful": successful},
        details="an answer without a reference would count as neither agreeing nor differing",
    )


def queries_suite(run_dir: Path, run: RunResult) -> SuiteSpec:
    """The suite's two frames (per target × type, per target) with their checks (module docstring)."""
    types = requested_types(run_dir, run)
    spec = RunSpec.recorded(run.spec)
    if spec.live_only:
        suite = SuiteSpec("queries", critical=True)
        details = "a live-only run: no closed-loop pass; the live suite checks every answer"
        suite.static.append(entry("closed-loop query passes ran", True, None, details, skipped=True))
        return suite
    hot_default = spec.hot_runs
    rows, checks, target_rows, target_checks = [], [], [], []
    for name in target_names(run):
        body = run.targets.get(name) or TargetResult()
        queries = body.queries or QueriesPhase()
        declared = _declared_unsupported(body)
        hot_passes = int(queries.hot_passes if queries.has("hot_passes") else hot_default)
        per_type = {
            qtype: _type_row(name, qtype, n, queries, declared, hot_passes) for qtype, n in types.items()
        }
        rows += per_type.values()
        checks.append(_coverage_check(name, body, per_type, declared))
        checks.append(_errors_check(name, queries, per_type))
        checks.append(_answers_check(name, queries, per_type))
        if queries.to_json():
            row, check = _compared_check(name, queries)
            target_rows.append(row)
            target_checks.append(check)
    columns = ["target", "query_type", "coverage", "executed", "expected", "errors", "mismatches"]
    frame = pd.DataFrame(rows, columns=columns)
    frame[["errors", "mismatches"]] = frame[["errors", "mismatches"]].astype("float64")
    suite = SuiteSpec("queries", critical=True)
    suite.frames.append(Frame("types", frame, checks))
    if target_checks:
        answers = pd.DataFrame(target_rows, columns=["target", "checked", "successful"])
        answers[["checked", "successful"]] = answers[["checked", "successful"]].astype("float64")
        suite.frames.append(Frame("answers", answers, target_checks))
    suite.info = {"requested_types": list(types), "queries": sum(types.values())}
    return suite
