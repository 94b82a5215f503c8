"""``validate_run``: every suite on a run folder, the verdict in ``validation.json``.

A run folder is a single run (``result.json``) or a comparison (``comparison.json`` with one run
folder per scale, ``scale-<N>/``, see ``tsbench.run.comparison``). A comparison is validated scale by
scale — each scale folder gets its own ``validation.json`` and ``validation/<suite>.json`` — and the
comparison folder gets the combined verdict (names prefixed with ``scale <N>: ``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tsbench.results.documents import (
    HistoryItem,
    StoredResult,
    read_result,
    run_document,
    scale_dirs,
    stored_results,
)
from tsbench.results.files import write_json_atomic
from tsbench.results.folder import RESULT, PointFolder, RunFolder
from tsbench.results.model import RunResult, Validation
from tsbench.timeutil import format_instant
from tsbench.validation.checks import SuiteSpec, entry
from tsbench.validation.dataset import dataset_suite
from tsbench.validation.gx import GxRunner
from tsbench.validation.history import MIN_HISTORY, TOLERANCE, WINDOW, history_suite
from tsbench.validation.live import live_suite
from tsbench.validation.load import load_suite
from tsbench.validation.queries import queries_suite
from tsbench.workload.dataset import Dataset
from tsbench.workload.recorded import run_dataset

log = logging.getLogger("tsbench.validation")
FORMAT = "tsbench-validation/1"
SUITES = ("dataset", "load", "queries", "live", "history")
CRITICAL = {"dataset": True, "load": True, "queries": True, "live": True, "history": False}


def _open_dataset(
    run_dir: Path, result: RunResult, dataset: Dataset | str | Path | None
) -> tuple[Dataset | None, str]:
    """The dataset to validate: the one given, else the run's own (``run_dataset``: generated
    again, byte-identical, on a worker that lacks it)."""
    if isinstance(dataset, Dataset):
        return dataset, ""
    try:
        if dataset:
            return Dataset.open(dataset), ""
        if PointFolder(run_dir).has_run():
            return run_dataset(PointFolder(run_dir).read_run()), ""
        if result.dataset.path:
            return Dataset.open(result.dataset.path), ""
    except Exception as error:  # missing folder, no manifest, unknown format, other bytes
        return None, f"cannot open the dataset at {dataset or result.dataset.path}: {error}"
    return None, "result.json names no dataset path"


def _outcome(run_id: str, suites: list[dict[str, Any]], started: float, version: str) -> dict[str, Any]:
    critical_failed = [
        f"{s['name']}: {r['expectation']}"
        for s in suites
        if s["critical"]
        for r in s["results"]
        if not r["success"]
    ]
    warnings = [
        f"{s['name']}: {r['expectation']} ({r['details']})"
        for s in suites
        if not s["critical"]
        for r in s["results"]
        if not r["success"]
    ]
    return {
        "format": FORMAT,
        "run_id": run_id,
        "validated_at": format_instant(time.time_ns()),
        "success": not critical_failed,
        "critical_failed": critical_failed,
        "warnings": warnings,
        "seconds": round(time.perf_counter() - started, 3),
        "great_expectations_version": version,
        "suites": suites,
    }


def _write_outcome(run_dir: Path, outcome: dict[str, Any]) -> None:
    """``validation.json``, checked against its record (``tsbench.results.model.Validation``)."""
    Validation.from_json(outcome)
    RunFolder(run_dir).write_validation(outcome)


def _validate_one(
    run_dir: Path,
    result: RunResult,
    history: list[StoredResult],
    runner: GxRunner,
    dataset: Dataset | str | Path | None,
    tolerance: float,
    window: int,
    min_history: int,
    memory_limit: str | None,
) -> dict[str, Any]:
    started = time.perf_counter()
    opened, problem = _open_dataset(run_dir, result, dataset)
    builders = {
        "dataset": lambda: dataset_suite(opened, problem, memory_limit),
        "load": lambda: load_suite(result),
        "queries": lambda: queries_suite(run_dir, result),
        "live": lambda: live_suite(run_dir, result),
        "history": lambda: history_suite(result, history, tolerance, window, min_history),
    }
    suites, documents = [], {}
    for name in SUITES:
        suite_started = time.perf_counter()
        try:
            body, document = runner.run(builders[name]())
        except Exception as error:  # a broken suite is a failed suite, never a silent pass
            log.exception("validation suite %s could not run on %s", name, run_dir)
            spec = SuiteSpec(name, CRITICAL[name])
            spec.static.append(entry(f"{name} suite ran", False, None, f"{type(error).__name__}: {error}"))
            body, document = runner.run(spec)
        body["seconds"] = round(time.perf_counter() - suite_started, 3)
        suites.append(body)
        documents[name] = document
    run_id = result.run_id if result.has("run_id") else run_dir.name
    outcome = _outcome(run_id, suites, started, runner.gx.__version__)
    for name, document in documents.items():
        write_json_atomic(RunFolder(run_dir).suite_document(name), document)
    _write_outcome(run_dir, outcome)
    return outcome


def _validate_comparison(
    run_dir: Path,
    run_id: str,
    earlier: list[StoredResult],
    runner: GxRunner,
    settings: tuple[float, int, int, str | None],
    started: float,
) -> dict[str, Any]:
    """Every scale folder validated on its own; the combined verdict in ``validation.json``."""
    suites, per_scale = [], {}
    for folder in scale_dirs(run_dir):
        result = read_result(folder)
        one = _validate_one(folder, result, earlier, runner, None, *settings)
        scale = result.spec["scale"]
        per_scale[str(scale)] = {
            "folder": folder.name,
            "success": one["success"],
            "critical_failed": len(one["critical_failed"]),
            "warnings": len(one["warnings"]),
        }
        suites += [{**s, "name": f"scale {scale}: {s['name']}", "scale": scale} for s in one["suites"]]
    outcome = _outcome(run_id, suites, started, runner.gx.__version__)
    outcome["scales"] = per_scale
    if not per_scale:
        outcome["success"] = False
        outcome["critical_failed"] = ["no scale folder with a result.json"]
    _write_outcome(run_dir, outcome)
    return outcome


def validate_run(
    run_dir: str | Path,
    history: Sequence[HistoryItem],
    *,
    dataset: Dataset | str | Path | None = None,
    tolerance: float = TOLERANCE,
    window: int = WINDOW,
    min_history: int = MIN_HISTORY,
    memory_limit: str | None = None,
) -> Validation:
    """Run the dataset, load, queries, live (critical) and history (warning) suites on a collected run.

    ``history``: earlier results or comparisons, as records or their JSON, or stored results (e.g.
    ``RunStore.history(...)``); only
    comparable, earlier, not-failed runs are used (``tsbench.validation.history``). ``dataset``: the
    dataset (or its folder) of a single run when it is no longer where ``result.json`` says.
    ``memory_limit``: DuckDB's cap for the dataset scans (default ``dataset.MEMORY_LIMIT``).
    Writes ``validation.json`` (atomically) and great_expectations' own result per suite in
    ``validation/<suite>.json``; returns the former as its record (``Validation``: success, the
    critical expectations that failed, the warnings, every suite's expectations). ``success`` is
    true when every critical expectation holds; warnings never fail a run.
    """
    run_dir = Path(run_dir)
    kind, document = run_document(run_dir)
    earlier = stored_results(history)
    started = time.perf_counter()
    runner = GxRunner()
    settings = (tolerance, window, min_history, memory_limit)
    if kind == RESULT:
        outcome = _validate_one(run_dir, read_result(run_dir), earlier, runner, dataset, *settings)
    else:
        outcome = _validate_comparison(run_dir, document.run_id, earlier, runner, settings, started)
    log.info(
        "validation of %s: %s (%d critical failed, %d warnings) in %.1f s",
        outcome["run_id"],
        "passed" if outcome["success"] else "FAILED",
        len(outcome["critical_failed"]),
        len(outcome["warnings"]),
        outcome["seconds"],
    )
    return Validation.from_json(outcome)
