"""Merge a point folder's records into one self-describing ``result.json``, with the price per hour
of one of its hosts (``price``: the runtime's price table, or why there is none).

Every record is read as its type (``tsbench.run.phases`` names which file holds which), so a file
that breaks the contract fails here, not in the report, and the whole result as a ``RunResult``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tsbench.results.folder import PointFolder, TargetFolder
from tsbench.results.model import MachinePrice, PhaseError, RunResult, TargetResult
from tsbench.run.phases import ACQUIRE_RECORD, COMPLETING, PHASES, record_files
from tsbench.runtimes.options import AwsOptions, DockerOptions
from tsbench.runtimes.select import machine_price
from tsbench.timeutil import format_instant


@dataclass(frozen=True)
class RecordedRuntime:
    """A recorded spec's runtime and its options (``runtimes.select.RuntimeChoice``), the options
    validated on their own: a run's readiness checks (Terraform on PATH…) are not repeated."""

    runtime: str
    aws: AwsOptions
    docker: DockerOptions

    @classmethod
    def of(cls, spec: Mapping[str, Any]) -> RecordedRuntime:
        return cls(
            spec.get("runtime") or "local",
            AwsOptions.model_validate(spec.get("aws") or {}),
            DockerOptions.model_validate(spec.get("docker") or {}),
        )


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


def recorded_price(spec: Mapping[str, Any]) -> MachinePrice:
    """The price per hour of one host of a recorded spec's runtime (``runtimes.select.machine_price``),
    looked up now, in the price table as it stands."""
    return machine_price(RecordedRuntime.of(spec))


def collect(run_dir: Path) -> RunResult:
    """Write ``result.json`` (atomically, checked as a ``RunResult``) and return it."""
    point = PointFolder(run_dir)
    run = point.read_run()
    result = {
        **run.to_json(),
        "format": "tsbench-result/1",
        "finished_at": format_instant(time.time_ns()),
        "targets": {name: target_result(point.target(name)).to_json() for name in run.spec["targets"]},
        "price": recorded_price(run.spec).to_json(),
    }
    record = RunResult.from_json(result)
    point.write_result(record)
    return record
