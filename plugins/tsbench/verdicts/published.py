"""What a published study reported, as a study file's ``published`` block (``studies/*.yaml``): the
figures it printed and its claims, each claim checked by one or more comparisons (``checks``) in
terms tsbench measures — a ``Metric`` of named targets at points whose RunSpec fields equal ``at``.

Figures and claims are facts copied from ``../shared/studies/published.json`` (with the line or
table they come from). Absolute figures are shown beside ours, never compared as equal: the machines
differ. Claims are checked on the rankings and ratios of this run (``tsbench.verdicts``), under the
conditions they declare (``requires``).
"""

from __future__ import annotations

from enum import StrEnum
from itertools import groupby
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tsbench.verdicts.noise import FOOTPRINT_TOLERANCE, RATE_TOLERANCE

DEFAULT_BAND = 2.0  # a measured ratio within ×/÷ this factor of the published one reproduces it


class Metric(StrEnum):
    """A figure tsbench measures per point × target (units in the name)."""

    LOAD_ROWS_PER_S = "load_rows_per_s"  # load trials, rows/s (incl. the final flush)
    LOAD_METRICS_PER_S = "load_metrics_per_s"  # the same trials, field values/s
    LOAD_SECONDS = "load_seconds"  # the same trials' wall time
    FOOTPRINT_BYTES_AFTER_LOAD = "footprint_bytes_after_load"  # data folders on disk
    FOOTPRINT_BYTES_AFTER_SETTLE = "footprint_bytes_after_settle"  # … after compression, if any
    QUERY_QPS = "query_qps"  # hot passes of ``query_type``, queries/s
    QUERY_MEAN_MS_HOT = "query_mean_ms_hot"  # mean latency of the hot passes, ms
    QUERY_MEAN_MS_COLD = "query_mean_ms_cold"  # mean latency of the cold pass, ms

    @property
    def higher_is_better(self) -> bool:
        return self in (Metric.LOAD_ROWS_PER_S, Metric.LOAD_METRICS_PER_S, Metric.QUERY_QPS)

    @property
    def needs_query_type(self) -> bool:
        return self.value.startswith("query_")

    @property
    def label(self) -> str:
        """For people: ``load rows/s``, ``mean latency (hot, ms)`` …"""
        return METRIC_LABELS[self]

    @property
    def is_footprint(self) -> bool:
        return self.value.startswith("footprint_")

    @property
    def tolerance(self) -> float:
        """The gap of medians that is still a tie when a side has too few repeats (``noise``)."""
        return FOOTPRINT_TOLERANCE if self.is_footprint else RATE_TOLERANCE


METRIC_LABELS = {
    Metric.LOAD_ROWS_PER_S: "load rows/s",
    Metric.LOAD_METRICS_PER_S: "load metrics/s",
    Metric.LOAD_SECONDS: "load seconds",
    Metric.FOOTPRINT_BYTES_AFTER_LOAD: "footprint after the load",
    Metric.FOOTPRINT_BYTES_AFTER_SETTLE: "footprint after settling (and compression)",
    Metric.QUERY_QPS: "queries/s (hot)",
    Metric.QUERY_MEAN_MS_HOT: "mean latency (hot)",
    Metric.QUERY_MEAN_MS_COLD: "mean latency (cold)",
}


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Condition(_Strict):
    """What a claim depends on; a point of the run that does not meet it cannot check the claim
    (the verdict there is ``not comparable``, naming the condition). Exactly one of:

    - ``compressed``: that target's data was compressed before it was measured (an edition feature);
    - ``rollup``: that target built its rollup (continuous aggregate, materialized view …);
    - ``min_cores``: the machine has at least that many cores (a parallel-scaling claim);
    - ``larger_than_memory``: each of these targets stores more bytes than the machine's memory;
    - ``min_scale`` / ``max_scale``: at least / at most that many hosts / devices;
    - ``min_rows``: at least that many rows in the dataset.

    ``why``: the study's own condition in words (shown with the verdict)."""

    compressed: str | None = None
    rollup: str | None = None
    min_cores: int | None = Field(None, ge=1)
    larger_than_memory: list[str] | None = None
    min_scale: int | None = Field(None, ge=1)
    max_scale: int | None = Field(None, ge=1)
    min_rows: int | None = Field(None, ge=1)
    why: str = ""

    @model_validator(mode="after")
    def _one_kind(self) -> Self:
        given = [name for name in KINDS if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(f"a condition takes exactly one of {', '.join(KINDS)} (got {given or 'none'})")
        return self

    @property
    def kind(self) -> str:
        return next(name for name in KINDS if getattr(self, name) is not None)

    @property
    def targets(self) -> list[str]:
        named = self.compressed or self.rollup
        return [named] if named else list(self.larger_than_memory or [])


KINDS = ("compressed", "rollup", "min_cores", "larger_than_memory", "min_scale", "max_scale", "min_rows")


class _Measured(_Strict):
    """What is measured: ``metric`` (of ``query_type`` for query metrics) at the points whose
    RunSpec fields equal ``at`` (e.g. ``{workers: 4}``; empty: every point)."""

    metric: Metric | None = None
    query_type: str | None = None
    at: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _query_type_where_needed(self) -> Self:
        if self.metric is not None and self.metric.needs_query_type != (self.query_type is not None):
            need = "needs" if self.metric.needs_query_type else "takes no"
            raise ValueError(f"metric {self.metric.value} {need} a query_type")
        return self


class PublishedFigure(_Measured):
    """One printed figure of one database: ``value`` in ``unit`` (as published), ``source`` = the
    table or line, ``conditions`` = the study's own (scale, span, machine) in words."""

    metric: Metric
    target: str
    value: float
    unit: str
    source: str
    conditions: str = ""


class Check(_Measured):
    """One comparison a claim rests on, in one of five forms:

    - ``ranking``: targets best first by the metric (``ratio`` = first ÷ second as published, the
      better one's advantage: > 1; without one, the study's own figures give it where it printed
      both: ``tsbench.verdicts.magnitude``);
    - ``similar``: two targets within ``within`` (relative) of each other;
    - ``target`` better at ``better_at`` than at ``worse_at`` (points otherwise alike; ``ratio``
      as published, if any) — or, with ``unchanged``, within ``within`` of each other (a claim of
      no change);
    - ``rollup_beats_raw``: that target's query metric on its rollup better than on the raw table;
    - ``not_comparable``: why tsbench cannot check it at all (kept, so every claim is listed).

    ``at_least``: the published ratio is a floor ("at least 2×", "more than 2 times"): any larger
    lead reproduces it. ``ratio_from``: where a ratio the text does not state comes from. ``band``
    (with ``band_reason``): this check's own band, over the claim's.

    ``requires``: conditions of this comparison (beside the claim's); ``study_at``: the study's
    conditions (RunSpec field → value) — a difference from this run is named beside the verdict."""

    ranking: list[str] = Field(default_factory=list)
    ratio: float | None = Field(None, gt=0)
    at_least: bool = False
    ratio_from: str = ""
    band: float | None = Field(None, gt=1)
    band_reason: str = ""
    similar: list[str] = Field(default_factory=list)
    within: float = Field(0.1, gt=0)
    target: str | None = None
    unchanged: bool = False
    better_at: dict[str, Any] = Field(default_factory=dict)
    worse_at: dict[str, Any] = Field(default_factory=dict)
    rollup_beats_raw: str | None = None
    not_comparable: str | None = None
    requires: list[Condition] = Field(default_factory=list)
    study_at: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        forms = {
            "ranking": len(self.ranking) >= 2,
            "similar": len(self.similar) == 2,
            "target/better_at/worse_at": bool(self.target and self.better_at and self.worse_at),
            "rollup_beats_raw": bool(self.rollup_beats_raw),
            "not_comparable": bool(self.not_comparable),
        }
        chosen = [name for name, given in forms.items() if given]
        if len(chosen) != 1:
            raise ValueError(
                "a check takes exactly one of: ranking (≥ 2 targets), similar (2 targets), "
                "target with better_at and worse_at, rollup_beats_raw, not_comparable "
                f"(got {chosen or 'none'})"
            )
        if self.metric is None and not self.not_comparable:
            raise ValueError("a check that is not 'not_comparable' needs a metric")
        if self.ratio is not None and not (len(self.ranking) == 2 or self.target):
            raise ValueError("ratio is first ÷ second of a ranking of exactly two targets, or of target")
        if self.rollup_beats_raw and not (self.metric and self.metric.needs_query_type):
            raise ValueError("rollup_beats_raw compares a query metric")
        if self.unchanged and not self.target:
            raise ValueError("unchanged compares one target at better_at and worse_at")
        if self.band is not None and not self.band_reason:
            raise ValueError(f"band {self.band:g} overrides the claim's: give band_reason")
        return self

    @property
    def targets(self) -> list[str]:
        named = self.target or self.rollup_beats_raw
        return self.ranking or self.similar or ([named] if named else [])


class Claim(_Strict):
    """A claim as the study states it, quoted with its line (``text``), checked by ``checks``.

    ``requires``: conditions every check depends on. ``band``: how far (a factor) a measured
    ratio may lie from the published one and still reproduce it (default ``DEFAULT_BAND``), with
    ``band_reason`` when overridden. ``note``: where the study contradicts itself, or what a
    reader must know beside the verdict."""

    text: str
    checks: list[Check] = Field(min_length=1)
    requires: list[Condition] = Field(default_factory=list)
    band: float = Field(DEFAULT_BAND, gt=1)
    band_reason: str = ""
    note: str = ""

    @model_validator(mode="after")
    def _band_with_reason(self) -> Self:
        if self.band != DEFAULT_BAND and not self.band_reason:
            raise ValueError(f"band {self.band:g} overrides the default {DEFAULT_BAND:g}: give band_reason")
        return self

    @property
    def targets(self) -> list[str]:
        named = [name for check in self.checks for name in check.targets]
        named += [name for c in self.requires for name in c.targets]
        return list(dict.fromkeys(named))


class Published(_Strict):
    """A study's published side: where from, on what machine, which server versions (target →
    version as published), its figures and its claims."""

    source: str
    machine: str
    versions: dict[str, str] = Field(default_factory=dict)
    figures: list[PublishedFigure] = Field(default_factory=list)
    claims: list[Claim] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _claims_of_flat_checks(cls, body: Any) -> Any:
        """Study files (and runs' ``plan.json``) written before claims had checks listed one
        comparison per entry, the quote repeated: consecutive entries with one quote are one claim."""
        if not isinstance(body, dict) or not all(isinstance(c, dict) for c in body.get("claims") or []):
            return body
        claims = body.get("claims") or []
        if all("checks" in c for c in claims):
            return body
        grouped = []
        for text, entries in groupby(claims, key=lambda c: c.get("text")):
            checks = [{k: v for k, v in entry.items() if k != "text"} for entry in entries]
            grouped.append({"text": text, "checks": checks})
        return {**body, "claims": grouped}
