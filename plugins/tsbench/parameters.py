"""The run parameters as the front ends show them, derived from the specs' JSON schemas.

``RunSpec`` (and ``ComparisonAxes`` for what a comparison adds) declares every parameter once:
name, type, default, limits and help. The Airflow Params form (``tsbench.airflow.params``) and the
command line's flags (``tsbench.cli``) are both built from ``parameters(...)``; neither restates a
default or a limit. Limits are shown (help, form description), never enforced by the front ends:
the spec's ``parse`` checks every value and names every bad field at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from tsbench.spec import RunSpec
from tsbench.sweep.axes import REPLACES, ComparisonAxes

NO_DEFAULT = object()
FIRST = ("targets",)  # shown first in the form and the help


@dataclass(frozen=True)
class Parameter:
    """One parameter. ``kind``/``item_kind``: JSON types (``item_kind`` for arrays); ``default``
    is serialised (texts for instants and durations) or ``NO_DEFAULT`` when required;
    ``minimum``/``maximum`` inclusive, ``below`` an exclusive upper bound, for the value or for
    every item of an array; ``choices``: the allowed or known values (texts)."""

    name: str
    kind: str
    help: str
    title: str = ""
    default: Any = NO_DEFAULT
    item_kind: str | None = None
    nullable: bool = False
    minimum: float | None = None
    maximum: float | None = None
    below: float | None = None
    choices: tuple[str, ...] = field(default_factory=tuple)

    @property
    def required(self) -> bool:
        return self.default is NO_DEFAULT

    def limits_text(self) -> str:
        """e.g. ``1 … 256`` or ``≥ 0, < 2^63``; empty without limits."""
        parts = []
        if self.minimum is not None and self.maximum is not None:
            return f"{limit_text(self.minimum)} … {limit_text(self.maximum)}"
        if self.minimum is not None:
            parts.append(f"≥ {limit_text(self.minimum)}")
        if self.maximum is not None:
            parts.append(f"≤ {limit_text(self.maximum)}")
        if self.below is not None:
            parts.append(f"< {limit_text(self.below)}")
        return ", ".join(parts)

    def description(self) -> str:
        """The help text with the choices and limits appended (what the form and ``--help`` show)."""
        text = self.help[:1].upper() + self.help[1:] if self.help else self.name.replace("_", " ")
        if self.choices:
            text += f"; one of: {', '.join(self.choices)}" if self.kind == "string" else ""
        if self.limits_text():
            text += f" ({'each ' if self.kind == 'array' else ''}{self.limits_text()})"
        return text


def limit_text(value: float) -> str:
    """A limit as the forms and flags state it: integral values with thousands separators."""
    if value == 2**63:
        return "2^63"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:g}"


def _flat(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """A property's schema without ``anyOf [X, null]`` (and whether null was allowed)."""
    options = schema.get("anyOf")
    if not options:
        return schema, False
    kept = [option for option in options if option.get("type") != "null"]
    return {**schema, **kept[0]}, len(kept) < len(options)


def _parameter(name: str, schema: dict[str, Any], default: Any) -> Parameter:
    flat, nullable = _flat(schema)
    kind = "object" if "$ref" in flat else flat["type"]
    bounds = flat.get("items", {}) if kind == "array" else flat
    choices = flat.get("enum") or flat.get("examples") or bounds.get("enum") or bounds.get("examples") or ()
    return Parameter(
        name=name,
        kind=kind,
        help=flat.get("description", ""),
        title=flat.get("title", name),
        default=default,
        item_kind=flat.get("items", {}).get("type") if kind == "array" else None,
        nullable=nullable,
        minimum=bounds.get("minimum"),
        maximum=bounds.get("maximum"),
        below=bounds.get("exclusiveMaximum"),
        choices=tuple(str(choice) for choice in choices),
    )


def _of(model: type[BaseModel], defaults: dict[str, Any]) -> dict[str, Parameter]:
    properties = model.model_json_schema(mode="serialization")["properties"]
    return {
        name: _parameter(name, properties[name], defaults.get(name, NO_DEFAULT))
        for name, info in model.model_fields.items()
        if name in properties
    }


def _defaults(model: type[BaseModel]) -> dict[str, Any]:
    """Every optional field's default, serialised as the form and flags show it."""
    built = model.model_construct().model_dump(mode="json")
    return {name: built[name] for name, info in model.model_fields.items() if not info.is_required()}


def parameters(model: type[BaseModel] = RunSpec, comparison: bool = False) -> tuple[Parameter, ...]:
    """The parameters of ``model`` in declaration order (required ones first). ``comparison``:
    a comparison's set — RunSpec's, with ``ComparisonAxes``' fields in place of those ``REPLACES``
    names (``scales`` for ``scale``, ``duration`` for ``end``, the sweep axes as lists: an axis
    item's limits are the RunSpec field's), and the axes' own fields (``row_budget``) last."""
    own = _of(model, _defaults(model))
    if comparison:
        axes = _of(ComparisonAxes, _defaults(ComparisonAxes))
        replaced = {
            name: _with_limits(axes[REPLACES[name]], p)
            if axes[REPLACES[name]].kind == "array"
            else axes[REPLACES[name]]
            for name, p in own.items()
            if name in REPLACES
        }
        own = {
            replaced[name].name if name in replaced else name: replaced.get(name, p)
            for name, p in own.items()
        }
        own.update({name: p for name, p in axes.items() if name not in own})
    first = [own[name] for name in FIRST if name in own]
    return (*first, *(p for name, p in own.items() if name not in FIRST))


def _with_limits(parameter: Parameter, source: Parameter) -> Parameter:
    from dataclasses import replace

    return replace(parameter, minimum=source.minimum, maximum=source.maximum, below=source.below)


def defaults(model: type[BaseModel] = RunSpec, comparison: bool = True) -> dict[str, Any]:
    """``{name: default}`` of every optional parameter (a complete form apart from the required)."""
    return {p.name: p.default for p in parameters(model, comparison) if not p.required}
