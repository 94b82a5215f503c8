"""An answer decoded in several parts is held by columns and must be the very answer the row form
is: same rows, same order (ties kept as the rows came), NULLs and NaN as ``None``, the database
types normalised the same way, and the same comparison verdicts."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from tsbench.workload import answers
from tsbench.workload.answer_columns import ColumnRows
from tsbench.workload.answers import Answer, AnswerShapeError, compare
from tsbench.workload.query_types import QUERY_TYPES

HIGH_CPU = QUERY_TYPES["high-cpu-all"]
LASTPOINT = QUERY_TYPES["lastpoint"]
START = datetime(2016, 1, 1, tzinfo=UTC)


def _raw_rows(count: int, seed: int = 7) -> list[list[object]]:
    """Rows as drivers return them: datetimes, repeated tags, floats with a NULL, a NaN, an int
    and a Decimal among them, in no particular order."""
    rnd = random.Random(seed)
    rows: list[list[object]] = []
    for i in range(count):
        values: list[object] = [rnd.random() * 100 for _ in range(10)]
        if i % 97 == 0:
            values[3] = None
        if i % 89 == 0:
            values[4] = float("nan")
        if i % 83 == 0:
            values[5], values[6] = 42, Decimal("1.25")
        rows.append([START + timedelta(seconds=10 * (i // 50)), f"host_{i % 50}", *values])
    rnd.shuffle(rows)
    return rows


def _in_parts(rows: list[list[object]], size: int) -> list[list[list[object]]]:
    return [[list(r) for r in rows[i : i + size]] for i in range(0, len(rows), size)]


def test_a_many_part_answer_is_the_row_answer_held_by_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _raw_rows(5_000)
    one_part = Answer.build(HIGH_CPU, rows)  # 5,000 rows ≥ COLUMNS_FROM_ROWS: by columns too
    monkeypatch.setattr(answers, "COLUMNS_FROM_ROWS", 10**9)
    by_rows = Answer.build(HIGH_CPU, rows)
    by_columns = Answer.adopt_parts(HIGH_CPU, _in_parts(rows, 700))
    assert isinstance(by_rows.rows, list) and isinstance(by_columns.rows, ColumnRows)
    assert isinstance(one_part.rows, ColumnRows) and list(one_part.rows) == list(by_columns.rows)
    assert len(by_columns.rows) == 5_000
    as_rows = list(by_columns.rows)
    assert [r[:2] for r in as_rows] == [r[:2] for r in by_rows.rows]  # key order, ties as they came
    assert compare(by_rows, by_columns).ok and compare(by_columns, by_rows).ok
    assert as_rows[0] == by_columns.rows[0] and by_columns.rows[-1] == as_rows[-1]
    nulls = [r for r in as_rows if r[5] is None or r[6] is None]
    assert nulls and all(isinstance(v, float) for r in as_rows for v in r[7:])
    assert by_columns.to_json()["rows"] == by_rows.to_json()["rows"]


def test_a_wrong_value_or_a_missing_row_is_still_caught_by_columns() -> None:
    rows = _raw_rows(3_000)
    expected = Answer.build(HIGH_CPU, rows)
    changed = [list(r) for r in rows]
    changed[1234][7] = 1e9
    result = compare(expected, Answer.adopt_parts(HIGH_CPU, _in_parts(changed, 500)))
    assert not result.ok and result.reason == "1 of 3000 expected rows differ"
    result = compare(expected, Answer.adopt_parts(HIGH_CPU, _in_parts(rows[:-1], 500)))
    assert not result.ok and "expected 3000 rows, got 2999" in result.reason


def test_null_keys_sort_last_in_both_forms() -> None:
    rows = [[None if i % 3 == 0 else f"host_{i}", START, *range(10)] for i in range(30)]
    by_rows = Answer.build(LASTPOINT, rows)
    by_columns = Answer.adopt_parts(LASTPOINT, _in_parts(rows, 7))
    assert list(by_columns.rows) == by_rows.rows
    assert all(r[0] is None for r in by_rows.rows[-10:])


def test_a_part_of_the_wrong_width_is_refused() -> None:
    parts = _in_parts(_raw_rows(100), 40)
    parts[2][5] = parts[2][5][:-1]
    with pytest.raises(AnswerShapeError, match="expected 12 columns"):
        Answer.adopt_parts(HIGH_CPU, parts)


def test_both_forms_give_the_same_verdict_reason_and_diff() -> None:
    """Changed values, a NULL for a number, a wrong key, a missing and an extra row: the column
    form's comparison equals the row form's, field by field."""
    rows = _raw_rows(4_000, seed=11)
    expected = Answer.build(HIGH_CPU, rows)
    normal = list(expected.rows)
    cases = {
        "values": [r if i % 777 else (*r[:5], 1e9, *r[6:]) for i, r in enumerate(normal)],
        "null": [r if i != 10 else (*r[:2], None, *r[3:]) for i, r in enumerate(normal)],
        "key": [r if i != 3999 else (r[0], "host_x", *r[2:]) for i, r in enumerate(normal)],
        "missing": normal[:-3],
        "extra": [*normal, (normal[-1][0] + 1, "host_0", *normal[-1][2:])],
    }
    for name, changed in cases.items():
        as_rows = Answer.build(HIGH_CPU, [list(r) for r in changed])
        as_columns = Answer.adopt_parts(HIGH_CPU, _in_parts([list(r) for r in changed], 900))
        by_rows, by_columns = compare(expected, as_rows), compare(expected, as_columns)
        assert not by_rows.ok, name
        assert by_columns.to_json() == by_rows.to_json(), name
