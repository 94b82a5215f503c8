"""``PgWireSession`` on a real PostgreSQL: a reply kept as the server's bytes decodes to what libpq
and psycopg's loaders make of the same query (every type the answers use, NULLs, several parts),
takes well under half a libpq result's memory, and a refused query, a dropped connection and an
empty answer behave as they do through libpq — after which libpq's connection still works."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tsbench.targets.base import Target, TargetError
from tsbench.targets.pgwire import PgWireSession
from tsbench.workload.answers import _cell
from tsbench.workload.dataset import Dataset

pytestmark = pytest.mark.integration

TYPES = (
    "SELECT 1::int2, 2::int4, 3::int8, 1.5::float4, 2.5::float8, 'host_1'::text, 'x'::varchar,"
    " true, NULL::float8, 12.34::numeric, '2016-01-01 00:00:01.5+00'::timestamptz,"
    " '2016-01-01 00:00:00'::timestamp, NULL::timestamptz, ''::text"
)
# 200,000 rows of the shape of a high-cpu-all answer (an instant, a tag, ten float8), some NULLs.
WIDE = (
    "SELECT timestamptz '2016-01-01' + g * interval '10 s' AS time, 'host_' || (g % 4000) AS hostname,"
    + ", ".join(
        f"CASE WHEN g % 97 = {i} THEN NULL ELSE g * 1.25 + {i} END::float8 AS f{i}" for i in range(10)
    )
    + " FROM generate_series(1, 200000) AS g"
)


@pytest.fixture(scope="module")
def target(serve, small_dataset: Dataset) -> Iterator[Target]:
    with serve("postgres", small_dataset) as (_, target):
        yield target


@pytest.fixture(scope="module")
def session(target: Target) -> Iterator[PgWireSession]:
    session = target.session()
    yield session
    session.close()


def _through_libpq(session: PgWireSession, text: str) -> list[tuple]:
    return session.decode(session._fetch_result(text))


def test_reply_bytes_decode_as_psycopg_loads_them(session: PgWireSession) -> None:
    raw = session.fetch(TYPES)
    assert isinstance(raw, bytearray), "an unencrypted connection keeps the reply's bytes"
    assert session.decode(raw) == _through_libpq(session, TYPES)
    parts = list(session.decode_parts(session.fetch(TYPES)))
    as_ns = [tuple(_cell(value) for value in row) for row in _through_libpq(session, TYPES)]
    assert [tuple(_cell(value) for value in row) for part in parts for row in part] == as_ns


def test_a_large_answer_in_parts_equals_libpq_and_takes_under_half_its_memory(session: PgWireSession) -> None:
    raw = session.fetch(WIDE)
    wire_bytes = session.raw_size(raw)
    parts = list(session.decode_parts(raw, rows_per_part=65_536))
    assert [len(part) for part in parts] == [65_536, 65_536, 65_536, 3_392]
    result = session._fetch_result(WIDE)
    libpq_bytes = session.raw_size(result)
    expected = session.decode(result)
    assert [tuple(map(_cell, row)) for part in parts for row in part] == [
        tuple(map(_cell, r)) for r in expected
    ]
    assert wire_bytes < 0.5 * libpq_bytes, (wire_bytes, libpq_bytes)


def test_an_empty_answer_is_no_rows(session: PgWireSession) -> None:
    assert session.execute("SELECT 1 WHERE false") == []


def test_a_refused_query_names_the_error_and_the_session_goes_on(session: PgWireSession) -> None:
    with pytest.raises(TargetError, match='relation "no_such_table" does not exist'):
        session.fetch("SELECT * FROM no_such_table")
    assert session.execute("SELECT 41 + 1") == [(42,)]
    assert session.connection.execute("SELECT 'libpq still in step'").fetchone() == ("libpq still in step",)
    assert session.connection.info.transaction_status == psycopg.pq.TransactionStatus.IDLE


def test_a_dropped_connection_is_a_clear_error(target: Target) -> None:
    session, admin = target.session(), target.session()
    try:
        assert admin.execute(f"SELECT pg_terminate_backend({session.connection.info.backend_pid})") == [
            (True,)
        ]
        with pytest.raises(TargetError, match="connection lost"):
            session.fetch("SELECT 1")
    finally:
        session.close()
        admin.close()
