"""Normalised query answers and their comparison.

An answer is a list of rows under named columns. Cell types after normalisation: instants and
bucket starts as int ns since the epoch (UTC), tags as str, values as float (or None). Answers are
compared as sets keyed by the query kind's key columns (rows sorted by those keys first), so row
order returned by a database does not matter, but which rows it returns does: e.g. the *first*
five minutes instead of the last five is a mismatch.

Tolerance: two values agree when ``|a - b| <= abs_tol + rel_tol * |b|``; keys must be equal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tsbench.workload.query_types import Kind, QueryType

REL_TOL = 1e-9
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
ABS_TOL = 1e-9


def answer_columns(qtype: QueryType, fields: tuple[str, ...] | None = None) -> tuple[list[str], list[str]]:
    """``(columns, key_columns)`` of an answer to ``qtype`` reading ``fields`` (default: the type's
    cpu fields; a query's own ``fields`` where the data is not cpu). ``hostname`` names the entity
    column whatever the entity key is."""
    fields = qtype.fields if fields is None else fields
    aggregated = [f"{qtype.agg}_{f}" for f in fields]
    if qtype.kind in (Kind.GROUPBY, Kind.ORDERBY_LIMIT):
        return ["bucket", *aggregated], ["bucket"]
    if qtype.kind is Kind.GROUPBY_HOST:
        return ["bucket", "hostname", *aggregated], ["bucket", "hostname"]
    if qtype.kind is Kind.LASTPOINT:
        return ["hostname", "time", *fields], ["hostname"]
    if qtype.kind is Kind.RANGE_AGG:
        return [f"{qtype.agg}_{fields[0]}"], []
    # HIGH_CPU, READ, SCAN: raw rows
    return ["time", "hostname", *fields], ["time", "hostname"]


def _cell(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if hasattr(value, "value") and hasattr(value, "tz_convert"):  # pandas Timestamp
        return int(value.value)
    if isinstance(value, datetime):  # exact integer arithmetic; a naive datetime is UTC
        delta = (value if value.tzinfo else value.replace(tzinfo=UTC)) - EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000
    number = float(value)
    return None if math.isnan(number) else number


@dataclass
class Answer:
    """Rows under ``columns``; ``key`` names the columns that identify a row."""

    columns: list[str]
    rows: list[tuple[Any, ...]]
    key: list[str] = field(default_factory=list)

    @classmethod
    def build(
        cls,
        qtype: QueryType,
        rows: list[tuple[Any, ...]] | list[list[Any]],
        fields: tuple[str, ...] | None = None,
    ) -> Answer:
        """Normalise raw database rows (in ``answer_columns`` order) into a canonical answer."""
        columns, key = answer_columns(qtype, fields)
        clean = []
        for row in rows:
            if len(row) != len(columns):
                raise ValueError(
                    f"{qtype.name}: expected {len(columns)} columns {columns}, got {len(row)}: {row!r}"
                )
            clean.append(tuple(_cell(v) for v in row))
        answer = cls(columns, clean, key)
        answer.rows.sort(key=answer._sort_key)
        return answer

    def _sort_key(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        index = [self.columns.index(k) for k in self.key] or range(len(self.columns))
        return tuple((row[i] is None, row[i] if row[i] is not None else 0) for i in index)

    def to_json(self) -> dict[str, Any]:
        return {"columns": self.columns, "key": self.key, "rows": self.rows}  # tuples dump as arrays

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> Answer:
        """From ``to_json``'s form; its row lists become tuples in place (one copy alive at a time)."""
        rows = body["rows"]
        for index, row in enumerate(rows):
            rows[index] = tuple(row)
        return cls(list(body["columns"]), rows, list(body.get("key", [])))


@dataclass
class Comparison:
    """Outcome of comparing an actual answer with the expected one."""

    ok: bool
    reason: str = ""
    diff: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "reason": self.reason, "diff": self.diff}


def _agree(expected: Any, actual: Any, rel_tol: float, abs_tol: float) -> bool:
    if expected is None or actual is None:
        return expected is actual
    if isinstance(expected, str) or isinstance(actual, str):
        return expected == actual
    return abs(float(actual) - float(expected)) <= abs_tol + rel_tol * abs(float(expected))


def compare(
    expected: Answer, actual: Answer, rel_tol: float = REL_TOL, abs_tol: float = ABS_TOL, sample: int = 5
) -> Comparison:
    """Compare two normalised answers; on mismatch keep up to ``sample`` differing rows."""
    if expected.columns != actual.columns:
        return Comparison(False, f"columns differ: expected {expected.columns}, got {actual.columns}")
    key_index = [expected.columns.index(k) for k in expected.key]
    diff: list[dict[str, Any]] = []
    mismatches = 0
    for position in range(max(len(expected.rows), len(actual.rows))):
        want = expected.rows[position] if position < len(expected.rows) else None
        got = actual.rows[position] if position < len(actual.rows) else None
        if want is not None and got is not None:
            same_key = all(want[i] == got[i] for i in key_index)
            if same_key and all(_agree(w, g, rel_tol, abs_tol) for w, g in zip(want, got, strict=True)):
                continue
        mismatches += 1
        if len(diff) < sample:
            diff.append(
                {
                    "row": position,
                    "expected": None if want is None else list(want),
                    "actual": None if got is None else list(got),
                }
            )
    if not mismatches:
        return Comparison(True)
    reason = f"{mismatches} of {len(expected.rows)} expected rows differ"
    if len(expected.rows) != len(actual.rows):
        reason += f" (expected {len(expected.rows)} rows, got {len(actual.rows)})"
    return Comparison(False, reason, diff)
