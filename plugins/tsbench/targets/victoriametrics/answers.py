"""Answer rows from the query API's JSON: the series of a rendering's requests merged by answer key.

Each point of each series fills one cell: its key comes from the point (``bucket``: its time floored
to the bucket; ``time``: its time) and the series' entity label; its column from the series' name
(the header's ``values``) or, for a ``times`` request, the ``time`` column. Times are Unix seconds to
the millisecond in the JSON and nanoseconds in the answer.
"""

from __future__ import annotations

import json
import math
from typing import Any

from tsbench.targets.base import TargetError
from tsbench.targets.victoriametrics.dialect import NS_PER_MS, AnswerHeader, Request


def _instant_ns(seconds: Any) -> int:
    return round(float(seconds) * 1000) * NS_PER_MS


def _key(header: AnswerHeader, labels: dict[str, str], point_ns: int) -> tuple[tuple[str, Any], ...]:
    parts = []
    for column in header.by:
        if column == "bucket":
            parts.append((column, point_ns // header.bucket_ns * header.bucket_ns))
        elif column == "time":
            parts.append((column, point_ns))
        else:  # the entity
            parts.append((column, labels.get(header.entity)))
    return tuple(parts)


def data_of(body: bytes, request: Request) -> list[dict[str, Any]]:
    """The ``result`` series of one answer (TargetError when the server reports an error)."""
    document = json.loads(body)
    if document.get("status") != "success":
        raise TargetError(f"victoriametrics: {document.get('error', document)!r}\n{request.expression}")
    return document["data"]["result"]


def merged_rows(
    header: AnswerHeader, answers: list[tuple[Request, list[dict[str, Any]]]]
) -> list[tuple[Any, ...]]:
    """The answer's rows (columns in ``header.columns`` order) from each request's series."""
    table: dict[tuple[tuple[str, Any], ...], dict[str, Any]] = {}
    for request, series_list in answers:
        for series in series_list:
            labels = series.get("metric", {})
            column = "time" if request.times else header.values.get(labels.get("__name__", ""))
            if column is None:
                raise TargetError(f"victoriametrics: a series the query did not ask for: {labels}")
            points = series["values"] if "values" in series else [series["value"]]
            for stamp, text in points:
                value = float(text)
                if math.isnan(value):
                    continue
                cells = table.setdefault(_key(header, labels, _instant_ns(stamp)), {})
                cells[column] = _instant_ns(value) if request.times else value
    if not table and header.no_rows is not None:
        return [tuple(header.no_rows)]
    rows = []
    for key, cells in table.items():
        cells.update(key)
        rows.append(tuple(cells.get(column) for column in header.columns))
    return rows
