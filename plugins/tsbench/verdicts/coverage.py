"""Which of a study's claims a size can judge, read from its plan before anything runs: a claim is
judgeable when one of its checks has its targets in the size, points at its conditions (a pair of
points for a one-database check), figures the size measures (queries, unless it is load-only) and
conditions the size meets. Conditions on the machine (cores, data larger than memory) are judged
here for a local size (this machine) and left to the run for a cloud one."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import psutil

from tsbench.verdicts.published import Check, Claim, Condition, Published

MACHINE_KINDS = ("min_cores", "larger_than_memory")
STORED_BYTES_PER_ROW = 100  # generous: the local targets store 5-40 bytes a row (larger than memory?)


class Coverage(StrEnum):
    JUDGED = "judged"
    AT_RUN_TIME = "at run time"  # depends on the cloud machine's cores or memory
    NOT = "not"


@dataclass(frozen=True)
class PlannedPoint:
    """A point as a plan has it: its RunSpec fields and its dataset's rows."""

    spec: Mapping[str, Any]
    rows: int


def _meets(condition: Condition, point: PlannedPoint, params: Mapping[str, Any]) -> Coverage:
    """Whether a planned point of a size meets ``condition`` (machine conditions: this machine for a
    local size, the run's for a cloud one)."""
    kind = condition.kind
    if kind in MACHINE_KINDS and params.get("runtime", "local") != "local":
        return Coverage.AT_RUN_TIME
    if kind == "compressed":
        met = bool(params.get("compress_after_load")) and condition.compressed in params["targets"]
    elif kind == "rollup":
        met = bool(params.get("rollup_after_load")) and condition.rollup in params["targets"]
    elif kind == "min_cores":
        met = (os.cpu_count() or 0) >= (condition.min_cores or 0)
    elif kind == "larger_than_memory":
        met = point.rows * STORED_BYTES_PER_ROW > psutil.virtual_memory().total
    elif kind == "min_scale":
        met = point.spec["scale"] >= (condition.min_scale or 0)
    elif kind == "max_scale":
        met = point.spec["scale"] <= (condition.max_scale or 0)
    else:
        met = point.rows >= (condition.min_rows or 0)
    return Coverage.JUDGED if met else Coverage.NOT


def _point(
    point: PlannedPoint, requires: Sequence[Condition], params: Mapping[str, Any], at: Mapping[str, Any]
) -> Coverage:
    """A point at ``at`` that meets ``requires``: judged, at run time, or not."""
    if not all(point.spec.get(key) == value for key, value in at.items()):
        return Coverage.NOT
    found = [_meets(condition, point, params) for condition in requires]
    if Coverage.NOT in found:
        return Coverage.NOT
    return Coverage.AT_RUN_TIME if Coverage.AT_RUN_TIME in found else Coverage.JUDGED


def _best(found: Sequence[Coverage]) -> Coverage:
    for kind in (Coverage.JUDGED, Coverage.AT_RUN_TIME):
        if kind in found:
            return kind
    return Coverage.NOT


def check_coverage(
    claim: Claim, check: Check, points: Sequence[PlannedPoint], params: Mapping[str, Any]
) -> Coverage:
    """Whether a size (its points and parameters) can judge ``check``."""
    if check.not_comparable or any(name not in params["targets"] for name in check.targets):
        return Coverage.NOT
    if check.metric is not None and check.metric.needs_query_type and params.get("queries_per_type") == 0:
        return Coverage.NOT
    requires = [*claim.requires, *check.requires]
    if check.target is not None:
        sides = [
            _best([_point(p, requires, params, {**check.at, **side}) for p in points])
            for side in (check.better_at, check.worse_at)
        ]
        if Coverage.NOT in sides:
            return Coverage.NOT
        return Coverage.AT_RUN_TIME if Coverage.AT_RUN_TIME in sides else Coverage.JUDGED
    return _best([_point(p, requires, params, check.at) for p in points])


def claims_coverage(
    published: Published, points: Sequence[PlannedPoint], params: Mapping[str, Any]
) -> list[Coverage]:
    """Per claim: judged when one of its checks can be, else at run time, else not."""
    return [_best([check_coverage(c, k, points, params) for k in c.checks]) for c in published.claims]


def coverage_line(found: Sequence[Coverage]) -> str:
    """``claims this size can judge: 5 of 14 (3 more depending on the cloud machine)``."""
    judged, later = found.count(Coverage.JUDGED), found.count(Coverage.AT_RUN_TIME)
    more = f" ({later} more depending on the cloud machine's cores or memory)" if later else ""
    return f"claims this size can judge: {judged} of {len(found)}{more}"
