"""GridDB's iot queries: GridDB SQL over the trucks' containers (``iot_dialect.py``), run through the
JDBC driver (``jdbc.py``).

What is real here: the statements' shape without a server (a fleet query names exactly its fleet's
trucks' containers, never a nameless collection, and takes its threshold from the query's type);
the JDBC driver in a real JVM failing clearly against a closed port; and, against the built server
(the local runtime, waiting for the background build like test_griddb.py), every iot type and probe
answering exactly as the oracle on ``iot_dataset`` (``tests/iot_checks.py``).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import replace

import pytest
from iot_checks import PROBES, check_iot_queries, iot_types, probe_types
from targets.griddb_serving import closed_port, java_or_skip, served

from tsbench.targets.base import Target, TargetError
from tsbench.targets.griddb import client, jdbc
from tsbench.targets.griddb.dialect import ceil_millis, timestamp
from tsbench.targets.griddb.target import GridDBSession, GridDBTarget
from tsbench.workload.dataset import Dataset
from tsbench.workload.queries import DataRange, LogicalQuery, generate_queries


def _offline_target(dataset: Dataset) -> GridDBTarget:
    """A target that renders from the dataset's tags alone (no server)."""
    target = GridDBTarget.__new__(GridDBTarget)
    Target.__init__(target, None, dataset.use_case, dataset.tags())
    return target


def _queries(dataset: Dataset, names: list[str], per_type: int = 4) -> list[LogicalQuery]:
    return generate_queries(DataRange.of(dataset), names, per_type, seed=3)


def _containers(sql: str) -> set[str]:
    return set(re.findall(r'FROM "([^"]+)"', sql)) - {"tsbench_tags"}


def test_every_iot_type_is_one_sql_statement_over_the_trucks_containers(iot_dataset: Dataset) -> None:
    target = _offline_target(iot_dataset)
    for query in _queries(iot_dataset, iot_types(), per_type=2):
        plan = json.loads(target.render(query))
        assert set(plan) == {"query", "type", "sql"} and plan["sql"].startswith("SELECT "), query.id
        read = _containers(plan["sql"])
        trucks = target.fleets[query.fleet] if query.query_type.fleet else target.entities
        assert read == {f"{query.measurement}_{truck}" for truck in trucks}, query.id
        assert "nameless" not in plan["sql"], query.id


def test_queries_take_their_fleet_and_threshold_from_the_query(iot_dataset: Dataset) -> None:
    target = _offline_target(iot_dataset)
    with probe_types() as probes:
        for query in _queries(iot_dataset, probes):
            sql = json.loads(target.render(query))["sql"]
            assert repr(float(query.query_type.threshold)) in sql, query.id
            if query.query_type.fleet:
                assert f"g.fleet = '{query.fleet}'" in sql, query.id


def test_windows_are_half_open_on_every_trucks_row_keys(iot_dataset: Dataset) -> None:
    target = _offline_target(iot_dataset)
    [query] = _queries(iot_dataset, ["long-driving-sessions"], per_type=1)
    sql = json.loads(target.render(query))["sql"]
    start, end = (timestamp(ceil_millis(t)) for t in (query.start_ns, query.end_ns))
    window = f'WHERE "time" >= {start} AND "time" < {end}'
    assert sql.count(window) == len(target.fleets[query.fleet]) > 0


def test_a_fleet_without_trucks_reads_nothing_and_answers_empty(iot_dataset: Dataset) -> None:
    target = _offline_target(iot_dataset)
    [query] = _queries(iot_dataset, ["last-loc"], per_type=1)
    plan = json.loads(target.render(replace(query, fleet="Atlantis")))
    assert plan["sql"] is None
    assert GridDBSession(store=None).execute(json.dumps(plan)) == []  # type: ignore[arg-type]


def test_the_sql_connection_fails_clearly_against_a_closed_port() -> None:
    java_or_skip()
    port = closed_port()
    connection = client.Connection(
        "127.0.0.1", 1, "tsbench", "admin", "secret-pw", failover_timeout_s=1, sql_port=port
    )
    started = time.monotonic()
    with pytest.raises(TargetError) as raised:
        jdbc.SqlConnection(connection)
    message = str(raised.value)
    assert f"127.0.0.1:{port} (SQL" in message and "JC_BAD_CONNECTION" in message
    assert "secret-pw" not in message and time.monotonic() - started < 20


# -- against the built server -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def griddb_iot(iot_dataset: Dataset) -> Iterator[GridDBTarget]:
    """The built gsserver, started by the local runtime, with ``iot_dataset`` loaded."""
    with served(iot_dataset) as target:
        yield target


@pytest.mark.integration
def test_every_iot_type_answers_as_the_oracle(griddb_iot: GridDBTarget, iot_dataset: Dataset) -> None:
    for measurement, rows in iot_dataset.rows.items():
        assert griddb_iot.row_count(measurement) == rows, measurement
    assert not griddb_iot.capabilities.unsupported
    answered = check_iot_queries(griddb_iot, iot_dataset)
    assert set(answered) == {*iot_types(), *(f"{name}-probe" for name in PROBES)}
