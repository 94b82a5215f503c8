"""The iot oracle (DuckDB SQL) against a second, independent implementation in pandas, on generated
iot data (12 trucks × 1 day: nameless, late and field-less rows), for every iot type and probe."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from iot_checks import probe_types

from tsbench.workload.answers import Answer, compare
from tsbench.workload.dataset import Dataset
from tsbench.workload.iot_query_types import (
    ACTIVITY_DIVISOR,
    BUCKETS_PER_HOUR,
    DAY_NS,
    TEN_MINUTES_NS,
)
from tsbench.workload.oracle import Oracle
from tsbench.workload.queries import DataRange, LogicalQuery, generate_queries
from tsbench.workload.query_types import Kind, types_of


@pytest.fixture(scope="module")
def frames(iot_dataset: Dataset) -> dict[str, pd.DataFrame]:
    """Each measurement's rows with ``t`` (ns), bucket ``b``, ``day`` and the truck's tags."""
    tags = iot_dataset.tags().to_pandas()[["name", "fleet", "driver", "model"]].astype(str)
    frames = {}
    for measurement in iot_dataset.measurements:
        rows = iot_dataset.read(measurement).to_pandas()
        rows["name"] = rows["name"].astype(object).where(rows["name"].notna(), None)
        rows["t"] = rows["time"].astype("int64")
        rows["b"] = rows["t"] // TEN_MINUTES_NS * TEN_MINUTES_NS
        rows["day"] = rows["t"] // DAY_NS * DAY_NS
        frames[measurement] = rows.merge(tags, on="name", how="left")
    return frames


def _named(frame: pd.DataFrame, query: LogicalQuery) -> pd.DataFrame:
    rows = frame[frame["name"].notna()]
    if query.fleet is not None:
        rows = rows[rows["fleet"] == query.fleet]
    if query.start_ns is not None:
        rows = rows[(rows["t"] >= query.start_ns) & (rows["t"] < query.end_ns)]
    return rows


def _last(rows: pd.DataFrame) -> pd.DataFrame:
    return rows.loc[rows.groupby("name")["t"].idxmax()]


def _driving_sessions(rows: pd.DataFrame, threshold: float) -> pd.DataFrame:
    status = rows.groupby(["name", "b"])["velocity"].mean().reset_index().sort_values(["name", "b"])
    status["driving"] = np.where(status["velocity"].isna(), np.nan, (status["velocity"] > threshold) * 1.0)
    before = status.groupby("name")["driving"].shift(1)
    changes = status[status["driving"].notna() & before.notna() & (status["driving"] != before)].copy()
    changes["stop"] = changes.groupby("name")["b"].shift(-1)
    driving = changes[changes["driving"] == 1.0].copy()
    driving["seconds"] = (driving["stop"] - driving["b"]) / 1e9
    driving["day"] = driving["b"] // DAY_NS * DAY_NS
    return driving.groupby(["name", "day"])["seconds"].mean().reset_index()


def _breakdowns(rows: pd.DataFrame) -> pd.DataFrame:
    per = rows.groupby(["name", "model", "b"]).agg(present=("status", "count"), rows=("t", "size"))
    per = per.reset_index().sort_values(["name", "b"])
    per["broken"] = (per["present"] // per["rows"]) >= 0.5
    per["next"] = per.groupby("name")["broken"].shift(-1)
    turned = per[~per["broken"] & (per["next"] == True)]  # noqa: E712 - NaN (no next) is not True
    return turned.groupby("model").size().reset_index()


def pandas_rows(frames: dict[str, pd.DataFrame], query: LogicalQuery) -> list[list[Any]]:
    """A second implementation of every iot kind (``iot_query_types``'s contract)."""
    qtype, kind = query.query_type, query.query_type.kind
    rows = _named(frames[query.measurement], query)
    if kind is Kind.LAST_LOC:
        return _last(rows)[["name", "driver", "longitude", "latitude"]].values.tolist()
    if kind is Kind.LOW_FUEL:
        last = _last(rows)
        return last[last["fuel_state"] < qtype.threshold][["name", "driver", "fuel_state"]].values.tolist()
    if kind is Kind.HIGH_LOAD:
        last = _last(rows)
        high = last["current_load"] / last["load_capacity"] > qtype.threshold
        return last[high][["name", "driver", "current_load"]].values.tolist()
    if kind is Kind.STATIONARY:
        mean = rows.groupby(["name", "driver"])["velocity"].mean()
        return [list(key) for key, value in mean.items() if value < qtype.threshold]
    if kind is Kind.LONG_SESSIONS:
        mean = rows.groupby(["name", "driver", "b"])["velocity"].mean()
        driving = mean[mean > qtype.threshold].groupby(["name", "driver"]).size()
        return [list(key) for key, count in driving.items() if count > qtype.limit]
    if kind is Kind.FLEET_FUEL:
        moving = rows[rows["velocity"] > qtype.threshold].groupby("fleet")
        means = moving[["fuel_consumption", "nominal_fuel_consumption"]].mean().reset_index()
        return means.values.tolist()
    if kind is Kind.DAILY_DRIVING:
        mean = rows.groupby(["fleet", "name", "driver", "b"])["velocity"].mean()
        driving = mean[mean > qtype.threshold].reset_index()
        driving["day"] = driving["b"] // DAY_NS
        hours = driving.groupby(["fleet", "name", "driver", "day"]).size() // BUCKETS_PER_HOUR
        return hours.astype(float).groupby(["fleet", "name", "driver"]).mean().reset_index().values.tolist()
    if kind is Kind.DRIVING_SESSION:
        return _driving_sessions(rows, qtype.threshold)[["name", "day", "seconds"]].values.tolist()
    if kind is Kind.FLEET_LOAD:
        trucks = rows.groupby(["name", "fleet", "model"]).agg(
            capacity=("load_capacity", "max"), load=("current_load", "mean")
        )
        trucks = trucks.reset_index()
        trucks["share"] = trucks["load"] / trucks["capacity"]
        return trucks.groupby(["fleet", "model", "capacity"])["share"].mean().reset_index().values.tolist()
    if kind is Kind.DAILY_ACTIVITY:
        per = rows.groupby(["fleet", "model", "name", "day", "b"]).agg(
            status=("status", "mean"), rows=("t", "size")
        )
        active = (
            per[per["status"] < qtype.threshold].groupby(["fleet", "model", "day"])["rows"].sum()
            / ACTIVITY_DIVISOR
        )
        return active.reset_index().values.tolist()
    if kind is Kind.BREAKDOWNS:
        return _breakdowns(rows).values.tolist()
    raise AssertionError(f"no pandas rule for {kind}")


def test_the_iot_oracle_agrees_with_pandas(iot_dataset: Dataset, frames: dict[str, pd.DataFrame]) -> None:
    oracle = Oracle(iot_dataset)
    nonempty: dict[str, int] = {}
    try:
        with probe_types():
            names = types_of(["iot"])
            for query in generate_queries(DataRange.of(iot_dataset), names, 6, seed=13):
                expected = Answer.build(query.query_type, pandas_rows(frames, query))
                result = compare(expected, oracle.answer(query))
                assert result.ok, (query.id, query.fleet, result.reason, result.diff)
                nonempty[query.type] = nonempty.get(query.type, 0) + bool(expected.rows)
    finally:
        oracle.close()
    empty = {name for name in names if not nonempty.get(name)}
    assert empty <= {"low-fuel", "high-load", "stationary-trucks"}, nonempty  # rare at this size
