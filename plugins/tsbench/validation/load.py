"""The load suite (critical): did every target finish, and does it hold exactly the dataset's rows?

One frame with a row per (target, measurement): the target's status, the rows it held after the
last load trial (``load.trials[-1].row_counts``, the data the queries ran on) and the dataset's
rows (``result.dataset.rows``, from the manifest). Per target two expectations, each naming it:
the target finished every phase (status ``ok``; a failed target fails here with its phase and
error), and rows in the database = rows in the dataset for every measurement (a target without
load figures has no counts, which fails the comparison) — or, where the target's data model cannot
keep some rows (``load.expected_rows``, e.g. InfluxDB's field-less iot points), the rows it keeps.
"""

from __future__ import annotations

import pandas as pd

from tsbench.results.model import RunResult, TargetResult
from tsbench.validation.checks import Check, Frame, SuiteSpec


def target_names(result: RunResult) -> list[str]:
    """Every target the spec asked for, then any other target with results (in that order)."""
    return list(dict.fromkeys([*result.spec.get("targets", []), *result.targets]))


def _status_check(name: str, body: TargetResult | None) -> Check:
    """The target finished every phase; otherwise the phase it failed in or stopped before."""
    status = body.status if body is not None else "missing"
    if body is None:
        why = "no results for this target in result.json"
    elif status == "failed":
        why = f"failed in {body.failed_phase if body.has('failed_phase') else '?'}: {body.error}"
    elif status != "ok":
        phase = body.stopped_before if body.has("stopped_before") else "a phase"
        why = f"{phase} never ran (no error recorded)"
    else:
        why = "finished every phase"
    return Check(
        f"{name}: finished every phase",
        "ExpectColumnValuesToBeInSet",
        {"column": "status", "value_set": ["ok"]},
        where=("target", name),
        observed=status,
        details=why,
    )


def _rows_check(
    name: str, trials: int, counts: dict[str, int], dataset_rows: dict[str, int], model_limited: bool
) -> Check:
    """Rows in the database after the last trial = the rows it must hold (``dataset_rows``), per
    measurement."""
    differ = {
        m: {"database": counts.get(m), "dataset": want}
        for m, want in dataset_rows.items()
        if counts.get(m) != want
    }
    if not trials:
        detail = "no load figures (the target failed before or during its load)"
    elif differ:
        detail = "differs: " + "; ".join(
            f"{m} {v['database']} in the database vs {v['dataset']}" for m, v in differ.items()
        )
    else:
        detail = f"after trial {trials} of {trials}"
    if model_limited:
        detail += " (the dataset's rows less those its data model cannot keep: see its capabilities)"
    keeps = " its data model keeps" if model_limited else ""
    return Check(
        f"{name}: rows in the database = rows in the dataset{keeps}, per measurement",
        "ExpectColumnPairValuesToBeEqual",
        {"column_A": "loaded_rows", "column_B": "dataset_rows", "ignore_row_if": "neither"},
        where=("target", name),
        observed={m: counts.get(m) for m in dataset_rows},
        details=detail,
    )


def load_suite(run: RunResult) -> SuiteSpec:
    """Per target: its status and its rows against the dataset's (module docstring)."""
    dataset_rows: dict[str, int] = dict(run.dataset.rows)
    rows, checks = [], []
    for name in target_names(run):
        body = run.targets.get(name)
        body = body if body is not None and body.to_json() else None  # an empty record: no results
        status = body.status if body is not None else "missing"
        trials = body.load.trials if body is not None and body.load is not None else []
        counts = dict(trials[-1].row_counts) if trials else {}
        kept = dict(body.load.expected_rows) if body is not None and body.load is not None else {}
        want_rows = kept or dataset_rows
        rows += [
            {
                "target": name,
                "measurement": measurement,
                "status": status,
                "loaded_rows": counts.get(measurement),
                "dataset_rows": want,
            }
            for measurement, want in want_rows.items()
        ]
        checks.append(_status_check(name, body))
        checks.append(_rows_check(name, len(trials), counts, want_rows, bool(kept)))
    frame = pd.DataFrame(rows, columns=["target", "measurement", "status", "loaded_rows", "dataset_rows"])
    frame[["loaded_rows", "dataset_rows"]] = frame[["loaded_rows", "dataset_rows"]].astype("float64")
    return SuiteSpec("load", critical=True, frames=[Frame("targets", frame, checks)])
