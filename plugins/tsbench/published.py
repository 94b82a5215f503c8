"""What a published study reported, as a study file's ``published`` block (``studies/*.yaml``): the
figures it printed and its ranking or ratio claims, each in terms tsbench measures — a ``Metric``
of named targets at points whose RunSpec fields equal ``at``.

Figures and claims are facts copied from ``../shared/studies/published.json`` (with the line or
table they come from). Absolute figures are shown beside ours, never compared as equal: the machines
differ. Claims are checked on the rankings and ratios of this run (``tsbench.claims``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Metric(StrEnum):
    """A figure tsbench measures per point × target (units in the name)."""

    LOAD_ROWS_PER_S = "load_rows_per_s"  # median load trial, rows/s (incl. the final flush)
    LOAD_METRICS_PER_S = "load_metrics_per_s"  # the same trial, field values/s
    LOAD_SECONDS = "load_seconds"  # the same trial's wall time
    FOOTPRINT_BYTES_AFTER_LOAD = "footprint_bytes_after_load"  # data folders on disk
    FOOTPRINT_BYTES_AFTER_SETTLE = "footprint_bytes_after_settle"
    QUERY_QPS = "query_qps"  # hot passes of ``query_type``, queries/s
    QUERY_MEAN_MS_HOT = "query_mean_ms_hot"  # mean latency of the hot passes, ms
    QUERY_MEAN_MS_COLD = "query_mean_ms_cold"  # mean latency of the cold pass, ms

    @property
    def higher_is_better(self) -> bool:
        return self in (Metric.LOAD_ROWS_PER_S, Metric.LOAD_METRICS_PER_S, Metric.QUERY_QPS)

    @property
    def needs_query_type(self) -> bool:
        return self.value.startswith("query_")


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _Measured(_Strict):
    """What is measured: ``metric`` (of ``query_type`` for query metrics) at the points whose
    RunSpec fields equal ``at`` (e.g. ``{workers: 4}``; empty: every point)."""

    metric: Metric
    query_type: str | None = None
    at: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _query_type_where_needed(self) -> Self:
        if self.metric.needs_query_type != (self.query_type is not None):
            need = "needs" if self.metric.needs_query_type else "takes no"
            raise ValueError(f"metric {self.metric.value} {need} a query_type")
        return self


class PublishedFigure(_Measured):
    """One printed figure of one database: ``value`` in ``unit`` (as published), ``source`` = the
    table or line, ``conditions`` = the study's own (scale, span, machine) in words."""

    target: str
    value: float
    unit: str
    source: str
    conditions: str = ""


class Claim(_Measured):
    """A ranking or ratio claim, quoted with its line (``text``), in one of four forms:

    - ``ranking``: targets best first by the metric (a ``ratio`` = first ÷ second as published);
    - ``similar``: two targets within ``within`` (relative) of each other;
    - ``target`` better at ``better_at`` than at ``worse_at`` (points otherwise alike);
    - ``not_comparable``: why tsbench cannot check it at all (kept, so every claim is listed).

    ``study_at``: the study's conditions for the claim (RunSpec field → value) — a difference from
    this run is named beside the verdict."""

    text: str
    ranking: list[str] = Field(default_factory=list)
    ratio: float | None = Field(None, gt=0)
    similar: list[str] = Field(default_factory=list)
    within: float = Field(0.1, gt=0)
    target: str | None = None
    better_at: dict[str, Any] = Field(default_factory=dict)
    worse_at: dict[str, Any] = Field(default_factory=dict)
    not_comparable: str | None = None
    study_at: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        forms = {
            "ranking": len(self.ranking) >= 2,
            "similar": len(self.similar) == 2,
            "target/better_at/worse_at": bool(self.target and self.better_at and self.worse_at),
            "not_comparable": bool(self.not_comparable),
        }
        chosen = [name for name, given in forms.items() if given]
        if len(chosen) != 1:
            raise ValueError(
                "a claim takes exactly one of: ranking (≥ 2 targets), similar (2 targets), "
                f"target with better_at and worse_at, not_comparable (got {chosen or 'none'})"
            )
        if self.ratio is not None and len(self.ranking) != 2:
            raise ValueError("ratio is first ÷ second of a ranking of exactly two targets")
        return self

    @property
    def targets(self) -> list[str]:
        return self.ranking or self.similar or ([self.target] if self.target else [])


class Published(_Strict):
    """A study's published side: where from, on what machine, which server versions (target →
    version as published), its figures and its claims."""

    source: str
    machine: str
    versions: dict[str, str] = Field(default_factory=dict)
    figures: list[PublishedFigure] = Field(default_factory=list)
    claims: list[Claim] = Field(default_factory=list)
