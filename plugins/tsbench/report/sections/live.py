"""The live phase (run option ``live_seconds``): per target, the offered ingest beside what it
achieved and the write latency from each batch's due time; per query type, the latency under
ingest beside the same queries without it. A caveat wherever the client fell behind its schedule:
then the offered load never reached the server in full, and the latencies are lower bounds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tsbench.report.sections.status import TargetView
from tsbench.results.live_records import LivePhase, LiveQueryType, OpenLoopFigures
from tsbench.results.model import RunResult

# The client is called the limit when the sends' p99 lag exceeds this, or arrivals went unsent.
CLIENT_LAG_MS = 100.0


def client_fell_behind(figures: OpenLoopFigures) -> bool:
    return figures.unsent > 0 or figures.lag_ms.p99 > CLIENT_LAG_MS


@dataclass(frozen=True)
class LiveTypeRow:
    """One query type's live figures (under ingest, without, the ratio, the checks)."""

    qtype: str
    figures: LiveQueryType


@dataclass(frozen=True)
class LiveRow:
    """One target's live phase, its query types, and what went wrong with the client, if anything."""

    target: TargetView
    live: LivePhase
    types: list[LiveTypeRow]
    caveats: list[str]


def _caveats(live: LivePhase) -> list[str]:
    found = []
    ingest = live.ingest
    if client_fell_behind(ingest):
        found.append(
            f"the ingest fell behind its schedule (send lag p99 {ingest.lag_ms.p99:,.0f} ms, "
            f"{ingest.unsent:,} of {ingest.offered:,} batches never sent): the server did not take the "
            "offered rate, or the client could not offer it; the write latencies are lower bounds"
        )
    behind = [qtype for qtype, row in live.queries.items() if client_fell_behind(row.under_ingest)]
    if behind:
        found.append(
            f"the query clients fell behind their schedule for {', '.join(behind)}: more query_workers, "
            "or the server's limit; their latencies are lower bounds"
        )
    mismatched = sum(row.mismatches for row in live.queries.values())
    if mismatched:
        found.append(f"{mismatched} live answers differed from the reference")
    if not live.rows_removed:
        found.append("the live rows stayed in the database after the phase (the target cannot remove rows)")
    return found


def live_rows(run: RunResult, targets: Sequence[TargetView]) -> list[LiveRow]:
    """A row per target whose live phase ran (empty when the run had none)."""
    rows = []
    for target in targets:
        live = run.targets[target.name].live
        if live is None or not live.seconds:
            continue
        types = [LiveTypeRow(qtype, figures) for qtype, figures in live.queries.items()]
        rows.append(LiveRow(target, live, types, _caveats(live)))
    return rows
