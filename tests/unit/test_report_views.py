"""The report's views are frozen dataclasses, and the template reads only attributes they (or the
records and free-form dicts they carry) have: a misspelt name fails here, not in a reader's report."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Iterator

import pytest
from jinja2 import UndefinedError, nodes

import tsbench.report
import tsbench.report.sections
from tsbench.report import render
from tsbench.report.sections.status import target_view
from tsbench.results.live_records import (
    FreshnessFigures,
    IngestFigures,
    Latency,
    LivePhase,
    LiveQueryType,
    RampStep,
)
from tsbench.results.model import (
    CacheReset,
    CompressionFigures,
    DatasetFacts,
    LoadTrial,
    PriceLine,
    QueryStats,
    Resources,
    RollupFigures,
    RollupRefreshFigures,
    TargetResult,
)
from tsbench.results.phase_records import WireFacts
from tsbench.spec import RunSpec

# Free-form content the views carry as recorded (dicts): error and mismatch samples (with their diff
# rows), and dict methods.
SAMPLE_KEYS = {"target", "pass", "query_id", "type", "reason", "columns", "rows", "error"}
DIFF_ROW_KEYS = {"row", "expected", "actual", "differs"}
DICT_METHODS = {"items"}


def _modules() -> Iterator[object]:
    for package in (tsbench.report, tsbench.report.sections):
        for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
            yield importlib.import_module(info.name)


def _views() -> list[type]:
    """Every dataclass defined in the report's modules."""
    found = {
        value
        for module in _modules()
        for value in vars(module).values()
        if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == module.__name__
    }
    return sorted(found, key=lambda cls: cls.__qualname__)


def _template_attributes() -> set[str]:
    """Attributes read by the report's template and the templates it includes."""
    env = render._environment()
    names = [
        render.TEMPLATE,
        *(n for n in env.list_templates() if n.endswith(".html.j2") and n != "index.html.j2"),
    ]
    return {
        node.attr
        for name in dict.fromkeys(names)
        for node in env.parse(env.loader.get_source(env, name)[0]).find_all(nodes.Getattr)
        if not (isinstance(node.node, nodes.Name) and node.node.name == "loop")  # Jinja's loop.last…
    }


def test_views_are_frozen_dataclasses_with_a_docstring() -> None:
    views = _views()
    assert len(views) > 20
    for cls in views:
        assert cls.__dataclass_params__.frozen, cls
        assert (cls.__doc__ or "").strip() and not cls.__doc__.startswith(cls.__name__ + "("), cls


def test_every_template_attribute_exists() -> None:
    known = {field.name for cls in _views() for field in dataclasses.fields(cls)}
    known |= {
        name
        for cls in _views()
        for name, value in vars(cls).items()
        if callable(value) or isinstance(value, property)
    }
    records = (QueryStats, Resources, CacheReset, LoadTrial, CompressionFigures, RollupFigures, RunSpec)
    live = (LivePhase, IngestFigures, LiveQueryType, Latency, FreshnessFigures, RampStep)
    for record in (*records, RollupRefreshFigures, PriceLine, *live, DatasetFacts, WireFacts):
        known |= set(record.model_fields)
    known |= SAMPLE_KEYS | DIFF_ROW_KEYS | DICT_METHODS
    unknown = _template_attributes() - known
    assert not unknown, f"the template reads attributes no view has: {sorted(unknown)}"


def test_a_misspelt_attribute_fails_the_render() -> None:
    view = target_view("postgres", TargetResult(status="ok"))
    env = render._environment()
    assert env.from_string("{{ t.label }}").render(t=view)
    with pytest.raises(UndefinedError):
        env.from_string("{{ t.lable }}").render(t=view)
    with pytest.raises(UndefinedError):
        env.from_string("{% if t.lable %}x{% endif %}").render(t=view)
