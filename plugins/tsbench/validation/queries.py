"""The queries suite (critical): did every requested query type run without errors, and did every
answer agree with the oracle?

The requested types and their query counts come from the run's ``queries.jsonl`` (the query set
every target was given). One frame with a row per (target, query type):

- ``coverage``: ``ran`` (cold and hot stats present, every execution accounted for: successful +
  failed = queries × passes), ``unsupported`` (declared by the target, with its reason), or
  ``not run`` / ``incomplete``;
- ``errors`` and ``mismatches`` summed over the cold and hot passes.

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

from tsbench.validation.checks import Check, Frame, SuiteSpec
from tsbench.validation.load import target_names

PASSES = ("cold", "hot")


def requested_types(run_dir: Path, result: dict[str, Any]) -> dict[str, int]:
    """Query type → number of queries of that type in the run's query set (in query-set order)."""
    path = run_dir / "queries.jsonl"
    counts: dict[str, int] = {}
    if path.is_file():
        with path.open() as handle:
            for line in handle:
                if line.strip():
                    qtype = json.loads(line)["type"]
                    counts[qtype] = counts.get(qtype, 0) + 1
        return counts
    per_type = int(result.get("spec", {}).get("queries_per_type") or 0)
    return dict.fromkeys(result.get("spec", {}).get("query_types") or [], per_type)


def _coverage(stats: dict[str, dict[str, Any] | None], queries: int, hot_passes: int) -> tuple[str, int]:
    executed = sum(int(s.get("count", 0)) + int(s.get("errors", 0)) for s in stats.values() if s)
    if not any(stats.values()):
        return "not run", executed
    expected = queries * (1 + hot_passes)
    if any(s is None for s in stats.values()) or executed != expected:
        return "incomplete", executed
    return "ran", executed


def queries_suite(run_dir: Path, result: dict[str, Any]) -> SuiteSpec:
    types = requested_types(run_dir, result)
    suite = SuiteSpec("queries", critical=True)
    hot_default = int(result.get("spec", {}).get("hot_runs") or 0)
    rows, checks, target_rows, target_checks = [], [], [], []
    for name in target_names(result):
        body = result.get("targets", {}).get(name) or {}
        queries = body.get("queries") or {}
        declared = dict(queries.get("unsupported") or {})
        declared.update(((body.get("provision") or {}).get("capabilities") or {}).get("unsupported") or {})
        hot_passes = int(queries.get("hot_passes", hot_default))
        per_type: dict[str, dict[str, Any]] = {}
        for qtype, count in types.items():
            stats = {p: (queries.get(p) or {}).get(qtype) for p in PASSES}
            if qtype in declared and not any(stats.values()):
                coverage, executed = "unsupported", 0
            else:
                coverage, executed = _coverage(stats, count, hot_passes)
            present = [s for s in stats.values() if s]
            row = {
                "target": name,
                "query_type": qtype,
                "coverage": coverage,
                "executed": executed,
                "expected": 0 if coverage == "unsupported" else count * (1 + hot_passes),
                "errors": sum(int(s.get("errors", 0)) for s in present) if present else None,
                "mismatches": sum(int(s.get("mismatches", 0)) for s in present) if present else None,
            }
            rows.append(row)
            per_type[qtype] = row
        uncovered = {
            t: r["coverage"] for t, r in per_type.items() if r["coverage"] not in ("ran", "unsupported")
        }
        unsupported = {t: declared[t] for t, r in per_type.items() if r["coverage"] == "unsupported"}
        detail = f"{len(types)} type(s) requested"
        if unsupported:
            detail += "; declared unsupported: " + "; ".join(f"{t} ({why})" for t, why in unsupported.items())
        if uncovered:
            detail += "; not covered: " + ", ".join(f"{t} ({c})" for t, c in uncovered.items())
        if body.get("status") == "failed":
            detail += f"; the target failed in {body.get('failed_phase', '?')}"
        checks.append(
            Check(
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
        )
        errors = {t: r["errors"] for t, r in per_type.items() if r["errors"]}
        samples = (queries.get("errors") or {}).get("samples") or []
        checks.append(
            Check(
                f"{name}: no query errors",
                "ExpectColumnValuesToBeBetween",
                {"column": "errors", "min_value": 0, "max_value": 0},
                where=("target", name),
                observed={"errors": sum(errors.values()), "by_type": errors},
                details=("first error: " + samples[0]["error"])
                if samples
                else "errors summed over cold and hot passes",
            )
        )
        mismatches = {t: r["mismatches"] for t, r in per_type.items() if r["mismatches"]}
        answer_checks = queries.get("answer_checks") or {}
        first = (answer_checks.get("mismatch_samples") or [None])[0]
        checks.append(
            Check(
                f"{name}: answers agree with the oracle",
                "ExpectColumnValuesToBeBetween",
                {"column": "mismatches", "min_value": 0, "max_value": 0},
                where=("target", name),
                observed={"mismatches": sum(mismatches.values()), "by_type": mismatches},
                details=(
                    f"first mismatch: {first.get('query_id')} ({first.get('reason', '')})"
                    if first
                    else f"{answer_checks.get('agreed', 0)}/{answer_checks.get('checked', 0)} answers agree"
                ),
            )
        )
        successful = sum(
            int(s.get("count", 0))
            for p in PASSES
            for s in ((queries.get(p) or {}).values())
            if isinstance(s, dict)
        )
        if queries:
            target_rows.append(
                {"target": name, "checked": answer_checks.get("checked"), "successful": successful}
            )
            target_checks.append(
                Check(
                    f"{name}: every successful answer was compared with the oracle",
                    "ExpectColumnPairValuesToBeEqual",
                    {"column_A": "checked", "column_B": "successful", "ignore_row_if": "neither"},
                    where=("target", name),
                    observed={"checked": answer_checks.get("checked"), "successful": successful},
                    details="an answer without a reference would count as neither agreeing nor differing",
                )
            )
    columns = ["target", "query_type", "coverage", "executed", "expected", "errors", "mismatches"]
    frame = pd.DataFrame(rows, columns=columns)
    frame[["errors", "mismatches"]] = frame[["errors", "mismatches"]].astype("float64")
    suite.frames.append(Frame("types", frame, checks))
    if target_checks:
        answers = pd.DataFrame(target_rows, columns=["target", "checked", "successful"])
        answers[["checked", "successful"]] = answers[["checked", "successful"]].astype("float64")
        suite.frames.append(Frame("answers", answers, target_checks))
    suite.info = {"requested_types": list(types), "queries": sum(types.values())}
    return suite
