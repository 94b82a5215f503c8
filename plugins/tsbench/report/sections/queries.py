"""The queries section: one row per query type with a cell per target (hot/cold stats, best qps)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tsbench.report import charts, client_share
from tsbench.report.sections.common import STATS_KEYS, colours, complete, describe, query_type_order, ranked
from tsbench.report.sections.status import TargetView
from tsbench.results.model import QueriesPhase, QueryStats, RunResult, TargetResult


def _stats_view(stats: QueryStats | None) -> dict[str, Any]:
    return complete(stats.to_json() if stats is not None else None, STATS_KEYS)


def ran_queries(body: TargetResult) -> QueriesPhase | None:
    """The target's query figures, None when it has none (never ran them, or an empty record)."""
    queries = body.queries
    return queries if queries is not None and queries.to_json() else None


def cell_for(target: TargetView, body: TargetResult, qtype: str) -> dict[str, Any]:
    """One target's figures for one type: ``kind`` ok | unsupported | failed | missing."""
    queries = ran_queries(body)
    unsupported = {**target.unsupported, **(queries.unsupported if queries else {})}
    if qtype in unsupported:
        return {"kind": "unsupported", "reason": unsupported[qtype]}
    if queries is None:
        return {"kind": "failed", "reason": target.problem or "no query figures"}
    if qtype not in queries.hot and qtype not in queries.cold:
        return {"kind": "missing", "reason": "not run"}
    hot = _stats_view(queries.hot.get(qtype))
    cold = _stats_view(queries.cold.get(qtype))
    errors = (hot["errors"] or 0) + (cold["errors"] or 0)
    mismatches = (hot["mismatches"] or 0) + (cold["mismatches"] or 0)
    clean = not errors and not mismatches and (hot["count"] or 0) > 0
    return {
        "kind": "ok",
        "hot": hot,
        "cold": cold,
        "qps": hot["qps"] if (hot["count"] or 0) > 0 else None,
        "errors": errors,
        "mismatches": mismatches,
        "clean": clean,
        "best": False,
    }


def _types_seen(run: RunResult, targets: Sequence[TargetView]) -> list[str]:
    """The spec's query types, then every type a target ran or declared unsupported."""
    seen: list[str] = list(run.spec.get("query_types") or [])
    for target in targets:
        queries = run.targets[target.name].queries or QueriesPhase()
        seen += [*queries.hot, *queries.cold, *queries.unsupported]
    return query_type_order(seen)


def _qps(row: Mapping[str, Any], target: TargetView) -> float | None:
    for item, cell in row["cells"]:
        if item.name == target.name:
            return cell.get("qps") if cell["kind"] == "ok" else None
    return None


def queries_section(run: RunResult, targets: Sequence[TargetView], prefix: str) -> dict[str, Any]:
    """Rows per type (cells, ranking of clean qps), wins per target, the hot qps chart, client share."""
    bodies = run.targets
    types = _types_seen(run, targets)
    rows = []
    wins: dict[str, int] = {}
    for qtype in types:
        cells = {t.name: cell_for(t, bodies[t.name], qtype) for t in targets}
        order = ranked({n: c["qps"] for n, c in cells.items() if c["kind"] == "ok" and c["clean"]}, True)
        if order:
            cells[order[0][0]]["best"] = True
            wins[order[0][0]] = wins.get(order[0][0], 0) + 1
        rows.append(
            {
                "type": qtype,
                "describe": describe(qtype),
                "cells": [(t, cells[t.name]) for t in targets],
                "ranked": order,
                "anchor": f"{prefix}q-{qtype}",
            }
        )
    series = {t.label: [_qps(row, t) for row in rows] for t in targets}
    chart = ""
    if rows and any(v for values in series.values() for v in values):
        chart = charts.grouped_bars(
            f"{prefix}qps-chart", [r["type"] for r in rows], series, colours(targets), "queries/s (hot)"
        )
    return {
        "types": types,
        "rows": rows,
        "chart": chart,
        "wins": wins,
        "client": client_share.query_client_rows({"rows": rows}, targets),
    }
