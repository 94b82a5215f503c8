"""Merge a run folder's phase files into one self-describing ``result.json``.

Every phase file is read as its record of ``tsbench.results.model`` (so a file that breaks the
contract fails here, not in the report) and the whole result as a ``RunResult``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tsbench.results.files import read_json, write_json_atomic
from tsbench.results.model import PHASE_RECORDS, RunResult, TargetResult
from tsbench.timeutil import format_instant

# A branch's phases in order, each with the file it writes (settle writes the footprint).
PHASE_ORDER = (
    ("acquire_machine", "acquire_machine"),
    ("provision", "provision"),
    ("prepare", "prepare"),
    ("load", "load"),
    ("settle", "footprint"),
    ("cache_reset", "cache_reset"),
    ("queries", "queries"),
)
PHASE_FILES = (*(file for _, file in PHASE_ORDER), "teardown", "error")


def _phase_body(path: Path, phase: str) -> dict[str, Any]:
    """A phase file without its ``phase``/``target`` stamp, checked against its record."""
    body = {k: v for k, v in read_json(path).items() if k not in ("phase", "target")}
    record = PHASE_RECORDS.get(phase)
    return record.from_json(body).to_json() if record is not None else body


def target_result(folder: Path) -> TargetResult:
    """One target's phase files as ``TargetResult`` JSON, with its status (ok, failed, incomplete)."""
    body: dict[str, Any] = {}
    for phase in PHASE_FILES:
        path = folder / f"{phase}.json"
        if path.is_file():
            body[phase] = _phase_body(path, phase)
    error = body.pop("error", None)
    body["status"] = "failed" if error else ("ok" if "queries" in body else "incomplete")
    if error:
        body["failed_phase"] = error["failed_phase"]
        body["error"] = error["error"]
    elif body["status"] == "incomplete":
        body["stopped_before"] = next(phase for phase, file in PHASE_ORDER if file not in body)
    return TargetResult.from_json(body)


def collect(run_dir: Path) -> RunResult:
    """Write ``result.json`` (atomically, checked as a ``RunResult``) and return it."""
    run = read_json(run_dir / "run.json")
    targets_dir = run_dir / "targets"
    names = run["spec"]["targets"]
    result = {
        **run,
        "format": "tsbench-result/1",
        "finished_at": format_instant(time.time_ns()),
        "targets": {name: target_result(targets_dir / name).to_json() for name in names},
    }
    record = RunResult.from_json(result)
    write_json_atomic(run_dir / "result.json", record.to_json())
    return record
