"""Freshness: how long after a write was acknowledged a query sees it.

While the live ingest runs, a probe every ``EVERY_S`` waits for the next acknowledged batch of the queried
measurement and at once reads that batch's last row back by its entity and exact instant (the
``ycsb-read`` query type, rendered by the target like any query), every ``POLL_S`` until the row is
there. Freshness is the time from the batch's acknowledgement to the first read that returned it:
its resolution is the poll interval plus one read. A row not seen within ``GIVE_UP_S`` counts as
not visible. A row seen confirms its batch, and every batch acknowledged before it, visible
(``Frontier.confirm_visible``): the live queries read only windows so confirmed (a target whose
writes become visible after their acknowledgement would otherwise be read where they are not yet).
Use cases without a type that reads one entity's row at an instant (iot) are not probed, and the
record says so; their queries read windows closed ``UNPROBED_MARGIN_S`` ago.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import pyarrow.compute as pc
from hdrh.histogram import HdrHistogram

from tsbench.measure.open_loop import LOWEST_US, new_histogram
from tsbench.targets.base import Target
from tsbench.workload.live_rows import Frontier
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_types import QUERY_TYPES
from tsbench.workload.usecases import UseCase

PROBE_TYPE = "ycsb-read"
EVERY_S = 0.5
POLL_S = 0.005
GIVE_UP_S = 10.0
UNPROBED_MARGIN_S = 1.0


@dataclass
class FreshnessResult:
    """Probes sent, rows never seen within ``GIVE_UP_S``, the histogram of freshness (µs), and why
    nothing was probed (empty when probes ran)."""

    probes: int = 0
    not_visible: int = 0
    errors: int = 0
    histogram: HdrHistogram = field(default_factory=new_histogram)
    not_probed: str = ""


def probe_unavailable(use_case: UseCase, target: Target) -> str:
    """Why this target cannot be probed for this use case ('' when it can)."""
    if QUERY_TYPES[PROBE_TYPE].family not in use_case.query_families:
        return f"use case {use_case.name} has no query that reads one entity's row at an instant"
    if PROBE_TYPE in target.capabilities.unsupported:
        return f"{target.name} does not answer {PROBE_TYPE}: {target.capabilities.unsupported[PROBE_TYPE]}"
    return ""


class FreshnessProbe:
    """Probes on a thread of their own until ``stop()``; ``result`` then holds the figures."""

    def __init__(self, target: Target, frontier: Frontier, use_case: UseCase):
        self.target, self.frontier, self.use_case = target, frontier, use_case
        self.result = FreshnessResult(not_probed=probe_unavailable(use_case, target))
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="live-freshness", daemon=True)

    def start(self) -> None:
        if not self.result.not_probed:
            self._thread.start()

    def stop(self) -> FreshnessResult:
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join()
        return self.result

    def _run(self) -> None:
        session = self.target.session()
        try:
            while not self._stopping.is_set():
                started = time.perf_counter()
                newest = self.frontier.acknowledged_after(self.use_case.queried, started, EVERY_S)
                if newest is not None:
                    batch, acknowledged_at = newest
                    self._probe(session, self._query(batch.batch, batch.index), acknowledged_at)
                self._stopping.wait(max(0.0, EVERY_S - (time.perf_counter() - started)))
        finally:
            session.close()

    def visible_before(self) -> int:
        """Where the live queries may read up to: the windows a probe confirmed visible, or (when
        no probe can run) those closed ``UNPROBED_MARGIN_S`` ago."""
        if self.result.not_probed:
            return self.frontier.closed_before(UNPROBED_MARGIN_S)
        return self.frontier.visible_before()

    def _query(self, rows: object, index: int) -> LogicalQuery:
        """The batch's newest row (never a late row or a copy, whose older version a database
        keeping the last write would already show)."""
        entity = self.use_case.entity_key
        last = pc.index(rows.column("time"), pc.max(rows.column("time"))).as_py()  # type: ignore[attr-defined]
        return LogicalQuery(
            id=f"probe#{index}",
            type=PROBE_TYPE,
            fields=self.use_case.query_fields[: QUERY_TYPES[PROBE_TYPE].nfields],
            hosts=(str(rows.column(entity)[last].as_py()),),  # type: ignore[attr-defined]
            at_ns=rows.column("time")[last].cast("int64").as_py(),  # type: ignore[attr-defined]
            measurement=self.use_case.queried,
            entity=entity,
        )

    def _probe(self, session: object, query: LogicalQuery, acknowledged_at: float) -> None:
        text = self.target.render(query)
        self.result.probes += 1
        deadline = acknowledged_at + GIVE_UP_S
        while True:
            try:
                seen = bool(session.execute(text))  # type: ignore[attr-defined]
            except Exception:
                self.result.errors += 1
                return
            now = time.perf_counter()
            if seen:
                self.result.histogram.record_value(max(LOWEST_US, round((now - acknowledged_at) * 1e6)))
                self.frontier.confirm_visible(acknowledged_at)
                return
            if now >= deadline:
                self.result.not_visible += 1
                return
            time.sleep(POLL_S)
