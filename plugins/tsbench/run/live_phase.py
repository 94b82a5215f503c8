"""The live phase of one target (``tsbench.measure.live`` drives it): after the queries, on the
loaded server, ingest continues past the history while query clients read what it has closed.

The offered rate is the run's ``live_rate``: rows/s, or a fraction of the rate this target's load
measured (its median trial). The mix is the run's queries that the target answers. The live rows
lie in days of their own after the history (``tsbench.workload.live_rows``); a retried phase first
removes what an earlier attempt wrote, and the phase removes its own rows at the end where the
target can (``Target.remove_rows_from``), so the history is left as loaded. Where it cannot, the
record says the rows stayed (a later point of a server group loads afresh in any case).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from tsbench.measure.live import LiveSettings, run_live
from tsbench.measure.resources import ResourceSampler
from tsbench.results.folder import PointFolder, TargetFolder
from tsbench.results.live_records import LivePhase
from tsbench.results.phase_records import LoadPhase, Resources
from tsbench.runtimes.base import Server
from tsbench.spec import RunSpec, live_rate_parts
from tsbench.targets.base import Target, TargetError
from tsbench.timeutil import NS_PER_DAY, format_instant
from tsbench.workload.answer_file import AnswerFile
from tsbench.workload.answers import Answer
from tsbench.workload.dataset import Dataset
from tsbench.workload.live_queries import LiveMix
from tsbench.workload.live_rows import Frontier, LiveRows
from tsbench.workload.queries import LogicalQuery, read_query_set

log = logging.getLogger("tsbench.live")


class TargetPhases(Protocol):
    """What the live phase uses of a target's phases (``tsbench.run.target_phases``)."""

    name: str
    spec: RunSpec
    folder: TargetFolder
    point: PointFolder
    target_type: type[Target]

    @property
    def dataset(self) -> Dataset: ...

    def server(self) -> Server: ...

    def connect(self) -> AbstractContextManager[Target]: ...

    def expected_rows(self, target: Target) -> dict[str, int]: ...

    @property
    def answers(self) -> Path: ...


def offered_rows_per_s(phases: TargetPhases) -> tuple[float, str]:
    """The live ingest's offered rows/s and how it was chosen."""
    value, fraction = live_rate_parts(phases.spec.live_rate)
    if not fraction:
        return value, "rows/s given"
    loaded = phases.folder.read(LoadPhase)
    measured = loaded.median_rows_per_s if loaded is not None else None
    if not measured:
        raise TargetError(
            f"{phases.name}: live_rate {phases.spec.live_rate} needs the load's rate; none was measured"
        )
    return value * measured, f"{value:g} × the load's median {measured:,.0f} rows/s"


def live(phases: TargetPhases) -> LivePhase:
    """The phase's record (see the module docstring)."""
    spec, dataset = phases.spec, phases.dataset
    if not spec.live_seconds:
        return LivePhase(note="no live phase in this run (live_seconds 0)")
    rate, rate_from = offered_rows_per_s(phases)
    rows_due = math.ceil(rate * spec.live_seconds * (1 + len(spec.query_rate_ramp)))
    unsupported = phases.target_type.capabilities.unsupported
    queries = (
        [q for q in read_query_set(phases.point.queries) if q.type not in unsupported]
        if spec.query_rate
        else []
    )
    history_rows = sum(dataset.rows.values())
    cycles = max(1, math.ceil(rows_due / history_rows))
    settings = LiveSettings(
        seconds=spec.live_seconds,
        rows_per_s=rate,
        batch_rows=spec.live_batch_size,
        ingest_workers=spec.workers,
        query_per_s=spec.query_rate,
        query_workers=spec.query_workers,
        ramp=tuple(spec.query_rate_ramp),
        slo_p99_ms=spec.slo_p99_ms,
    )
    server = phases.server()
    with phases.connect() as target:
        rows = LiveRows(dataset, spec.live_batch_size, rows_due)
        _remove_live_rows(target, phases, rows.start_ns, "an earlier attempt's", required=True)
        mix = LiveMix(queries, rows.shift_ns, cycles)
        log.info(
            "%s live: %.0f rows/s offered (%s) for %.0f s, %s queries/s of %d types by %d clients",
            phases.name,
            rate,
            rate_from,
            spec.live_seconds,
            spec.query_rate,
            len(mix.types),
            spec.query_workers,
        )
        with ResourceSampler(server.usage_probe()) as sampler:
            record = run_live(target, Frontier(rows), mix, _expected(phases, queries), settings)
        removed = _remove_live_rows(target, phases, rows.start_ns, "its own", required=False)
    ingest = record.ingest.model_copy(update={"rate_from": rate_from})
    return record.model_copy(
        update={
            "ingest": ingest,
            "live_start": format_instant(rows.start_ns),
            "shift_days": rows.shift_ns / NS_PER_DAY,
            "rows_removed": removed,
            "resources": Resources.from_json(sampler.summary()),
        }
    )


def _expected(phases: TargetPhases, queries: list[LogicalQuery]) -> Mapping[str, Answer]:
    return AnswerFile(phases.answers) if queries else {}


def _remove_live_rows(
    target: Target, phases: TargetPhases, start_ns: int, whose: str, required: bool
) -> bool:
    """Remove every row at or after ``start_ns`` (the live rows) where the target can; whether no
    live row is left. When ``required``, rows the target cannot remove fail the phase."""
    expected = phases.expected_rows(target)
    held = {m: target.count_rows(m, phases.dataset.complete_fields(m)) for m in phases.dataset.measurements}
    extra = [m for m in held if held[m] > expected.get(m, 0)]
    if not extra:
        return True
    try:
        for measurement in extra:
            target.remove_rows_from(measurement, start_ns)
    except TargetError as error:
        if required:
            raise TargetError(f"{phases.name}: {whose} live rows cannot be removed: {error}") from error
        log.warning("%s: %s live rows stay (%s)", phases.name, whose, error)
        return False
    left = {m: target.count_rows(m, phases.dataset.complete_fields(m)) for m in extra}
    if any(left[m] != expected.get(m, 0) for m in extra):
        raise TargetError(
            f"{phases.name}: after removing {whose} live rows {left} rows remain, not {expected}"
        )
    log.info("%s: %s live rows removed (%s)", phases.name, whose, {m: held[m] - left[m] for m in extra})
    return True
