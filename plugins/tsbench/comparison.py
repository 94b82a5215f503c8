"""A comparison: one run id, one or more scales, each scale a run folder (see ``runner.py``).

Layout::

    <results root>/<run id>/
        plan.json             the validated parameters (one RunSpec per scale)
        scale-<N>/            a run folder per scale (run.json, targets/…, result.json)
        comparison.json       every scale's result, for validation, report and history
        validation.json       great_expectations outcome (when validated)
        report/report.html report/report.pdf
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tsbench.results.collect import collect
from tsbench.results.files import read_json, write_json_atomic
from tsbench.results.model import Comparison
from tsbench.spec import RunSpec, SpecError
from tsbench.timeutil import format_instant, parse_duration, parse_instant

SCALE_PREFIX = "scale-"


def scale_dir(folder: Path, scale: int) -> Path:
    return folder / f"{SCALE_PREFIX}{scale}"


def parse_comparison(params: dict[str, Any]) -> list[RunSpec]:
    """One RunSpec per scale from pipeline parameters.

    ``params`` holds RunSpec fields, with ``scales`` (a list) instead of ``scale`` and optionally
    ``duration`` (e.g. ``"1d"``) instead of ``end``. Every problem of every scale is reported at once.
    """
    values = {k: v for k, v in params.items() if v is not None and v != ""}
    problems: list[tuple[str, str]] = []
    scales = values.pop("scales", None)
    if not isinstance(scales, list) or not scales:
        problems.append(("scales", "give at least one scale (number of hosts), e.g. [100]"))
        scales = []
    elif len(set(map(str, scales))) != len(scales):
        problems.append(("scales", f"a scale is listed twice: {scales}"))
    duration = values.pop("duration", None)
    if duration is not None:
        if "end" in values:
            problems.append(("duration", "give either duration or end, not both"))
        else:
            try:
                values["end"] = parse_instant(values.get("start", "2016-01-01T00:00:00Z")) + parse_duration(
                    duration
                )
            except ValueError as error:
                problems.append(("duration", str(error)))
    specs = []
    for scale in scales:
        try:
            specs.append(RunSpec.parse(**values, scale=scale))
        except SpecError as error:
            for field, message in error.problems:
                entry = (f"scales ({scale})" if field == "scale" else field, message)
                if entry not in problems:
                    problems.append(entry)
    if problems:
        raise SpecError(problems)
    return specs


def write_plan(folder: Path, specs: list[RunSpec]) -> dict[str, Any]:
    body = {
        "format": "tsbench-plan/1",
        "run_id": folder.name,
        "created_at": format_instant(time.time_ns()),
        "scales": [spec.scale for spec in specs],
        "targets": specs[0].targets,
        "specs": {str(spec.scale): spec.model_dump() for spec in specs},
    }
    write_json_atomic(folder / "plan.json", body)
    return body


def read_plan(folder: Path) -> tuple[dict[str, Any], list[RunSpec]]:
    plan = read_json(folder / "plan.json")
    return plan, [RunSpec.parse(**plan["specs"][str(scale)]) for scale in plan["scales"]]


def collect_comparison(folder: Path) -> Comparison:
    """Collect every scale folder and write ``comparison.json`` (atomically); returns it."""
    scales = sorted(
        int(path.name.removeprefix(SCALE_PREFIX)) for path in folder.glob(f"{SCALE_PREFIX}*") if path.is_dir()
    )
    results = {str(scale): collect(scale_dir(folder, scale)) for scale in scales}
    failed = sorted(
        {name for result in results.values() for name, body in result.targets.items() if body.status != "ok"}
    )
    first = next(iter(results.values()), None)
    spec = first.spec if first is not None else {}
    body = {
        "format": "tsbench-comparison/1",
        "run_id": folder.name,
        "created_at": first.written("created_at") if first is not None else None,
        "finished_at": format_instant(time.time_ns()),
        "use_case": spec.get("use_case"),
        "targets": spec.get("targets", []),
        "scales": scales,
        "failed_targets": failed,
        "results": {scale: result.to_json() for scale, result in results.items()},
    }
    comparison = Comparison.from_json(body)  # the contract of tsbench.results.model
    write_json_atomic(folder / "comparison.json", comparison.to_json())
    return comparison
