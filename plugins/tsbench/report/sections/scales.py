"""Figures per scale × database, when one document covers several scales (study A/B's shape)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tsbench.report import charts, fmt
from tsbench.report.sections.common import HEADLINE_TYPES, colours, ranked
from tsbench.report.sections.footprint import stored_bytes
from tsbench.report.sections.status import TargetView

ACROSS_TYPES = 5


def _row(
    scale: Mapping[str, Any], targets: Sequence[TargetView], values: Mapping[str, Any], higher: bool
) -> dict[str, Any]:
    """One scale's cells (target, value, best?)."""
    order = ranked(values, higher)
    return {
        "scale": scale["scale"],
        "prefix": scale["prefix"],
        "cells": [(t, values.get(t.name), bool(order) and order[0][0] == t.name) for t in targets],
    }


def _clean_qps(scale: Mapping[str, Any], qtype: str) -> dict[str, Any]:
    qps: dict[str, Any] = {}
    for query_row in scale["queries"]["rows"]:
        if query_row["type"] == qtype:
            qps = {t.name: c["qps"] for t, c in query_row["cells"] if c["kind"] == "ok" and c["clean"]}
    return qps


def _load_chart(
    scales: Sequence[Mapping[str, Any]], targets: Sequence[TargetView], load_rows: Sequence[Any]
) -> str:
    labels = [fmt.integer(s["scale"]) for s in scales]
    series = {
        t.label: [dict((c[0].name, c[1]) for c in r["cells"]).get(t.name) for r in load_rows] for t in targets
    }
    series = {label: values for label, values in series.items() if any(v is not None for v in values)}
    if not series:
        return ""
    return charts.trend_chart(
        "scales-load",
        labels,
        series,
        colours(targets),
        "Load rate by scale",
        "rows/s",
        xlabel="scale (hosts)",
    )


def across_scales_section(scales: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Load rate, footprint and headline query types per scale × database (None with one scale)."""
    if len(scales) < 2:
        return None
    names = list(dict.fromkeys(t.name for s in scales for t in s["targets"]))
    views = {t.name: t for s in scales for t in s["targets"]}
    targets = [views[name] for name in names]
    load_rows = [
        _row(s, targets, {r["target"].name: r["rows_per_s"] for r in s["load"]["rows"]}, True) for s in scales
    ]
    footprint_rows = [
        _row(s, targets, {r["target"].name: stored_bytes(r, "disk") for r in s["footprint"]["rows"]}, False)
        for s in scales
    ]
    present = [t for t in HEADLINE_TYPES if any(t in s["queries"]["types"] for s in scales)][:ACROSS_TYPES]
    query_rows = [
        {"type": qtype, **_row(s, targets, _clean_qps(s, qtype), True)} for qtype in present for s in scales
    ]
    return {
        "targets": targets,
        "load": load_rows,
        "footprint": footprint_rows,
        "queries": query_rows,
        "chart": _load_chart(scales, targets, load_rows),
    }
