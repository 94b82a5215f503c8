"""Number and text formatting for the report (Jinja filters; one place so tables and prose agree).

Every formatter takes ``None`` (a figure that does not exist) and returns an en dash for it.
"""

from __future__ import annotations

import json
import math
from typing import Any

from tsbench.workload.usecases import USE_CASES

DASH = "–"


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and not math.isfinite(value))


def integer(value: float | None) -> str:
    """``43200`` → ``"43,200"``."""
    return DASH if _missing(value) else f"{round(value):,}"


def rate(value: float | None) -> str:
    """A throughput (rows/s, metrics/s, queries/s): whole numbers from 100 up, else 3 significant
    digits (``54035.2`` → ``"54,035"``, ``58.2`` → ``"58.2"``, ``4.123`` → ``"4.12"``)."""
    if _missing(value):
        return DASH
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def ms(value: float | None) -> str:
    """A latency in milliseconds, 3 significant digits below 100 ms (``0.1234`` → ``"0.123"``):
    the same digits rule as ``rate``."""
    return rate(value)


def seconds(value: float | None) -> str:
    if _missing(value):
        return DASH
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def size(value: float | None) -> str:
    """Bytes in decimal units, 3 significant digits: ``42131456`` → ``"42.1 MB"``."""
    if _missing(value):
        return DASH
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(value) >= scale:
            scaled = value / scale
            digits = 0 if scaled >= 100 else 1 if scaled >= 10 else 2
            return f"{scaled:.{digits}f} {unit}"
    return f"{round(value)} B"


def percent(value: float | None) -> str:
    """CPU % (100 % = one core busy): ``91.666`` → ``"91.7 %"``."""
    return DASH if _missing(value) else f"{value:.1f} %"


def times(ratio: float | None) -> str:
    """A ratio as ``"2.4×"`` (``"1.18×"`` below 2, ``"12×"`` from 10)."""
    if _missing(ratio):
        return DASH
    if ratio >= 10:
        return f"{ratio:,.0f}×"
    if ratio >= 2:
        return f"{ratio:.1f}×"
    return f"{ratio:.2f}×"


def instant(text: str | None) -> str:
    """``"2026-11-22T10:57:56.706155646Z"`` → ``"2026-11-22 10:57:56 UTC"``."""
    if not text:
        return DASH
    date, _, clock = text.partition("T")
    return f"{date} {clock[:8]} UTC" if clock else date


def cell(value: Any) -> str:
    """A value from an answer row or a validation result, short enough for a table cell."""
    if value is None:
        return "null"
    if isinstance(value, float):
        return f"{value:.12g}"
    if isinstance(value, dict | list | tuple):
        text = json.dumps(value, ensure_ascii=False, default=str)
    else:
        text = str(value)
    return text if len(text) <= 300 else text[:297] + "…"


def usd(value: float | None) -> str:
    """US dollars: cents from $1 up (``1234.5`` → ``"$1,234.50"``), else 3 significant digits
    (``0.00329`` → ``"$0.00329"``)."""
    if _missing(value):
        return DASH
    return f"${value:,.2f}" if abs(value) >= 1 else f"${value:.3g}"


def entities(use_case: str) -> str:
    """What a use case's scale counts: ``hosts``, ``trucks``, ``metrics``."""
    known = USE_CASES.get(use_case)
    return known.entities if known is not None else "entities"


FILTERS = {
    "entities": entities,
    "integer": integer,
    "rate": rate,
    "ms": ms,
    "seconds": seconds,
    "size": size,
    "percent": percent,
    "times": times,
    "instant": instant,
    "cell": cell,
    "usd": usd,
}
