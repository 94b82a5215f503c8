"""Reading a run folder's documents into the typed model (``tsbench.results.model``).

This is the boundary where ``result.json``, ``comparison.json`` and ``validation.json`` (or JSON
content a caller already holds) become ``RunResult``, ``Comparison`` and ``Validation``; everything
after it — the store, validation, the report, the tables — reads typed records only. A run folder
holds a single run (``result.json``) or a comparison (``comparison.json`` and one run folder per
scale, ``scale-<N>/``, see ``tsbench.run.comparison``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tsbench.results.files import read_json
from tsbench.results.folder import DOCUMENTS, PointFolder, RunFolder
from tsbench.results.model import Comparison, RunResult, Validation, ValidationSummary

Document = RunResult | Comparison


@dataclass(frozen=True)
class StoredResult:
    """One scale's result as history: ``store_id`` is the run folder's name (a comparison's run id
    for its scales, whose own ``run_id`` may name only the scale folder); ``validation`` the
    summary of its ``validation.json`` (None: not validated, or not known); ``study`` the study the
    run is an instance of (None: ad hoc, the nightly, or not known)."""

    result: RunResult
    store_id: str | None = None
    validation: ValidationSummary | None = None
    study: str | None = None

    @property
    def run_id(self) -> str:
        """The store's name for the run: ``store_id``, else the result's ``run_id``."""
        return self.store_id or self.result.run_id


HistoryItem = StoredResult | RunResult | Comparison | Mapping[str, Any]


def is_comparison_json(body: Mapping[str, Any]) -> bool:
    """JSON of a comparison (``comparison.json``) rather than of one run's ``result.json``."""
    return isinstance(body.get("results"), Mapping) and not isinstance(body.get("targets"), Mapping)


def parse_document(body: Mapping[str, Any]) -> Document:
    """``comparison.json`` or ``result.json`` content as its record."""
    return Comparison.from_json(body) if is_comparison_json(body) else RunResult.from_json(body)


def read_result(folder: Path) -> RunResult:
    """``folder/result.json``; FileNotFoundError naming it when the run was not collected."""
    return PointFolder(folder).read_result()


def read_comparison(folder: Path) -> Comparison:
    return RunFolder(folder).read_comparison()


def read_validation(folder: Path) -> Validation | None:
    """``folder/validation.json``, None when the folder was not validated."""
    return RunFolder(folder).read_validation()


def run_document(run_dir: Path) -> tuple[str, Document]:
    """``(file name, record)`` of the folder's run document: ``comparison.json`` or ``result.json``."""
    for name in DOCUMENTS:
        if (run_dir / name).is_file():
            return name, parse_document(read_json(run_dir / name))
    raise FileNotFoundError(f"{run_dir} has neither comparison.json nor result.json: collect the run first")


def point_order(folder_name: str) -> list[int | str]:
    """Sort key of point folders (``scale-100``, ``scale-100_workers-16``): numbers as numbers, so
    by scale, then by each axis value."""
    parts = re.split(r"(\d+)", folder_name)
    return [int(part) if index % 2 else part for index, part in enumerate(parts)]


def scale_dirs(run_dir: Path) -> list[Path]:
    """The folders holding one point's ``result.json`` (a scale, or a sweep's point): the point
    folders of a comparison in ``point_order``, or the run folder itself."""
    single = PointFolder(run_dir).has_result()
    if RunFolder(run_dir).has_comparison() or not single:
        found = [p.path for p in RunFolder(run_dir).points() if p.has_result()]
        if found:
            return sorted(found, key=lambda p: point_order(p.name))
    return [run_dir] if single else []


def results_of(document: Document) -> list[RunResult]:
    """The per-point results of a run document: a comparison's (in ``point_order``: smallest scale
    first), or the result itself."""
    if isinstance(document, Comparison):
        return [document.results[key] for key in sorted(document.results, key=point_order)]
    return [document]


def _stored(body: Mapping[str, Any]) -> StoredResult:
    """A result dict, possibly with ``store_id`` and ``validation`` (a summary) attached."""
    validation = body.get("validation")
    return StoredResult(
        RunResult.from_json({k: v for k, v in body.items() if k not in ("store_id", "validation")}),
        body.get("store_id"),
        ValidationSummary.from_json(validation) if validation is not None else None,
    )


def stored_results(history: Iterable[HistoryItem]) -> list[StoredResult]:
    """Results, comparisons (records or JSON) and stored results → one stored result per scale (a
    comparison's results get its run id as ``store_id``)."""
    out: list[StoredResult] = []
    for item in history:
        if isinstance(item, Mapping):
            item = parse_document(item) if is_comparison_json(item) else _stored(item)
        if isinstance(item, Comparison):
            out += [StoredResult(result, item.run_id, study=item.study) for result in results_of(item)]
        elif isinstance(item, RunResult):
            out.append(StoredResult(item))
        else:
            out.append(item)
    return out
