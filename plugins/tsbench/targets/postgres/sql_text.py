"""PostgreSQL literals: instants, intervals and strings as SQL text (µs precision, PostgreSQL's own)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tsbench.timeutil import NS_PER_SECOND

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def instant(ns: int) -> str:
    """``TIMESTAMPTZ '2016-01-01 00:00:00+00'`` (µs precision: PostgreSQL's own)."""
    if ns % 1_000:
        raise ValueError(f"{ns} ns is not a whole microsecond; PostgreSQL keeps µs")
    moment = _EPOCH + timedelta(microseconds=ns // 1_000)
    body = moment.strftime("%Y-%m-%d %H:%M:%S")
    if moment.microsecond:
        body += f".{moment.microsecond:06d}"
    return f"TIMESTAMPTZ '{body}+00'"


def interval(ns: int) -> str:
    """``'60 seconds'`` (µs precision)."""
    if ns % NS_PER_SECOND == 0:
        return f"'{ns // NS_PER_SECOND} seconds'"
    if ns % 1_000:
        raise ValueError(f"{ns} ns is not a whole microsecond")
    return f"'{ns // 1_000} microseconds'"


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
