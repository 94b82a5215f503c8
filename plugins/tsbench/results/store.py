"""The results store: a local folder with one folder per run, and an index of all runs.

A run folder is either a single run (``result.json``, as ``tsbench.run.target_phases`` + ``collect`` leave
it) or a comparison (``comparison.json`` and one such run folder per scale, ``scale-<N>/``, see
``tsbench.run.comparison``). Layout::

    <root>/index.json                   summaries of every run, newest first (rebuilt by ``record``)
    <root>/<run_id>/result.json         a single run …
    <root>/<run_id>/comparison.json     … or a comparison, with scale-<N>/result.json per scale
    <root>/<run_id>/[scale-<N>/]queries.jsonl answers.jsonl run.json targets/<name>/…
    <root>/<run_id>/[scale-<N>/]validation.json validation/<suite>.json   (tsbench.validation)
    <root>/<run_id>/report/report.html report.pdf                      (tsbench.report)

The run folders are the source of truth; ``index.json`` is derived from them and rebuilt in full
(under a file lock, written atomically) whenever a run is recorded, so a crash never leaves a
half-written index and the index can always be rebuilt. ``tsbench.results.publish`` uses the same
summaries for the S3 index.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from filelock import FileLock

from tsbench.results.documents import (
    DOCUMENTS,
    Document,
    StoredResult,
    read_result,
    read_validation,
    results_of,
    run_document,
    scale_dirs,
)
from tsbench.results.files import read_json, write_json_atomic
from tsbench.results.folder import REPORT, REPORT_HTML, REPORT_PDF
from tsbench.results.index_line import IndexDataset, IndexLine, ReportPaths
from tsbench.results.model import Comparison, RunResult, Validation, ValidationSummary

INDEX_FORMAT = "tsbench-index/1"
HTML_NAMES = (REPORT_HTML, "index.html")
PDF_NAMES = (REPORT_PDF,)


def comparison_key(result: RunResult) -> tuple[Any, Any, tuple[str, ...]]:
    """What makes two runs comparable for trends: use case, scale and the set of targets."""
    spec = result.spec
    return spec.get("use_case"), spec.get("scale"), tuple(sorted(spec.get("targets") or []))


def spec_match(result: RunResult) -> dict[str, Any]:
    """The ``RunStore.history`` filter for runs comparable with ``result`` (``comparison_key``)."""
    use_case, scale, targets = comparison_key(result)
    return {"use_case": use_case, "scale": scale, "targets": list(targets)}


def _pick(paths: list[str], names: tuple[str, ...], suffix: str) -> str | None:
    by_name = {path.rsplit("/", 1)[-1]: path for path in paths}
    for name in names:
        if name in by_name:
            return by_name[name]
    matching = sorted(path for path in paths if path.endswith(suffix))
    return matching[0] if matching else None


def report_files(paths: list[str]) -> dict[str, Any]:
    """The report among a run folder's files (POSIX paths relative to the folder): ``html`` and
    ``pdf`` (or None) and ``files``, every file of the report — the ``report/`` folder, else the
    top-level HTML and PDF files. ``report.html``/``index.html`` and ``report.pdf`` are preferred."""
    visible = sorted(p for p in paths if not any(part.startswith(".") for part in p.split("/")))
    files = [p for p in visible if p.startswith(f"{REPORT}/")]
    if files:
        top = [p for p in files if p.count("/") == 1]
    else:
        files = [p for p in visible if "/" not in p and p.endswith((".html", ".pdf"))]
        top = files
    return {"html": _pick(top, HTML_NAMES, ".html"), "pdf": _pick(top, PDF_NAMES, ".pdf"), "files": files}


def run_files(run_dir: Path) -> list[str]:
    """Every file of a run folder as POSIX paths relative to it, skipping hidden ones (temporary
    files of atomic writes, locks)."""
    out = []
    for path in sorted(run_dir.rglob("*")):
        relative = path.relative_to(run_dir).as_posix()
        if path.is_file() and not any(part.startswith(".") for part in relative.split("/")):
            out.append(relative)
    return out


def find_report(run_dir: Path) -> dict[str, Any]:
    """``report_files`` of a local run folder."""
    return report_files(run_files(run_dir))


# -- summaries ---------------------------------------------------------------------------------
def verdict(validation: Validation | None) -> str:
    """``passed`` / ``failed`` / ``not validated``."""
    if validation is None:
        return "not validated"
    return "passed" if validation.success else "failed"


def _worst(statuses: list[str]) -> str:
    for status in ("failed", "missing", "incomplete"):
        if status in statuses:
            return status
    return statuses[0] if statuses else "missing"


def _status(result: RunResult, name: str) -> str:
    body = result.targets.get(name)
    return body.status if body is not None and body.has("status") else "missing"


def _load_rate(result: RunResult, name: str) -> Any:
    body = result.targets.get(name)
    return body.load.median_rows_per_s if body is not None and body.load is not None else None


def summarize(
    document: Document,
    validation: Validation | None = None,
    report: Mapping[str, Any] | None = None,
) -> IndexLine:
    """One line of the index (JSON, ``index.json``'s format): what a listing of runs shows without
    opening the run.

    ``document``: a result or a comparison. ``status`` per target is the worst over the scales;
    ``load_rows_per_s`` (rows/s per target, the headline) is the largest scale's, and
    ``load_rows_per_s_by_scale`` has every scale's.
    """
    results = results_of(document)
    first = results[0] if results else RunResult()
    names = list(dict.fromkeys(n for r in results for n in [*r.spec.get("targets", []), *r.targets]))
    scales = [r.spec.get("scale") for r in results]
    by_scale = {str(r.spec.get("scale")): {n: _load_rate(r, n) for n in names} for r in results}
    is_comparison = isinstance(document, Comparison)
    return IndexLine(
        run_id=document.written("run_id"),
        created_at=document.written("created_at") or first.written("created_at"),
        finished_at=document.written("finished_at"),
        kind="comparison" if is_comparison else "run",
        study=document.study if isinstance(document, Comparison) else None,
        use_case=first.spec.get("use_case"),
        scale=scales[-1] if scales else None,
        scales=scales,
        start=first.spec.get("start"),
        end=first.spec.get("end"),
        targets=names,
        status={n: _worst([_status(r, n) for r in results]) for n in names},
        verdict=verdict(validation),
        validation=ValidationSummary.of(validation) if validation is not None else None,
        load_rows_per_s=by_scale[str(scales[-1])] if scales else {},
        load_rows_per_s_by_scale=by_scale,
        dataset=IndexDataset(
            ids=[r.dataset.id for r in results], rows_total=sum(r.dataset.rows_total or 0 for r in results)
        ),
        report=ReportPaths(html=(report or {}).get("html"), pdf=(report or {}).get("pdf")),
    )


def summarize_dir(run_dir: Path) -> IndexLine:
    _, document = run_document(run_dir)
    return summarize(document, read_validation(run_dir), find_report(run_dir))


def newest_first(lines: list[IndexLine]) -> list[IndexLine]:
    return sorted(lines, key=lambda line: (line.created_at or "", line.run_id or ""), reverse=True)


def index_lines(body: Mapping[str, Any] | None) -> list[IndexLine] | None:
    """The lines of an ``index.json`` document, None when it is absent or of another format."""
    if body is None or body.get("format") != INDEX_FORMAT:
        return None
    return [IndexLine.from_json(line) for line in body.get("runs") or []]


def index_document(lines: list[IndexLine], **more: Any) -> dict[str, Any]:
    """``index.json``'s content: its format, ``more`` (the S3 index's latest folders) and the lines."""
    return {"format": INDEX_FORMAT, **more, "runs": [line.to_json() for line in lines]}


# -- the store ---------------------------------------------------------------------------------
class RunStore:
    """A local results store (see the module docstring)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    @property
    def index_path(self) -> Path:
        return self.root / "index.json"

    def run_dir(self, run_id: str) -> Path:
        return self.root / run_id

    def run_dirs(self) -> list[Path]:
        """Every collected run folder (with ``comparison.json`` or ``result.json``), by name."""
        if not self.root.is_dir():
            return []
        return sorted(
            p
            for p in self.root.iterdir()
            if p.is_dir() and not p.name.startswith(".") and any((p / d).is_file() for d in DOCUMENTS)
        )

    def results(self, run_id: str, study: str | None = None) -> list[StoredResult]:
        """A run's results, one per scale, each with ``validation`` (the summary of its scale's
        ``validation.json``, else of the run's), ``store_id`` (the run folder's name) and
        ``study`` (as given: the index line's)."""
        run_dir = self.run_dir(run_id)
        shared = read_validation(run_dir)
        out = []
        for folder in scale_dirs(run_dir):
            validation = read_validation(folder) or shared
            summary = ValidationSummary.of(validation) if validation is not None else None
            out.append(StoredResult(read_result(folder), run_id, summary, study))
        return out

    # -- index -------------------------------------------------------------------------------------
    def rebuild_index(self) -> list[IndexLine]:
        """Summaries of every run folder, newest first, written atomically to ``index.json``."""
        self.root.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.root / ".index.lock")):
            runs = newest_first([summarize_dir(d) for d in self.run_dirs()])
            write_json_atomic(self.index_path, index_document(runs))
        return runs

    def index(self) -> list[IndexLine]:
        """Run summaries, newest first (from ``index.json``; rebuilt when it is missing)."""
        lines = index_lines(read_json(self.index_path)) if self.index_path.is_file() else None
        return lines if lines is not None else self.rebuild_index()

    def record(self, run_dir: str | Path) -> IndexLine:
        """Add (or refresh) a run: copy it into the store unless it is already there, then rebuild
        the index. Returns the run's summary. Call it again after validation or reporting."""
        source = Path(run_dir)
        _, document = run_document(source)
        target = self.run_dir(source.name)
        if source.resolve() != target.resolve():
            self._copy_in(source, target)
        runs = self.rebuild_index()
        return next(line for line in runs if line.run_id == document.written("run_id"))

    def _copy_in(self, source: Path, target: Path) -> None:
        """Copy a run folder into the store; the folder appears complete or not at all."""
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / f".{target.name}.{uuid.uuid4().hex[:8]}.tmp"
        shutil.copytree(source, tmp, ignore=shutil.ignore_patterns(".*"))
        old = None
        if target.exists():
            old = self.root / f".{target.name}.{uuid.uuid4().hex[:8]}.old"
            target.rename(old)
        tmp.rename(target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    # -- history -----------------------------------------------------------------------------------
    def history(
        self,
        match: Mapping[str, Any] | None = None,
        n: int = 7,
        before: RunResult | Comparison | StoredResult | str | None = None,
        valid_only: bool = True,
    ) -> list[StoredResult]:
        """Earlier results, one per run and scale, oldest first: the last ``n`` that match.

        Each with ``validation`` (summary) and ``store_id`` (``StoredResult``). ``match``: spec
        fields to agree on, e.g. ``spec_match(result)`` = use case, scale and targets (targets
        compare as a set). ``before``: a result, comparison or stored result, or a run id: only runs
        created before it, never that run itself. ``valid_only``: leave out results whose
        validation failed (results not validated yet are kept).
        """
        match = dict(match or {})
        limit_run, limit_time = _limit(self.index(), before)
        picked = []
        for line in reversed(self.index()):  # oldest first
            run_id = line.run_id or ""
            if run_id == limit_run or (limit_time and (line.created_at or "") >= limit_time):
                continue
            if "use_case" in match and line.use_case != match["use_case"]:
                continue
            if "scale" in match and match["scale"] not in (line.scales or [line.scale]):
                continue
            if not any((self.run_dir(run_id) / d).is_file() for d in DOCUMENTS):
                continue
            for stored in self.results(run_id, line.study):
                if valid_only and stored.validation is not None and stored.validation.success is False:
                    continue
                if _spec_matches(stored.result.spec, match):
                    picked.append(stored)
        return picked[-n:] if n > 0 else []


def earlier_results(
    store: RunStore, comparison: Comparison, match: Callable[[RunResult], Mapping[str, Any]], n: int
) -> list[StoredResult]:
    """Earlier results for every point of ``comparison``, one list: per point,
    ``store.history(match(result), n, before=comparison)``."""
    history: list[StoredResult] = []
    for result in comparison.results.values():
        history += store.history(match(result), n=n, before=comparison)
    return history


def same_use_case_and_scale(result: RunResult) -> dict[str, Any]:
    """The ``RunStore.history`` filter for runs of ``result``'s use case and scale (any targets)."""
    return {"use_case": result.spec.get("use_case"), "scale": result.spec.get("scale")}


def _limit(
    index: list[IndexLine], before: RunResult | Comparison | StoredResult | str | None
) -> tuple[str | None, str | None]:
    """The run id and creation time that ``RunStore.history``'s ``before`` names."""
    if isinstance(before, str):
        found = [line for line in index if line.run_id == before]
        return before, found[0].created_at if found else None
    if isinstance(before, StoredResult):
        return before.run_id, before.result.written("created_at")
    if before is not None:
        return before.written("run_id"), before.written("created_at")
    return None, None


def _spec_matches(spec: Mapping[str, Any], match: Mapping[str, Any]) -> bool:
    for key, want in match.items():
        have = spec.get(key)
        if key == "targets":
            if sorted(have or []) != sorted(want or []):
                return False
        elif have != want:
            return False
    return True
