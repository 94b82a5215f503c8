"""Answer rows from IoTDB's results (``dialect.py`` says what each rendering returns).

A result arrives as its column names and its values by column (``client.result_columns``); the
rows are built in ``answers.answer_columns`` order: instants become nanoseconds (the server's are
ms), an entity is the entity level of a device's path, a bucket whose aggregates are all null was
empty and is left out."""

from __future__ import annotations

from typing import Any

import pandas as pd

from tsbench.targets.base import TargetError
from tsbench.targets.iotdb.dialect import ENTITY_LEVEL, NS_PER_MS, AnswerHeader
from tsbench.workload.query_types import Kind

GROUPED = (Kind.GROUPBY, Kind.ORDERBY_LIMIT, Kind.RANGE_AGG)
RAW = (Kind.HIGH_CPU, Kind.READ, Kind.SCAN)


def path_nodes(path: str) -> list[str]:
    """The nodes of a path, backquotes removed (a dot inside backquotes belongs to its node)."""
    nodes, current, quoted, index = [], [], False, 0
    while index < len(path):
        char = path[index]
        if char == "`":
            if quoted and path[index + 1 : index + 2] == "`":
                current.append("`")
                index += 1
            else:
                quoted = not quoted
        elif char == "." and not quoted:
            nodes.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    nodes.append("".join(current))
    return nodes


def entity_of(path: str) -> str:
    return path_nodes(path)[ENTITY_LEVEL]


def _cell(value: Any) -> Any:
    """A value, or None for the client's nulls (pandas' NA, NaN)."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return None
    return value


def _instants(times: list[Any]) -> list[int]:
    return [int(time) * NS_PER_MS for time in times]


def _field_columns(names: list[str], fields: tuple[str, ...]) -> list[int]:
    """The position of each field's first column among ``names`` (``agg(root.*.m.*.field)``)."""
    positions = []
    for field in fields:
        matches = [i for i, name in enumerate(names) if name.endswith(f".{field})") or name == f"{field}"]
        if not matches:
            raise TargetError(f"iotdb: no column of {field!r} among {names}")
        positions.append(matches[0])
    return positions


def rows_of(header: AnswerHeader, names: list[str], raw: list[list[Any]]) -> list[tuple[Any, ...]]:
    """The answer's rows of one result."""
    columns = [[_cell(v) for v in column] for column in raw]
    kind = header.kind
    if kind is Kind.LASTPOINT:
        return _lastpoint(header, columns)
    if kind in GROUPED:
        values = [columns[i] for i in _field_columns(names, header.fields)]
        if kind is Kind.RANGE_AGG:
            return [(values[0][0] if values[0] else None,)]
        times = _instants(columns[names.index("Time")])
        rows = [(times[r], *(v[r] for v in values)) for r in range(len(times))]
        return [row for row in rows if any(cell is not None for cell in row[1:])]
    times, devices = _instants(columns[names.index("Time")]), columns[names.index("Device")]
    values = columns[names.index("Device") + 1 :]
    rows = [(times[r], entity_of(devices[r]), *(v[r] for v in values)) for r in range(len(times))]
    if kind is Kind.GROUPBY_HOST:
        return [row for row in rows if any(cell is not None for cell in row[2:])]
    if kind in RAW:
        return rows
    raise TargetError(f"iotdb: no answer decoding for kind {kind}")


def _lastpoint(header: AnswerHeader, columns: list[list[Any]]) -> list[tuple[Any, ...]]:
    """One row per entity from ``SELECT LAST``'s rows (Time, Timeseries, Value, DataType): the row
    is at the newest of its series' times; a field whose newest point is older was null in it."""
    newest: dict[str, dict[str, tuple[int, Any]]] = {}
    for time, series, value in zip(columns[0], columns[1], columns[2], strict=True):
        nodes = path_nodes(series)
        newest.setdefault(nodes[ENTITY_LEVEL], {})[nodes[-1]] = (int(time) * NS_PER_MS, float(value))
    rows = []
    for entity, points in newest.items():
        at = max(time for time, _ in points.values())
        cells = [points[f][1] if f in points and points[f][0] == at else None for f in header.fields]
        rows.append((entity, at, *cells))
    return rows
