"""InfluxDB's JSON answers (``/query``) shaped into rows in the answer header's column order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tsbench.targets.base import TargetError
from tsbench.targets.influxdb import dialect
from tsbench.targets.influxdb.rollup import COUNT, SUM

ROWS_PER_PART = 65_536  # rows shaped at once by ``shaped_parts``
TIME_COLUMNS = ("bucket", "time", "day")  # answer columns taken from the result's ``time``


def statement_results(body: dict[str, Any], text: str) -> list[dict[str, Any]]:
    """Every statement's result of a multi-statement /query answer (TargetError on any error)."""
    if "error" in body:
        raise TargetError(f"influxdb: {body['error']}\n{text}")
    failed = [r["error"] for r in body["results"] if "error" in r]
    if failed:
        raise TargetError(f"influxdb: {failed[0]}\n{text}")
    return body["results"]


def first_result(body: dict[str, Any], text: str) -> dict[str, Any]:
    """The first (a one-statement text's only) statement's result (TargetError on any error)."""
    return statement_results(body, text)[0]


def shaped_parts(
    answer: dialect.AnswerHeader, result: dict[str, Any], rows_per_part: int = ROWS_PER_PART
) -> Iterator[list[tuple[Any, ...]]]:
    """Rows in the answer header's column order from one statement's series, ``rows_per_part`` at
    a time; each parsed row is dropped from ``result`` once shaped."""
    columns, no_rows = answer.columns, answer.no_rows
    width = len(columns)
    part: list[tuple[Any, ...]] = []
    shaped = 0
    for series in result.get("series", ()):
        getters = _getters([*columns, *answer.equal[1:]] if answer.equal else columns, series)
        values = series.get("values") or []
        for position, row in enumerate(values):
            cells = tuple(value if index < 0 else row[index] for index, value in getters)
            if answer.equal:
                cells = _checked(cells, width, columns.index(answer.equal[0]), answer.equal)
            part.append(cells)
            values[position] = None
            if len(part) == rows_per_part:
                shaped += len(part)
                yield part
                part = []
    shaped += len(part)
    if not shaped and no_rows is not None:
        part.append((_no_rows_value(no_rows),))
    if part:
        yield part


def _checked(cells: tuple[Any, ...], width: int, column: int, equal: tuple[str, str]) -> tuple[Any, ...]:
    """The answer's cells of a row whose ``equal`` columns agree (TargetError if they differ)."""
    if cells[column] != cells[width]:
        raise TargetError(
            f"influxdb: {equal[0]} = {cells[column]!r} but {equal[1]} = {cells[width]!r} in one row: the "
            f"rendering is exact only where they agree ({cells[:width]})"
        )
    return cells[:width]


def combined_rows(answer: dialect.AnswerHeader, body: dict[str, Any], text: str) -> list[tuple[Any, ...]]:
    """The rows of a rendering whose statements each answer part of the window (``combine`` in
    its header; ``rollup.py``), merged per answer key (the columns that are not ``<combine>_<field>``
    aggregates; keys first in the header) and sorted by it: ``max`` keeps the largest value;
    ``mean`` divides the summed ``SUM<column>`` by the summed ``COUNT<column>`` (None: nothing
    counted). ``text`` names the rendering in an error."""
    values = [c for c in answer.columns if c.startswith(f"{answer.combine}_")]  # <agg>_<field>
    keys = [c for c in answer.columns if c not in values]
    mean = answer.combine == "mean"
    parts = [f"{SUM}{c}" for c in values] + [f"{COUNT}{c}" for c in values] if mean else values
    merged: dict[tuple[Any, ...], list[Any]] = {}
    for result in statement_results(body, text):
        for series in result.get("series", ()):
            getters = _getters([*keys, *parts], series)
            for row in series.get("values") or []:
                cells = [value if index < 0 else row[index] for index, value in getters]
                key, got = tuple(cells[: len(keys)]), cells[len(keys) :]
                held = merged.setdefault(key, [None] * len(parts))
                merged[key] = [_merge(answer.combine, a, b) for a, b in zip(held, got, strict=True)]
    if answer.combine == "max":
        return [(*key, *cells) for key, cells in sorted(merged.items())]
    width = len(values)
    return [
        (*key, *(s / n if n else None for s, n in zip(cells[:width], cells[width:], strict=True)))
        for key, cells in sorted(merged.items())
    ]


def _merge(combine: str | None, held: Any, got: Any) -> Any:
    if held is None or got is None:
        return got if held is None else held
    return max(held, got) if combine == "max" else held + got


def _getters(columns: list[str], series: dict[str, Any]) -> list[tuple[int, Any]]:
    """Per answer column: ``(index, None)`` for a column of the series, ``(-1, value)`` for a tag."""
    names = series["columns"]
    tags = series.get("tags") or {}
    getters: list[tuple[int, Any]] = []
    for column in columns:
        source = "time" if column in TIME_COLUMNS else column
        if source in names:
            getters.append((names.index(source), None))
        elif column in tags:
            getters.append((-1, tags[column]))
        else:
            raise TargetError(f"influxdb: result has no column or tag {column!r}: {names} {tags}")
    return getters


def _no_rows_value(text: str) -> Any:
    if text == "null":
        return None
    return float(text) if "." in text else int(text)
