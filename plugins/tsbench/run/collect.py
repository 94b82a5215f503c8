"""Merge a point folder's records into one self-describing ``result.json``.

Every record is read as its type (``tsbench.run.phases`` names which file holds which), so a file
that breaks the contract fails here, not in the report, and the whole result as a ``RunResult``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tsbench.results.folder import PointFolder, TargetFolder
from tsbench.results.model import PhaseError, RunResult, TargetResult
from tsbench.run.phases import ACQUIRE_RECORD, COMPLETING, PHASES, record_files
from tsbench.timeutil import format_instant


def target_result(folder: TargetFolder) -> TargetResult:
    """One target's records as a ``TargetResult``, with its status: ``ok`` (its queries ran),
    ``failed`` (the failure's phase and error) or ``incomplete`` (the first phase with no record)."""
    body: dict[str, Any] = {}
    failure: PhaseError | None = None
    for record_type in record_files():
        record = folder.read(record_type)
        if isinstance(record, PhaseError):
            failure = record
        elif record is not None:
            body[record_type.FILE] = record.to_json()  # type: ignore[attr-defined]
    complete = COMPLETING.file in body
    body["status"] = "failed" if failure else ("ok" if complete else "incomplete")
    if failure is not None:
        body.update(failed_phase=failure.failed_phase, error=failure.error)
    elif body["status"] == "incomplete":
        lease = ACQUIRE_RECORD.FILE  # type: ignore[attr-defined]  # the step's name, too
        steps = [(lease, lease), *((each.name, each.file) for each in PHASES)]
        body["stopped_before"] = next(name for name, file in steps if file not in body)
    return TargetResult.from_json(body)


def collect(run_dir: Path) -> RunResult:
    """Write ``result.json`` (atomically, checked as a ``RunResult``) and return it."""
    point = PointFolder(run_dir)
    run = point.read_run()
    result = {
        **run.to_json(),
        "format": "tsbench-result/1",
        "finished_at": format_instant(time.time_ns()),
        "targets": {name: target_result(point.target(name)).to_json() for name in run.spec["targets"]},
    }
    record = RunResult.from_json(result)
    point.write_result(record)
    return record
