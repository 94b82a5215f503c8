"""What a suite is made of, independent of great_expectations: frames, checks, and the entries they
become in ``validation.json``.

A suite builder (``dataset``, ``load``, ``queries``, ``history``) returns a ``SuiteSpec``: one or more
``Frame`` objects (a small pandas DataFrame plus the ``Check`` objects to evaluate on it) and,
optionally, static entries (a check that could not run, e.g. "skipped (not enough history)").
``tsbench.validation.gx`` turns every check into a great_expectations expectation and runs it on
its frame. Keeping the builders free of GE imports keeps them fast to import and easy to test.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd


@dataclass(frozen=True)
class Check:
    """One expectation on a frame.

    ``expectation`` is the class name in ``great_expectations.expectations`` (e.g.
    ``"ExpectColumnValuesToBeBetween"``) and ``kwargs`` its arguments. ``where`` limits it to the rows
    where ``column == value`` (a GE row condition), so one frame can hold every target and each
    target still gets its own, named result. ``observed`` (exact facts computed before GE ran, e.g.
    by DuckDB) replaces GE's own summary in ``validation.json`` when given; GE's full result is kept
    in ``validation/<suite>.json`` either way. Checks sharing a ``group`` become one entry named after
    the group (``part`` labels each member in the merged ``observed``).
    """

    name: str
    expectation: str
    kwargs: dict[str, Any]
    where: tuple[str, Any] | None = None
    observed: Any = None
    details: str = ""
    group: str | None = None
    part: str = ""


@dataclass(frozen=True)
class Frame:
    """A DataFrame and the checks that run on it (one GE data asset, suite and validation)."""

    name: str
    frame: pd.DataFrame
    checks: list[Check]


@dataclass
class SuiteSpec:
    """A named suite: critical suites gate publication, the others only warn."""

    name: str
    critical: bool
    frames: list[Frame] = field(default_factory=list)
    static: list[dict[str, Any]] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)


def none_check(
    name: str, what: str, column: str, per_type: Mapping[str, Mapping[str, Any]], details: str
) -> Check:
    """Target ``name``'s check that ``column`` (a count, e.g. errors or mismatches) is zero for every
    type of ``per_type`` (query type → its row of a frame with a ``target`` column)."""
    by_type = {t: r[column] for t, r in per_type.items() if r[column]}
    return Check(
        f"{name}: {what}",
        "ExpectColumnValuesToBeBetween",
        {"column": column, "min_value": 0, "max_value": 0},
        where=("target", name),
        observed={column: sum(by_type.values()), "by_type": by_type},
        details=details,
    )


def entry(
    expectation: str, success: bool, observed: Any = None, details: str = "", skipped: bool = False
) -> dict[str, Any]:
    """One result as ``validation.json`` lists it (``skipped`` only when true)."""
    body = {"expectation": expectation, "success": bool(success), "observed": observed, "details": details}
    if skipped:
        body["skipped"] = True
    return body
