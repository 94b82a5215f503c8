"""What each stage of a run costs, as measured: time, CPU, peak memory of the orchestrating process
and bytes stored, at several sizes on one machine (``measured_costs.json`` beside this module,
written by ``bench/stage_costs.py --coefficients``), and the rule that reads them at another size.

Size rule (``StageCurve.at``): a figure at ``rows`` is read off the line through the two measured
sizes around it (its fixed part and its part per row; below the smallest, the two smallest; beyond
the largest, the two largest), never below zero. Beyond the largest, where the stage grew faster
than linearly between the two largest (exponent > ``SUPERLINEAR_B``), it is read off the power law
through them instead, so an estimate never assumes the growth straightens out; where it fell
between them (noise, a warm cache) it is held at the largest size's value. Memory is read the same
way, except that a peak memory that did not grow between the two largest sizes (``memory_grows``: by
more than 25 % and 100 MB) is flat and is held at the larger of the two beyond them: a flat stage
stays flat (a 36 MB rise over 9 M rows is noise, not 42 GB at 10 B rows), a growing one keeps growing.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from tsbench.timeutil import parse_duration

COSTS_FILE = Path(__file__).with_name("measured_costs.json")
FORMAT = "tsbench-measured-costs/1"
SUPERLINEAR_B = 1.15
EXTRAPOLATED = 10  # a figure read this many times beyond the largest measured size says so
FIGURES = ("wall_s", "cpu_s", "peak_rss_bytes", "stored_bytes")
MEMORY_GROWTH = 1.25  # a peak memory grows between two sizes when it rises by more than 25 % …
MEMORY_GROWTH_BYTES = 100e6  # … and by more than 100 MB


def memory_grows(smaller: float, larger: float) -> bool:
    """Whether a peak memory measured at two sizes grows (else it is flat: noise)."""
    return larger > MEMORY_GROWTH * smaller and larger - smaller > MEMORY_GROWTH_BYTES


@dataclass(frozen=True)
class MeasuredWorkload:
    """What the measured runs did per size, by which the plan divides (per query, per trial)."""

    use_case: str
    duration: str
    interval_s: int
    query_types: int
    queries_per_type: int
    query_passes: int  # passes over the query set per target (cold + hot)
    trials: int
    workers: int
    batch_size: int

    @property
    def queries(self) -> int:
        return self.query_types * self.queries_per_type

    @property
    def rows_per_entity(self) -> int:
        """Rows of one host over the measured span (the sizes grew by hosts at this span)."""
        return parse_duration(self.duration) // (self.interval_s * 10**9)


@dataclass(frozen=True)
class Measurement:
    """Where and when the figures were measured."""

    date: str
    command: str
    commit: str
    cores: int
    memory_bytes: int
    workload: MeasuredWorkload

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> Measurement:
        workload = {k: body["workload"][k] for k in MeasuredWorkload.__dataclass_fields__}
        return cls(
            date=body["date"],
            command=body["command"],
            commit=body["tsbench_commit"],
            cores=body["machine"]["cores"],
            memory_bytes=body["machine"]["memory_bytes"],
            workload=MeasuredWorkload(**workload),
        )


@dataclass(frozen=True)
class StageCurve:
    """One stage's figures (``FIGURES``, those it has) at its measured sizes, smallest first."""

    name: str
    rows: tuple[int, ...]
    figures: dict[str, tuple[float, ...]]
    measurement: Measurement

    def has(self, figure: str) -> bool:
        return figure in self.figures

    def _segment(self, rows: int) -> int:
        """The index of the measured size the figure at ``rows`` is read from with the next one: the
        two sizes around ``rows``, or the two smallest below them, or the two largest beyond them."""
        inside = [i for i in range(len(self.rows) - 1) if rows <= self.rows[i + 1]]
        return inside[0] if inside else len(self.rows) - 2

    def exponent(self, figure: str, rows: int | None = None) -> float | None:
        """b in figure ∝ rows^b between the two sizes read at ``rows`` (default: the two largest);
        None where a figure is ≤ 0."""
        i = self._segment(rows if rows is not None else self.rows[-1] + 1)
        (r1, r2), (v1, v2) = self.rows[i : i + 2], self.figures[figure][i : i + 2]
        return math.log(v2 / v1) / math.log(r2 / r1) if v1 > 0 and v2 > 0 else None

    def at(self, figure: str, rows: int) -> float:
        """The figure at ``rows`` (the size rule of the module docstring)."""
        i = self._segment(rows)
        (r1, r2), (v1, v2) = self.rows[i : i + 2], self.figures[figure][i : i + 2]
        b = self.exponent(figure, rows)
        if rows > r2 and b is not None and b > SUPERLINEAR_B:
            return v2 * (rows / r2) ** b
        if rows > r2 and v2 < v1:  # a figure that fell between the two sizes is not read to fall on
            return v2
        if rows > r2 and figure == "peak_rss_bytes" and not memory_grows(v1, v2):
            return max(v1, v2)
        return max(0.0, v1 + (v2 - v1) * (rows - r1) / (r2 - r1))

    def source(self, rows: int = 0) -> str:
        """Where the figure at ``rows`` comes from, and how far beyond the measured sizes it reaches."""
        i = self._segment(rows)
        sizes = " and ".join(f"{r / 1e6:,.1f} M" for r in self.rows[i : i + 2])
        where = self.measurement
        beyond = rows / self.rows[-1]
        reach = f", read ×{beyond:,.0f} beyond the largest" if beyond >= EXTRAPOLATED else ""
        return f"measured at {sizes} rows on {where.date} ({where.cores} cores){reach}"


@dataclass(frozen=True)
class MeasuredCosts:
    """Every measured stage by name (``generate``, ``oracle``, ``encode <target>``, ``load <target>``,
    ``queries <target>``, ``load task <target>``, ``queries task <target>``, ``validate``, ``report``)."""

    stages: dict[str, StageCurve]

    def stage(self, name: str) -> StageCurve | None:
        return self.stages.get(name)

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> MeasuredCosts:
        if body.get("format") != FORMAT:
            raise ValueError(f"measured costs: unknown format {body.get('format')!r}")
        measurements = [Measurement.from_json(m) for m in body["measurements"]]
        stages = {
            name: StageCurve(
                name,
                tuple(stage["rows"]),
                {f: tuple(stage[f]) for f in FIGURES if f in stage},
                measurements[stage["measurement"]],
            )
            for name, stage in body["stages"].items()
            if len(stage["rows"]) >= 2
        }
        return cls(stages)


@cache
def measured_costs(path: Path = COSTS_FILE) -> MeasuredCosts:
    """The measured costs the plan reads (read once)."""
    return MeasuredCosts.from_json(json.loads(path.read_text()))
