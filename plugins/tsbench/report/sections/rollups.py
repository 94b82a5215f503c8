"""Rollups (run option ``rollup_after_load``): what each target built, in how long and how much
space, and per query type its rate on the rollup beside the raw data's hot rate — the space-for-time
trade-off study E discusses."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tsbench.report.sections.status import TargetView
from tsbench.results.model import (
    FootprintFigures,
    FootprintPhase,
    Number,
    QueriesPhase,
    RollupFigures,
    RunResult,
)


@dataclass(frozen=True)
class RollupTypeRow:
    """One query type: queries/s on the raw data (hot passes) and on the rollup, and their ratio."""

    qtype: str
    raw_qps: Number | None
    rollup_qps: Number | None

    @property
    def speedup(self) -> float | None:
        if not self.raw_qps or not self.rollup_qps:
            return None
        return float(self.rollup_qps) / float(self.raw_qps)


@dataclass(frozen=True)
class RollupRow:
    """One target's rollup, the raw data's bytes beside it (after settle, the database's own
    accounting of the table it rolls up — the whole footprint when the target reports no part per
    table) and the types it answered."""

    target: TargetView
    rollup: RollupFigures
    raw_bytes: Number | None
    types: list[RollupTypeRow]


def rollup_rows(run: RunResult, targets: Sequence[TargetView]) -> list[RollupRow]:
    """A row per target that built a rollup (empty when the run asked for none)."""
    rows = []
    for target in targets:
        body = run.targets[target.name]
        queries = body.queries or QueriesPhase()
        if queries.rollup is None:
            continue
        footprint = body.footprint or FootprintPhase()
        stored = footprint.after_settle or footprint.after_load
        types = [
            RollupTypeRow(qtype, queries.hot[qtype].qps if qtype in queries.hot else None, stats.qps)
            for qtype, stats in queries.rollup.on_rollup.items()
        ]
        rows.append(
            RollupRow(target, queries.rollup, rolled_up_table_bytes(stored, queries.rollup.source), types)
        )
    return rows


def rolled_up_table_bytes(stored: FootprintFigures | None, source: str) -> Number | None:
    """The parts of ``source`` (``cpu``, or ``cpu.table`` + ``cpu.indexes`` + …), else the whole."""
    if stored is None:
        return None
    own = [size for part, size in stored.parts.items() if source and part.split(".")[0] == source]
    return sum(own) if own else stored.bytes
