"""The live suite (critical): in the live phase, did every answer agree with the oracle, was every
answer compared, and (in a live-only run, where no closed-loop pass covers them) did every query
type run or say why not?

One frame with a row per (target, query type) of the run's query set: ``coverage`` is ``ran``
(answered under ingest), ``excluded`` (a type the live mix leaves out, with its reason in the record:
it reads every row up to now), ``unsupported`` (declared by the target) or ``not run``; ``checked``
and ``mismatches`` are the type's answers compared and differing, over the phase, its queries
without ingest and its ramp. A second frame per target checks that every completed live query's
answer was compared. A run without a live phase has nothing to check: one entry says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from tsbench.results.live_records import LivePhase
from tsbench.results.model import RunResult, TargetResult
from tsbench.spec import RunSpec
from tsbench.validation.checks import Check, Frame, SuiteSpec, entry, none_check
from tsbench.validation.load import target_names
from tsbench.validation.queries import requested_types


def _type_row(name: str, qtype: str, live: LivePhase, unsupported: dict[str, str]) -> dict[str, Any]:
    figures = live.queries.get(qtype)
    if figures is not None and figures.under_ingest.completed:
        coverage = "ran"
    elif qtype in live.excluded_types:
        coverage = "excluded"
    elif qtype in unsupported:
        coverage = "unsupported"
    else:
        coverage = "not run"
    return {
        "target": name,
        "query_type": qtype,
        "coverage": coverage,
        "checked": figures.checked if figures else 0,
        "mismatches": figures.mismatches if figures else 0,
    }


def _completed(live: LivePhase) -> int:
    """Live queries answered: under ingest, without, and in the ramp's steps."""
    answered = sum(f.under_ingest.completed for f in live.queries.values())
    answered += sum(f.without_ingest.completed for f in live.queries.values() if f.without_ingest)
    return answered + sum(step.completed for step in live.ramp)


def _coverage_check(name: str, live: LivePhase, rows: list[dict[str, Any]]) -> Check:
    uncovered = {r["query_type"]: r["coverage"] for r in rows if r["coverage"] == "not run"}
    return Check(
        f"{name}: every query type ran live, or is excluded from the live mix or unsupported",
        "ExpectColumnValuesToBeInSet",
        {"column": "coverage", "value_set": ["ran", "excluded", "unsupported"]},
        where=("target", name),
        observed={"ran": sum(r["coverage"] == "ran" for r in rows), "not_run": list(uncovered)},
        details="; ".join(f"{t}: {why}" for t, why in live.excluded_types.items()) or "none excluded",
    )


def _answer_check(name: str, live: LivePhase, rows: list[dict[str, Any]]) -> Check:
    first = live.mismatch_samples[0] if live.mismatch_samples else None
    checked = f"{sum(r['checked'] for r in rows)} answers checked"
    per_type = {r["query_type"]: r for r in rows}
    details = f"first mismatch: {first}" if first else checked
    return none_check(name, "live answers agree with the oracle", "mismatches", per_type, details)


def _compared(name: str, live: LivePhase) -> tuple[dict[str, Any], Check]:
    checked, completed = sum(f.checked for f in live.queries.values()), _completed(live)
    row = {"target": name, "checked": checked, "completed": completed}
    return row, Check(
        f"{name}: every live answer was compared with the oracle",
        "ExpectColumnPairValuesToBeEqual",
        {"column_A": "checked", "column_B": "completed"},
        where=("target", name),
        observed={"checked": checked, "completed": completed},
        details="an answer not compared would count as neither agreeing nor differing",
    )


def live_suite(run_dir: Path, run: RunResult) -> SuiteSpec:
    """The suite's frames (per target × type, per target) and checks (module docstring)."""
    suite = SuiteSpec("live", critical=True)
    spec = RunSpec.recorded(run.spec)
    if not spec.live_seconds:
        suite.static.append(entry("a live phase ran", True, None, "no live phase in this run", skipped=True))
        return suite
    types = requested_types(run_dir, run)
    rows, checks, target_rows, target_checks = [], [], [], []
    for name in target_names(run):
        body = run.targets.get(name) or TargetResult()
        if body.live is None:  # a failed target: the load suite names it and its phase
            continue
        unsupported = dict(body.provision.capabilities.unsupported) if body.provision else {}
        per_type = [_type_row(name, qtype, body.live, unsupported) for qtype in types]
        rows += per_type
        checks.append(_answer_check(name, body.live, per_type))
        if spec.live_only:  # the live phase is the run's only query measurement: every type counts
            checks.append(_coverage_check(name, body.live, per_type))
        row, check = _compared(name, body.live)
        target_rows.append(row)
        target_checks.append(check)
    if rows:
        columns = ["target", "query_type", "coverage", "checked", "mismatches"]
        suite.frames.append(Frame("types", pd.DataFrame(rows, columns=columns), checks))
    if target_checks:
        suite.frames.append(Frame("answers", pd.DataFrame(target_rows), target_checks))
    suite.info = {"requested_types": list(types), "targets_with_a_live_phase": len(target_rows)}
    return suite
