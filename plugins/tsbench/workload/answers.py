"""Normalised query answers and their comparison.

An answer is a list of rows under named columns. Cell types after normalisation: instants and
bucket starts as int ns since the epoch (UTC), tags as str, values as float (or None). Answers are
compared as sets keyed by the query kind's key columns (rows sorted by those keys first), so row
order returned by a database does not matter, but which rows it returns does: e.g. the *first*
five minutes instead of the last five is a mismatch.

Tolerance: two values agree when ``|a - b| <= abs_tol + rel_tol * |b|``; keys must be equal.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import chain, islice, zip_longest
from operator import itemgetter
from typing import Any

from tsbench.workload.answer_columns import CHUNK_ROWS, ColumnRows, nulls_last, rows_agree, values_agree
from tsbench.workload.iot_query_types import IOT_ANSWER_COLUMNS
from tsbench.workload.query_types import Kind, QueryType

# From this many rows an answer is held and checked by columns (bench/answer_forms.py --rows N
# --hosts 100: columns ÷ rows, build ×0.37 and check ×0.34 at 4,096 rows, ×0.68 and ×0.58 at 37,956
# rows — a high-cpu-all answer at 100 hosts); smaller answers stay tuples.
COLUMNS_FROM_ROWS = 4_096

REL_TOL = 1e-9
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
ABS_TOL = 1e-9


def answer_columns(qtype: QueryType, fields: tuple[str, ...] | None = None) -> tuple[list[str], list[str]]:
    """``(columns, key_columns)`` of an answer to ``qtype`` reading ``fields`` (default: the type's
    cpu fields; a query's own ``fields`` where the data is not cpu). ``hostname`` names the entity
    column whatever the entity key is."""
    if qtype.kind in IOT_ANSWER_COLUMNS:  # iot: fixed by the kind
        columns, key = IOT_ANSWER_COLUMNS[qtype.kind]
        return list(columns), list(key)
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


class AnswerShapeError(ValueError):
    """Rows whose width is not the query type's answer columns."""


def _check_width(qtype: QueryType, columns: list[str], rows: list[Any]) -> None:
    bad = next((row for row in rows if len(row) != len(columns)), None)
    if bad is not None:
        width = len(columns)
        raise AnswerShapeError(f"{qtype.name}: expected {width} columns {columns}, got {len(bad)}: {bad!r}")


def _normalised_rows(
    qtype: QueryType, columns: list[str], rows: list[Any], texts: dict[str, str]
) -> list[tuple[Any, ...]]:
    """``rows`` with every row replaced, in place, by its normalised tuple."""
    _check_width(qtype, columns, rows)
    for index, row in enumerate(rows):
        rows[index] = tuple(texts.setdefault(v, v) if isinstance(v, str) else _cell(v) for v in row)
    return rows


@dataclass
class Answer:
    """Rows under ``columns``; ``key`` names the columns that identify a row."""

    columns: list[str]
    rows: list[tuple[Any, ...]] | ColumnRows
    key: list[str] = field(default_factory=list)

    @classmethod
    def build(
        cls,
        qtype: QueryType,
        rows: list[tuple[Any, ...]] | list[list[Any]],
        fields: tuple[str, ...] | None = None,
    ) -> Answer:
        """Normalise raw database rows (in ``answer_columns`` order) into a canonical answer; ``rows``
        is left as it was."""
        return cls.adopt(qtype, list(rows), fields)

    @classmethod
    def adopt(cls, qtype: QueryType, rows: list[Any], fields: tuple[str, ...] | None = None) -> Answer:
        """``build`` that takes ``rows`` over: each row is normalised in place (its raw form freed as
        soon as it is replaced) and the list is sorted and kept, so one copy of a large answer
        (a million rows at 4,000 hosts) is alive at a time."""
        return cls.adopt_parts(qtype, [rows], fields)

    @classmethod
    def adopt_parts(
        cls, qtype: QueryType, parts: Iterable[list[Any]], fields: tuple[str, ...] | None = None
    ) -> Answer:
        """``adopt`` over an answer decoded in parts, each part normalised before the next one is
        decoded. An answer of one part under ``COLUMNS_FROM_ROWS`` rows stays a list of tuples;
        a larger one, or one of more parts, is held by columns (``ColumnRows``: a fifth of the
        memory, checked with NumPy), each part freed once copied."""
        columns, key = answer_columns(qtype, fields)
        texts: dict[str, str] = {}  # one str object per distinct tag value, not one per row
        parts = iter(parts)
        first, second = next(parts, []), next(parts, None)
        if second is None and len(first) < COLUMNS_FROM_ROWS:
            rows: list[tuple[Any, ...]] | ColumnRows = _normalised_rows(qtype, columns, first, texts)
        else:
            rows = ColumnRows(len(columns))
            for part in chain([first] if second is None else [first, second], parts):
                _check_width(qtype, columns, part)
                rows.extend_raw(part, _cell, texts)
        answer = cls(columns, rows, key)
        answer._sort()
        return answer

    @staticmethod
    def normalised_parts(
        qtype: QueryType, parts: Iterable[list[Any]], fields: tuple[str, ...] | None = None
    ) -> Iterator[list[tuple[Any, ...]]]:
        """Raw parts normalised as ``adopt_parts`` normalises them, each given back (as tuples) before
        the next is decoded, in the order they came: an answer never held whole."""
        columns, _ = answer_columns(qtype, fields)
        texts: dict[str, str] = {}
        for part in parts:
            _check_width(qtype, columns, part)
            rows = ColumnRows(len(columns))
            rows.extend_raw(part, _cell, texts)
            yield from rows.chunks(max(len(rows), 1))

    def _sort(self) -> None:
        """By the key columns (all columns when there is no key), NULLs last; rows whose keys repeat
        (a database that keeps rows sent twice) by the other columns next, as the oracle orders
        them (``oracle.sorted_sql``), so that the order does not depend on the database's."""
        key = [self.columns.index(k) for k in self.key] or list(range(len(self.columns)))
        self._sort_by(key)
        if len(key) < len(self.columns) and self._keys_repeat(key):
            self._sort_by(key + [i for i in range(len(self.columns)) if i not in key])

    def _sort_by(self, index: list[int]) -> None:
        if isinstance(self.rows, ColumnRows):
            self.rows.sort(index)
            return
        try:
            self.rows.sort(key=itemgetter(*index))  # no NULL in the keys: cheap keys
        except TypeError:  # a NULL beside a value
            self.rows.sort(key=lambda row: nulls_last(row[i] for i in index))

    def _keys_repeat(self, index: list[int]) -> bool:
        """Whether two neighbouring rows (sorted by ``index``) have the same key."""
        if isinstance(self.rows, ColumnRows):
            return self.rows.keys_repeat(index)
        key = itemgetter(*index)
        return any(key(a) == key(b) for a, b in itertools.pairwise(self.rows))

    def row_chunks(self, size: int = CHUNK_ROWS) -> Iterator[list[tuple[Any, ...]]]:
        """The rows in order, ``size`` at a time as lists of tuples of Python values (an answer
        held by columns is turned back into tuples one chunk at a time)."""
        if isinstance(self.rows, ColumnRows):
            yield from self.rows.chunks(size)
            return
        for start in range(0, len(self.rows), size):
            yield self.rows[start : start + size]

    def to_json(self) -> dict[str, Any]:
        rows = self.rows if isinstance(self.rows, list) else list(self.rows)
        return {"columns": self.columns, "key": self.key, "rows": rows}  # tuples dump as arrays

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


def compare(
    expected: Answer, actual: Answer, rel_tol: float = REL_TOL, abs_tol: float = ABS_TOL, sample: int = 5
) -> Comparison:
    """Compare two normalised answers; on mismatch keep up to ``sample`` differing rows."""
    return compare_rows(expected.columns, expected.key, expected.rows, actual, rel_tol, abs_tol, sample)


def compare_rows(
    columns: list[str],
    key: list[str],
    expected_rows: Iterable[tuple[Any, ...]],
    actual: Answer,
    rel_tol: float = REL_TOL,
    abs_tol: float = ABS_TOL,
    sample: int = 5,
) -> Comparison:
    """``compare`` with the expected rows as any iterable in answer order (e.g. streamed from the
    answers file, never all in memory). An answer held by columns is judged a chunk of rows at a
    time (``rows_agree``), the same verdict as row by row."""
    if columns != actual.columns:
        return Comparison(False, f"columns differ: expected {columns}, got {actual.columns}")
    key_index = [columns.index(k) for k in key]
    tally = _Tally(sample)
    expected = iter(expected_rows)
    position = 0
    if isinstance(actual.rows, ColumnRows):
        while chunk := list(islice(expected, CHUNK_ROWS)):
            judged = chunk[: max(len(actual.rows) - position, 0)]
            agree = rows_agree(judged, actual.rows, position, key_index, rel_tol, abs_tol)
            for offset, want in enumerate(chunk):
                if agree is not None and offset < len(judged) and agree[offset]:
                    continue
                got = actual.rows[position + offset] if position + offset < len(actual.rows) else None
                tally.judge(position + offset, want, got, key_index, rel_tol, abs_tol)
            position += len(chunk)
            tally.expected_count += len(chunk)
    rest = actual.rows[position:] if isinstance(actual.rows, ColumnRows) else actual.rows  # extra rows
    for offset, (want, got) in enumerate(zip_longest(expected, rest)):
        tally.expected_count += want is not None
        tally.judge(position + offset, want, got, key_index, rel_tol, abs_tol)
    return tally.comparison(len(actual.rows))


@dataclass
class _Tally:
    """Mismatches counted over every row, up to ``sample`` of them kept as a diff; the callers
    count the expected rows."""

    sample: int
    mismatches: int = 0
    expected_count: int = 0
    diff: list[dict[str, Any]] = field(default_factory=list)

    def judge(
        self, position: int, want: Any, got: Any, key_index: list[int], rel_tol: float, abs_tol: float
    ) -> None:
        if want is not None and got is not None and _rows_agree(want, got, key_index, rel_tol, abs_tol):
            return
        self.mismatches += 1
        if len(self.diff) < self.sample:
            self.diff.append(
                {
                    "row": position,
                    "expected": None if want is None else list(want),
                    "actual": None if got is None else list(got),
                }
            )

    def comparison(self, actual_count: int) -> Comparison:
        if not self.mismatches:
            return Comparison(True)
        reason = f"{self.mismatches} of {self.expected_count} expected rows differ"
        if self.expected_count != actual_count:
            reason += f" (expected {self.expected_count} rows, got {actual_count})"
        return Comparison(False, reason, self.diff)


def _rows_agree(want: Any, got: Any, key_index: list[int], rel_tol: float, abs_tol: float) -> bool:
    if len(want) != len(got) or any(want[i] != got[i] for i in key_index):
        return False
    return all(values_agree(w, g, rel_tol, abs_tol) for w, g in zip(want, got, strict=True))
