"""A comparison's parameters beyond RunSpec's: the sweep axes as lists, the data span and the row
budget (``ComparisonAxes``), and which RunSpec field each replaces (``REPLACES``). The front ends
(``tsbench.parameters``) and ``tsbench.run.sweep`` read them from here."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tsbench.spec import (
    DEFAULT_END,
    DEFAULT_START,
    MAX_ROWS,
    DatasetSpec,
    IngestionOrder,
    RunSpec,
)
from tsbench.timeutil import format_duration, parse_instant


class ComparisonAxes(BaseModel):
    """What a comparison's parameters hold instead of some of RunSpec's fields (``REPLACES``; see
    ``tsbench.run.comparison.parse_comparison`` and ``tsbench.run.sweep``): the sweep axes as lists (the run
    is their cross product; one value each is a plain comparison), the data span, and the row
    budget of cardinality mode. An axis item's limits are RunSpec's field's."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scales: list[int] = Field(
        default_factory=lambda: [DatasetSpec.model_fields["scale"].default],
        description="numbers of hosts (TSBS scale); one branch per scale, e.g. 100,1000,10000",
    )
    duration: str = Field(
        format_duration(parse_instant(DEFAULT_END) - parse_instant(DEFAULT_START)),
        description="the data span from start (instead of end), e.g. 1d, 12h, 90min",
    )
    workers: list[int] = Field(
        default_factory=lambda: [RunSpec.model_fields["workers"].default],
        description="load and query workers; several: a sweep point each (one server per target "
        "serves every point that differs only in client settings)",
    )
    batch_size: list[int] = Field(
        default_factory=lambda: [RunSpec.model_fields["batch_size"].default],
        description="rows per write batch; several: a sweep point each",
    )
    ingestion: list[IngestionOrder] = Field(
        default_factory=lambda: [DatasetSpec.model_fields["ingestion"].default],
        description="order of the rows sent (interleaved, per-host-runs); several: a point each",
    )
    trials: list[int] = Field(
        default_factory=lambda: [RunSpec.model_fields["trials"].default],
        title="Load trials",
        description="loads per target and point, the median is reported; several: a point each",
    )
    row_budget: int | None = Field(
        None,
        ge=1,
        le=MAX_ROWS,
        description="cardinality mode: rows per measurement at every scale (each scale's span is "
        "row_budget / scale epochs; give no duration)",
    )


# RunSpec field → the comparison parameter that holds it (ComparisonAxes' fields).
REPLACES: dict[str, str] = {
    "scale": "scales",
    "end": "duration",
    "workers": "workers",
    "batch_size": "batch_size",
    "ingestion": "ingestion",
    "trials": "trials",
}
