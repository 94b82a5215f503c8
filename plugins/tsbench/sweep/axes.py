"""A comparison's parameters beyond RunSpec's, declared once: the sweep axes (``AXES``: each a
list of one RunSpec field's values; the run is their cross product, one value each is a plain
comparison), the data span and the row budget. ``ComparisonAxes`` (the model the front ends,
``tsbench.parameters``, read) and ``REPLACES`` (which RunSpec field each parameter stands for) are
made from them; the sweep and the report read the axes from here too."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from tsbench.spec import DEFAULT_END, DEFAULT_START, MAX_ROWS, RunSpec
from tsbench.timeutil import format_duration, parse_instant


@dataclass(frozen=True)
class Axis:
    """One sweep axis: the comparison parameter (``name``), the RunSpec field its items are (their
    limits are that field's), the unit an item is shown with (``100 hosts``; empty: the value
    alone), the title of a chart along it (numeric axes only) and its help text."""

    name: str
    field: str
    unit: str
    description: str
    chart_title: str = ""  # empty: no chart is drawn along it (not a number)
    form_title: str | None = None  # the form's label where the name alone says too little

    @property
    def numeric(self) -> bool:
        return bool(self.chart_title)


AXES: tuple[Axis, ...] = (  # in the order points are named
    Axis(
        "scales",
        "scale",
        "hosts",
        "numbers of hosts (TSBS scale); one branch per scale, e.g. 100,1000,10000",
        "hosts",
    ),
    Axis(
        "workers",
        "workers",
        "workers",
        "load and query workers; several: a sweep point each (one server per target serves every "
        "point that differs only in client settings)",
        "workers",
    ),
    Axis(
        "batch_size",
        "batch_size",
        "rows/batch",
        "rows per write batch; several: a sweep point each",
        "batch size (rows)",
    ),
    Axis(
        "ingestion",
        "ingestion",
        "",
        "order of the rows sent (interleaved, per-host-runs); several: a point each",
    ),
    Axis(
        "trials",
        "trials",
        "trials",
        "loads per target and point, the median is reported; several: a point each",
        form_title="Load trials",
    ),
    Axis(
        "live_rate",
        "live_rate",
        "",
        "the live phase's offered ingest: rows/s or a fraction of the load's rate (0.5x); several: a "
        "point each",
        form_title="Live ingest rate",
    ),
    Axis(
        "query_rate",
        "query_rate",
        "q/s",
        "live queries offered per second; several: a point each",
        "live queries/s offered",
        form_title="Live query rate",
    ),
    Axis(
        "query_workers",
        "query_workers",
        "query clients",
        "live query clients; several: a point each",
        "live query clients",
        form_title="Live query clients",
    ),
)
AXIS_NAMES = tuple(axis.name for axis in AXES)
BY_AXIS = {axis.name: axis for axis in AXES}


def _list_field(axis: Axis) -> tuple[Any, Any]:
    """An axis as a model field: a list of its RunSpec field's type, RunSpec's default alone."""
    spec_field = RunSpec.model_fields[axis.field]
    default = spec_field.default
    extra = {"title": axis.form_title} if axis.form_title else {}
    return list[spec_field.annotation], Field(  # type: ignore[name-defined]
        default_factory=lambda: [default], description=axis.description, **extra
    )


_SPAN = (
    str,
    Field(
        format_duration(parse_instant(DEFAULT_END) - parse_instant(DEFAULT_START)),
        description="the data span from start (instead of end), e.g. 1d, 12h, 90min",
    ),
)
_ROW_BUDGET = (
    int | None,
    Field(
        None,
        ge=1,
        le=MAX_ROWS,
        description="cardinality mode: rows per measurement at every scale (each scale's span is "
        "row_budget / scale epochs; give no duration)",
    ),
)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


ComparisonAxes = create_model(
    "ComparisonAxes",
    __base__=_Frozen,
    __doc__="What a comparison's parameters hold instead of some of RunSpec's fields (``REPLACES``):"
    " the sweep axes as lists, the data span (``duration``) and the row budget of cardinality mode.",
    **{AXES[0].name: _list_field(AXES[0])},
    duration=_SPAN,
    **{axis.name: _list_field(axis) for axis in AXES[1:]},
    row_budget=_ROW_BUDGET,
)

# RunSpec field → the comparison parameter that holds it (ComparisonAxes' fields).
REPLACES: dict[str, str] = {
    AXES[0].field: AXES[0].name,
    "end": "duration",
    **{axis.field: axis.name for axis in AXES[1:]},
}


def axis_text(axis: str, value: Any) -> str:
    """``100 hosts``, ``4 workers``, ``per-host-runs`` (an axis value for people)."""
    unit = BY_AXIS[axis].unit if axis in BY_AXIS else axis
    if isinstance(value, int) and unit:
        return f"{value:,} {unit}"
    return str(value)
