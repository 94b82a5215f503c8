"""Storage after load and settle, server resources per phase, and the cache reset before cold queries."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from tsbench.report import charts
from tsbench.report.sections.common import colours, leaders
from tsbench.report.sections.load import LoadRow
from tsbench.report.sections.status import TargetView
from tsbench.results.model import (
    CacheReset,
    CompressionFigures,
    FootprintFigures,
    FootprintPhase,
    Number,
    QueriesPhase,
    Resources,
    RunResult,
)
from tsbench.spec import RunSpec
from tsbench.verdicts.noise import FOOTPRINT_TOLERANCE


@dataclass(frozen=True)
class FootprintRow:
    """One target's storage in bytes after load and after settle: the database's own accounting
    (``db_*``) and the data folders' disk bytes (``disk_*``); ``parts`` and ``note`` as it counts."""

    target: TargetView
    db_load: Number | None
    db_settle: Number | None
    disk_load: Number | None
    disk_settle: Number | None
    parts: dict[str, Number]
    note: str
    missing: bool
    reason: str
    db_smallest: bool = False
    disk_smallest: bool = False
    compression: CompressionFigures | None = None  # after the load, where the run asked for it

    def stored(self, kind: str) -> Number | None:
        """``kind`` = db | disk: bytes after settle, else after load."""
        if kind == "db":
            return self.db_settle or self.db_load
        return self.disk_settle or self.disk_load


@dataclass(frozen=True)
class FootprintSection:
    """Rows per target, the settle period in seconds and the bytes chart (SVG, "" without figures)."""

    rows: list[FootprintRow]
    settle_seconds: Number | None
    chart: str


@dataclass(frozen=True)
class ResourceRow:
    """Server CPU (percent of one core) and RSS (bytes) of one target in one phase; ``missing``:
    no samples at all, ``phase`` then says why."""

    target: TargetView
    phase: str
    resources: Resources
    missing: bool = False


@dataclass(frozen=True)
class CacheRow:
    """The cache reset before one target's cold pass (seconds to stop and start); ``reset`` None
    when it did not run, ``reason`` then says why."""

    target: TargetView
    reset: CacheReset | None
    reason: str


def _footprint_row(target: TargetView, footprint: FootprintPhase) -> FootprintRow:
    load = footprint.after_load or FootprintFigures()
    settle = footprint.after_settle or FootprintFigures()
    shown = settle if settle.to_json() else load
    return FootprintRow(
        target=target,
        db_load=load.bytes,
        db_settle=settle.bytes,
        disk_load=load.disk_bytes,
        disk_settle=settle.disk_bytes,
        parts=shown.parts,
        note=shown.note,
        missing=not footprint.to_json(),
        reason=target.problem or "no footprint figures",
        compression=footprint.compression,
    )


def footprint_section(run: RunResult, targets: Sequence[TargetView], prefix: str) -> FootprintSection:
    """Bytes per target (DB's own accounting and disk; smallest marked), settle period, chart."""
    rows = []
    settle_seconds = None
    for target in targets:
        footprint = run.targets[target.name].footprint or FootprintPhase()
        if footprint.has("settle_seconds"):
            settle_seconds = footprint.settle_seconds
        rows.append(_footprint_row(target, footprint))
    db = leaders({r.target.name: r.stored("db") for r in rows}, {}, False, FOOTPRINT_TOLERANCE)
    disk = leaders({r.target.name: r.stored("disk") for r in rows}, {}, False, FOOTPRINT_TOLERANCE)
    rows = [replace(r, db_smallest=r.target.name in db, disk_smallest=r.target.name in disk) for r in rows]
    chart = ""
    if any(not r.missing for r in rows):
        chart = charts.grouped_bars(
            f"{prefix}footprint-chart",
            ["DB's own accounting", "disk bytes of the data folders"],
            {r.target.label: [r.db_settle, r.disk_settle] for r in rows},
            colours(targets),
            "bytes",
            rotate=False,
        )
    return FootprintSection(rows=rows, settle_seconds=settle_seconds, chart=chart)


def resources_section(
    run: RunResult, targets: Sequence[TargetView], load_rows: Sequence[LoadRow]
) -> list[ResourceRow]:
    """Server CPU/RSS per target and phase (the median load trial, the query passes)."""
    rows = []
    trials = RunSpec.recorded(run.spec).trials
    for target, load_row in zip(targets, load_rows, strict=True):
        queries = run.targets[target.name].queries or QueriesPhase()
        if load_row.resources is not None:
            phase = "load" + (
                f" (trial {load_row.trial_number} of {trials}, the median)" if trials > 1 else ""
            )
            rows.append(ResourceRow(target, phase, load_row.resources))
        if queries.resources is not None and queries.resources.to_json():
            passes = 1 + queries.hot_passes
            phase = f"queries (cold + {passes - 1} hot pass{'es' if passes > 2 else ''})"
            rows.append(ResourceRow(target, phase, queries.resources))
        elif load_row.resources is None:
            rows.append(ResourceRow(target, target.problem or "no samples", Resources(), missing=True))
    return rows


def cache_rows(run: RunResult, targets: Sequence[TargetView]) -> list[CacheRow]:
    """The cache reset before the cold pass, per target (``reset`` None when it did not run)."""
    return [
        CacheRow(target, run.targets[target.name].cache_reset, target.problem or "not run")
        for target in targets
    ]
