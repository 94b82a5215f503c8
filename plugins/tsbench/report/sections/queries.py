"""The queries section: one row per query type with a cell per target (hot/cold stats, best qps)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from tsbench.report import charts
from tsbench.report.sections.client_share import ClientRow, ClientShare
from tsbench.report.sections.common import colours, describe, lead_over, leaders, query_type_order, ranked
from tsbench.report.sections.status import TargetView
from tsbench.report.spread import Spread, spread
from tsbench.results.model import Number, QueriesPhase, QueryStats, RunResult, TargetResult
from tsbench.verdicts.noise import RATE_TOLERANCE, Gap, Lead


@dataclass(frozen=True)
class QueryCell:
    """One target's figures for one query type: ``kind`` ok | unsupported | failed | missing
    (``reason`` says why when not ok); hot/cold latency stats in ms, hot queries/s, error and
    wrong-answer counts over both, ``clean`` without either, ``best`` the highest clean qps."""

    kind: str
    reason: str = ""
    hot: QueryStats = field(default_factory=QueryStats)
    cold: QueryStats = field(default_factory=QueryStats)
    qps: Number | None = None
    errors: int = 0
    mismatches: int = 0
    clean: bool = False
    best: bool = False
    spread: Spread | None = None  # of the hot passes' queries/s (≥ 2 passes)

    def repeats(self) -> tuple[float, ...]:
        """Queries/s of every hot pass (the noise rule's repeats); empty without a figure."""
        if self.qps is None:
            return ()
        return self.spread.values if self.spread is not None else (float(self.qps),)


@dataclass(frozen=True)
class QueryRow:
    """One query type: a cell per target, the clean qps ranking (best first) and its anchor."""

    type: str
    describe: str
    cells: list[tuple[TargetView, QueryCell]]
    ranked: list[tuple[str, float]]
    anchor: str
    lead: Gap | None = None  # the best against the runner-up (None: fewer than two clean figures)

    def repeats(self) -> dict[str, tuple[float, ...]]:
        """Each clean target's hot passes' queries/s, by name."""
        return {t.name: cell.repeats() for t, cell in self.cells if cell.clean and cell.repeats()}

    def won(self) -> str | None:
        """The target that leads the type beyond noise (a single clean figure leads alone)."""
        if not self.ranked or (self.lead is not None and self.lead.lead is not Lead.FIRST):
            return None
        return self.ranked[0][0]

    def cell(self, target: TargetView) -> QueryCell | None:
        """``target``'s cell (None when it is not in this row)."""
        return next((cell for item, cell in self.cells if item.name == target.name), None)


@dataclass(frozen=True)
class QueriesSection:
    """The query types in order, a row per type, wins (best clean qps) per target name, the hot
    qps chart (SVG, "" without figures) and the client's CPU per type."""

    types: list[str]
    rows: list[QueryRow]
    chart: str
    wins: dict[str, int]  # types each target leads beyond noise
    client: list[ClientRow]
    ties: int = 0  # types whose best and runner-up are within noise of each other


def ran_queries(body: TargetResult) -> QueriesPhase | None:
    """The target's query figures, None when it has none (never ran them, or an empty record)."""
    queries = body.queries
    return queries if queries is not None and queries.to_json() else None


def cell_for(target: TargetView, body: TargetResult, qtype: str) -> QueryCell:
    """One target's figures for one type: ``kind`` ok | unsupported | failed | missing."""
    queries = ran_queries(body)
    unsupported = {**target.unsupported, **(queries.unsupported if queries else {})}
    if qtype in unsupported:
        return QueryCell("unsupported", reason=unsupported[qtype])
    if queries is None:
        return QueryCell("failed", reason=target.problem or "no query figures")
    if qtype not in queries.hot and qtype not in queries.cold:
        return QueryCell("missing", reason="not run")
    hot = queries.hot.get(qtype) or QueryStats()
    cold = queries.cold.get(qtype) or QueryStats()
    errors = (hot.errors or 0) + (cold.errors or 0)
    mismatches = (hot.mismatches or 0) + (cold.mismatches or 0)
    ran = (hot.count or 0) > 0
    return QueryCell(
        "ok",
        hot=hot,
        cold=cold,
        qps=hot.qps if ran else None,
        errors=errors,
        mismatches=mismatches,
        clean=not errors and not mismatches and ran,
        spread=spread(queries.hot_qps_by_pass.get(qtype, [])),
    )


def _types_seen(run: RunResult, targets: Sequence[TargetView]) -> list[str]:
    """The spec's query types, then every type a target ran or declared unsupported."""
    seen: list[str] = list(run.spec.get("query_types") or [])
    for target in targets:
        queries = run.targets[target.name].queries or QueriesPhase()
        seen += [*queries.hot, *queries.cold, *queries.unsupported]
    return query_type_order(seen)


def _qps(row: QueryRow, target: TargetView) -> Number | None:
    cell = row.cell(target)
    return cell.qps if cell is not None and cell.kind == "ok" else None


def _row(run: RunResult, targets: Sequence[TargetView], qtype: str, prefix: str) -> QueryRow:
    """One type's cells, the best clean qps marked."""
    cells = {t.name: cell_for(t, run.targets[t.name], qtype) for t in targets}
    clean = {n: c.qps for n, c in cells.items() if c.kind == "ok" and c.clean}
    order = ranked(clean, True)
    for name in leaders(clean, {n: cells[n].repeats() for n in clean}, True, RATE_TOLERANCE):
        cells[name] = replace(cells[name], best=True)
    row = QueryRow(qtype, describe(qtype), [(t, cells[t.name]) for t in targets], order, f"{prefix}q-{qtype}")
    if len(order) < 2:
        return row
    return replace(row, lead=lead_over(row.repeats(), order[0][0], order[1][0], True, RATE_TOLERANCE))


def queries_section(run: RunResult, targets: Sequence[TargetView], prefix: str) -> QueriesSection:
    """Rows per type (cells, ranking of clean qps), wins per target, the hot qps chart, client share."""
    types = _types_seen(run, targets)
    rows = [_row(run, targets, qtype, prefix) for qtype in types]
    wins: dict[str, int] = {}
    for row in rows:
        if (winner := row.won()) is not None:
            wins[winner] = wins.get(winner, 0) + 1
    ties = sum(1 for row in rows if row.ranked and row.won() is None)
    series = {t.label: [_qps(row, t) for row in rows] for t in targets}
    chart = ""
    if rows and any(v for values in series.values() for v in values):
        chart = charts.grouped_bars(
            f"{prefix}qps-chart", [r.type for r in rows], series, colours(targets), "queries/s (hot)"
        )
    return QueriesSection(
        types=types, rows=rows, chart=chart, wins=wins, client=query_client_rows(rows), ties=ties
    )


def query_client_rows(rows: Sequence[QueryRow]) -> list[ClientRow]:
    """Per query type, each target's client CPU-seconds and share over its hot passes."""
    out = []
    for row in rows:
        cells = []
        for target, cell in row.cells:
            hot = cell.hot if cell.kind == "ok" else None
            share = ClientShare(hot.client_cpu_s, hot.client_share) if hot is not None else ClientShare()
            cells.append((target, share))
        if any(c.cpu_s is not None for _, c in cells):
            out.append(ClientRow(row.type, cells))
    return out
