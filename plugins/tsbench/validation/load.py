"""The load suite (critical): did every target finish, and does it hold exactly the dataset's rows?

One frame with a row per (target, measurement): the target's status, the rows it held after the
last load trial (``load.trials[-1].row_counts``, the data the queries ran on) and the dataset's
rows (``result.dataset.rows``, from the manifest). Per target two expectations, each naming it:
the target finished every phase (status ``ok``; a failed target fails here with its phase and
error), and rows in the database = rows in the dataset for every measurement (a target without
load figures has no counts, which fails the comparison).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from tsbench.validation.checks import Check, Frame, SuiteSpec


def target_names(result: dict[str, Any]) -> list[str]:
    """Every target the spec asked for, then any other target with results (in that order)."""
    return list(dict.fromkeys([*result.get("spec", {}).get("targets", []), *result.get("targets", {})]))


def load_suite(result: dict[str, Any]) -> SuiteSpec:
    dataset_rows: dict[str, int] = dict(result.get("dataset", {}).get("rows") or {})
    rows, checks = [], []
    for name in target_names(result):
        body = result.get("targets", {}).get(name)
        status = body.get("status", "incomplete") if body else "missing"
        trials = ((body or {}).get("load") or {}).get("trials") or []
        counts = dict(trials[-1].get("row_counts") or {}) if trials else {}
        for measurement, want in dataset_rows.items():
            rows.append(
                {
                    "target": name,
                    "measurement": measurement,
                    "status": status,
                    "loaded_rows": counts.get(measurement),
                    "dataset_rows": want,
                }
            )
        if status == "failed":
            why = f"failed in {body.get('failed_phase', '?')}: {body.get('error', '')}"
        elif status == "missing":
            why = "no results for this target in result.json"
        elif status != "ok":
            why = f"{body.get('stopped_before', 'a phase')} never ran (no error recorded)"
        else:
            why = "finished every phase"
        checks.append(
            Check(
                f"{name}: finished every phase",
                "ExpectColumnValuesToBeInSet",
                {"column": "status", "value_set": ["ok"]},
                where=("target", name),
                observed=status,
                details=why,
            )
        )
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
            detail = f"after trial {len(trials)} of {len(trials)}"
        checks.append(
            Check(
                f"{name}: rows in the database = rows in the dataset, per measurement",
                "ExpectColumnPairValuesToBeEqual",
                {"column_A": "loaded_rows", "column_B": "dataset_rows", "ignore_row_if": "neither"},
                where=("target", name),
                observed={m: counts.get(m) for m in dataset_rows},
                details=detail,
            )
        )
    frame = pd.DataFrame(rows, columns=["target", "measurement", "status", "loaded_rows", "dataset_rows"])
    frame[["loaded_rows", "dataset_rows"]] = frame[["loaded_rows", "dataset_rows"]].astype("float64")
    return SuiteSpec("load", critical=True, frames=[Frame("targets", frame, checks)])
