"""The sweep's product and its validation (tsbench.sweep.plan): no server, no data."""

from __future__ import annotations

import pytest

from tsbench.spec import SpecError
from tsbench.sweep.plan import SweepLimits, describe_budget, expand_sweep

BASE = {"targets": ["questdb", "postgres"], "duration": "1h", "query_types": ["single-groupby-1-1-1"]}


def test_the_product_of_the_axes_in_a_stable_order() -> None:
    plan = expand_sweep({**BASE, "scales": [10, 100], "workers": [1, 2, 4]})
    assert [p.name for p in plan.points] == [f"scale-{s}_workers-{w}" for s in (10, 100) for w in (1, 2, 4)]
    assert plan.varied == ["scales", "workers"]
    assert [(p.spec.scale, p.spec.workers) for p in plan.points][:2] == [(10, 1), (10, 2)]
    assert all(p.spec.targets == ["questdb", "postgres"] for p in plan.points)


def test_client_only_points_share_a_dataset_and_a_server() -> None:
    plan = expand_sweep({**BASE, "scales": [10, 20], "workers": [1, 2], "batch_size": [1000, 5000]})
    groups = plan.server_groups()
    assert len(plan.points) == 8 and len(groups) == 2
    assert all(len({p.spec.scale for p in group}) == 1 and len(group) == 4 for group in groups)
    assert plan.rows_generated() == (10 + 20) * 360  # one dataset per scale, 1 h at 10 s
    assert plan.rows_loaded() == 4 * (10 + 20) * 360 * 2  # every point loads both targets


def test_ingestion_order_changes_the_dataset() -> None:
    plan = expand_sweep({**BASE, "scales": 10, "ingestion": ["interleaved", "per-host-runs"]})
    assert len(plan.dataset_groups()) == 2
    assert [p.name for p in plan.points] == [
        "scale-10_ingestion-interleaved",
        "scale-10_ingestion-per-host-runs",
    ]


def test_cardinality_mode_keeps_the_rows_and_shrinks_the_span() -> None:
    params = {"targets": ["questdb"], "scales": [100, 1_000, 10_000], "row_budget": 360_000}
    plan = expand_sweep(params)
    assert [p.spec.rows_total for p in plan.points] == [360_000] * 3
    assert [p.spec.epochs for p in plan.points] == [3_600, 360, 36]
    assert describe_budget(360_000, [100, 10_000]) == [
        "100 hosts: 3,600 epochs = 10h",
        "10,000 hosts: 36 epochs = 6m",
    ]
    # query types that need a longer window than a point's span are left out of that point only
    assert "cpu-max-all-8" in plan.points[0].spec.resolved_query_types
    assert "cpu-max-all-8" not in plan.points[2].spec.resolved_query_types


def test_every_bad_axis_value_is_named_at_once() -> None:
    bad = {**BASE, "scales": [10, 0], "workers": [2, 0, 2], "batch_size": [0], "trials": []}
    with pytest.raises(SpecError) as caught:
        expand_sweep(bad)
    fields = [field for field, _ in caught.value.problems]
    assert "workers" in fields  # listed twice
    assert "trials" in fields  # empty
    assert "scales (0)" in fields and "batch_size (0)" in fields
    assert fields.count("batch_size (0)") == 1, "one problem, not one per point"


def test_a_row_budget_that_does_not_divide_names_the_scale() -> None:
    with pytest.raises(SpecError) as caught:
        expand_sweep({"targets": ["questdb"], "scales": [100, 7], "row_budget": 1_000})
    assert caught.value.problems == [
        ("scales (7)", "row_budget 1,000 is not a whole number of epochs of 7 hosts")
    ]
    with pytest.raises(SpecError, match="row_budget: the row budget sets each scale's span"):
        expand_sweep({"targets": ["questdb"], "scales": [100], "row_budget": 1_000, "duration": "1h"})


def test_an_oversized_sweep_is_refused_with_its_numbers() -> None:
    params = {"targets": ["questdb"], "scales": [1_000, 10_000], "workers": [1, 2, 4], "trials": 3}
    with pytest.raises(SpecError) as caught:
        expand_sweep(params, SweepLimits(max_points=4, max_hours=1.0))
    text = str(caught.value)
    assert "6 points exceed the limit of 4" in text
    assert "h exceed the limit of 1 h" in text
    assert "2 dataset(s), 95,040,000 rows generated" in text  # the summary comes with the refusal
    assert len(expand_sweep(params, SweepLimits(max_hours=100.0)).points) == 6
