"""InfluxDB's JSON answers (``/query``) shaped into rows in the answer header's column order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tsbench.targets.base import TargetError
from tsbench.targets.influxdb import dialect

ROWS_PER_PART = 65_536  # rows shaped at once by ``shaped_parts``


def first_result(body: dict[str, Any], text: str) -> dict[str, Any]:
    if "error" in body:
        raise TargetError(f"influxdb: {body['error']}\n{text}")
    result = body["results"][0]
    if "error" in result:
        raise TargetError(f"influxdb: {result['error']}\n{text}")
    return result


def shaped_parts(
    text: str, result: dict[str, Any], rows_per_part: int = ROWS_PER_PART
) -> Iterator[list[tuple[Any, ...]]]:
    """Rows in the answer header's column order from one statement's series, ``rows_per_part`` at
    a time; each parsed row is dropped from ``result`` once shaped."""
    columns, no_rows = dialect.parse_header(text)
    part: list[tuple[Any, ...]] = []
    shaped = 0
    for series in result.get("series", ()):
        getters = _getters(columns, series)
        values = series.get("values") or []
        for position, row in enumerate(values):
            part.append(tuple(value if index < 0 else row[index] for index, value in getters))
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


def _getters(columns: list[str], series: dict[str, Any]) -> list[tuple[int, Any]]:
    """Per answer column: ``(index, None)`` for a column of the series, ``(-1, value)`` for a tag."""
    names = series["columns"]
    tags = series.get("tags") or {}
    getters: list[tuple[int, Any]] = []
    for column in columns:
        source = "time" if column in ("bucket", "time") else column
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
