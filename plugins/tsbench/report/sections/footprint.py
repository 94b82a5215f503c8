"""Storage after load and settle, server resources per phase, and the cache reset before cold queries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tsbench.report import charts
from tsbench.report.sections.common import RESET_KEYS, RESOURCE_KEYS, colours, complete, ranked
from tsbench.report.sections.status import TargetView
from tsbench.results.model import FootprintFigures, FootprintPhase, QueriesPhase, RunResult


def _footprint_row(target: TargetView, footprint: FootprintPhase) -> dict[str, Any]:
    load = footprint.after_load or FootprintFigures()
    settle = footprint.after_settle or FootprintFigures()
    shown = settle if settle.to_json() else load
    return {
        "target": target,
        "db_load": load.bytes,
        "db_settle": settle.bytes,
        "disk_load": load.disk_bytes,
        "disk_settle": settle.disk_bytes,
        "parts": shown.parts,
        "note": shown.note,
        "missing": not footprint.to_json(),
        "reason": target.problem or "no footprint figures",
    }


def stored_bytes(row: Mapping[str, Any], key: str) -> int | None:
    """``key`` = db | disk: bytes after settle, else after load."""
    return row[f"{key}_settle"] or row[f"{key}_load"]


def footprint_section(run: RunResult, targets: Sequence[TargetView], prefix: str) -> dict[str, Any]:
    """Bytes per target (DB's own accounting and disk; smallest marked), settle period, chart."""
    rows = []
    settle_seconds = None
    for target in targets:
        footprint = run.targets[target.name].footprint or FootprintPhase()
        if footprint.has("settle_seconds"):
            settle_seconds = footprint.settle_seconds
        rows.append(_footprint_row(target, footprint))
    for key in ("db", "disk"):
        order = ranked({r["target"].name: stored_bytes(r, key) for r in rows}, False)
        for row in rows:
            row[f"{key}_smallest"] = bool(order) and row["target"].name == order[0][0]
    chart = ""
    if any(not r["missing"] for r in rows):
        chart = charts.grouped_bars(
            f"{prefix}footprint-chart",
            ["DB's own accounting", "disk bytes of the data folders"],
            {r["target"].label: [r["db_settle"], r["disk_settle"]] for r in rows},
            colours(targets),
            "bytes",
            rotate=False,
        )
    return {"rows": rows, "settle_seconds": settle_seconds, "chart": chart}


def resources_section(
    run: RunResult, targets: Sequence[TargetView], load_rows: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Server CPU/RSS per target and phase (the median load trial, the query passes)."""
    rows = []
    trials = run.spec.get("trials", 1)
    for target, load_row in zip(targets, load_rows, strict=True):
        queries = run.targets[target.name].queries or QueriesPhase()
        resources = queries.resources.to_json() if queries.resources is not None else {}
        if load_row.get("resources"):
            phase = "load" + (
                f" (trial {load_row['trial_number']} of {trials}, the median)" if trials > 1 else ""
            )
            rows.append({"target": target, "phase": phase, **complete(load_row["resources"], RESOURCE_KEYS)})
        if resources:
            passes = 1 + queries.hot_passes
            phase = f"queries (cold + {passes - 1} hot pass{'es' if passes > 2 else ''})"
            rows.append({"target": target, "phase": phase, **complete(resources, RESOURCE_KEYS)})
        if not load_row.get("resources") and not resources:
            rows.append({"target": target, "phase": target.problem or "no samples", "missing": True})
        for row in rows:
            row.setdefault("missing", False)
    return rows


def cache_rows(run: RunResult, targets: Sequence[TargetView]) -> list[dict[str, Any]]:
    """The cache reset before the cold pass, per target (``reset`` None when it did not run)."""
    rows = []
    for target in targets:
        reset = run.targets[target.name].cache_reset
        rows.append(
            {
                "target": target,
                "reset": complete(reset.to_json(), RESET_KEYS) if reset is not None else None,
                "reason": target.problem or "not run",
            }
        )
    return rows
