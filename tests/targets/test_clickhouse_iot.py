"""ClickHouse's iot query types on the real ClickHouse engine, in-process (chDB, see
test_clickhouse.py for why not a server), loaded by the target's own code with ``iot_dataset``
(12 trucks × 1 day: nameless rows, missing fields, late rows): every type's answers equal the
oracle's, and plausible mistakes in the SQL are caught.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pytest
from iot_checks import answered_types, check_iot_queries, iot_types
from test_clickhouse import chdb_endpoint, load

from tsbench.targets.clickhouse import iot_dialect
from tsbench.targets.clickhouse.target import ClickHouseTarget
from tsbench.workload.dataset import Dataset
from tsbench.workload.queries import DataRange, LogicalQuery, generate_queries
from tsbench.workload.query_types import QUERY_TYPES


@pytest.fixture(autouse=True, scope="module")
def _fatal_signal_handlers_back(fatal_signal_handlers_kept: None) -> None:
    """chDB's fatal-signal handlers do not outlive this module (``tests/conftest.py``)."""


@pytest.fixture(scope="module")
def engine_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("chdb_iot"))


@pytest.fixture(scope="module")
def iot_target(engine_path: str, iot_dataset: Dataset) -> Iterator[ClickHouseTarget]:
    """The conftest's ``iot_dataset`` loaded into chDB by the target's own DDL and writer."""
    target = ClickHouseTarget(
        chdb_endpoint(engine_path, "iot_queries"), iot_dataset.use_case, iot_dataset.tags()
    )
    assert load(target, iot_dataset) == sum(iot_dataset.rows.values())
    yield target
    target.close()


def test_every_iot_type_is_rendered() -> None:
    assert not ClickHouseTarget.capabilities.unsupported
    kinds = {QUERY_TYPES[name].kind for name in iot_types()}
    assert kinds == set(iot_dialect.RENDERERS)


def test_rendering_takes_fleet_thresholds_and_windows_from_the_query() -> None:
    data = DataRange(1_451_606_400 * 10**9, 1_451_692_800 * 10**9, 10**10, 12, groups=("East", "West"))
    for query in generate_queries(data, iot_types(), 2, seed=3):
        text = iot_dialect.render(query)
        qtype = query.query_type
        if qtype.fleet:
            assert f"fleet = '{query.fleet}'" in text and "name IS NOT NULL" in text
        else:
            assert "fleet = '" not in text and "name IS NOT NULL" in text
        if qtype.threshold:
            assert repr(float(qtype.threshold)) in text, query.id
        if qtype.limit:
            assert f"HAVING count() > {qtype.limit}" in text
        if qtype.window_ns:
            assert text.count("toDateTime64(") == 2, query.id
    last = LogicalQuery("q", "low-fuel", ("fuel_state",), measurement="diagnostics", fleet="North")
    assert iot_dialect.render(last) == (
        "SELECT name, driver, last_fuel_state FROM (SELECT name, driver, argMax(tuple(fuel_state), time) "
        "AS last_row, last_row.1 AS last_fuel_state FROM diagnostics WHERE name IS NOT NULL AND "
        "fleet = 'North' GROUP BY name, driver) WHERE last_fuel_state < 0.1"
    )


def test_iot_queries_match_the_oracle(iot_target: ClickHouseTarget, iot_dataset: Dataset) -> None:
    """All 12 types and the probes (6 queries each): the oracle's answers, non-vacuous."""
    nonempty = check_iot_queries(iot_target, iot_dataset)
    assert set(nonempty) == answered_types(iot_target) >= set(iot_types())


@pytest.mark.parametrize(
    ("wrong", "right"),
    [
        # leadInFrame's default frame ends at the current row: it never sees the next bucket
        (" ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING", ""),
        # without toNullable, a last change's "next change" is Int64's default 0, not NULL
        ("leadInFrame(toNullable(ten_start))", "leadInFrame(ten_start)"),
        # count(status = 0) counts the rows with a status; countIf counts those with status 0
        ("count(status = 0)", "countIf(status = 0)"),
    ],
    ids=["lead-frame", "lead-default", "count-not-countif"],
)
def test_the_check_catches_a_broken_rendering(
    iot_target: ClickHouseTarget, iot_dataset: Dataset, wrong: str, right: str
) -> None:
    def broken(query: LogicalQuery) -> str:
        return iot_target.render(query).replace(wrong, right)

    with pytest.raises(AssertionError, match="answers differ"):
        check_iot_queries(iot_target, iot_dataset, per_type=2, render=broken)


def test_a_last_row_with_a_missing_field_is_still_the_last_row(
    engine_path: str, iot_dataset: Dataset
) -> None:
    """A truck's last row (greatest time, here written before older rows) with a missing field: its
    NULL is the answer (last-loc) and fails the filter (low-fuel), where ``argMax(field, time)``
    would skip to an older row that has a value. (``iot_dataset`` has no such last row.)"""
    use_case, tags = iot_dataset.use_case, iot_dataset.tags()
    truck = tags.slice(0, 1).to_pylist()[0]
    target = ClickHouseTarget(chdb_endpoint(engine_path, "iot_last_rows"), use_case, tags)
    t0 = 1_451_606_400 * 10**9
    times = [t0 + 20 * 10**9, t0, t0 + 10 * 10**9]  # the last row first: a late row follows it
    values = {"fuel_state": [None, 0.05, 0.07], "longitude": [None, 1.0, 2.0], "latitude": [5.0, 6.0, 7.0]}
    fleet = truck["fleet"]
    low = LogicalQuery("q", "low-fuel", ("fuel_state",), measurement="diagnostics", fleet=fleet)
    where = LogicalQuery("q", "last-loc", ("longitude", "latitude"), measurement="readings", fleet=fleet)
    try:
        target.create_schema()
        writer = target.writer()
        try:
            for measurement in ("diagnostics", "readings"):
                fields = use_case.measurement(measurement).field_names
                columns = {"time": times, "name": [truck["name"]] * 3}
                columns |= {f: values.get(f, [None] * 3) for f in fields}
                writer.write(
                    measurement, pa.RecordBatch.from_pydict(columns, use_case.row_schema(measurement))
                )
        finally:
            writer.close()
        session = target.session()
        try:
            assert session.execute(target.render(low)) == []
            assert session.execute(target.render(where)) == [(truck["name"], truck["driver"], None, 5.0)]
        finally:
            session.close()
    finally:
        target.close()
