"""The index of a publication: one line per run, the latest folders and what each holds, and
``index.html`` rendered from ``report/templates/index.html.j2`` (Jinja2).

A latest folder is one path component starting with ``latest`` (``check_latest_folder``); links
are URLs relative to index.html.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, TypedDict
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from tsbench.results.folder import COMPARISON, DOCUMENTS, RESULT, VALIDATION
from tsbench.results.index_line import IndexLine, ReportPaths
from tsbench.results.store import summarize_dir

TEMPLATES = Path(__file__).parents[1] / "report" / "templates"
INDEX_TEMPLATE = "index.html.j2"
LATEST = "latest"  # the default latest folder (the nightly's)
MARKER = ".publication.json"  # in runs/<run_id>/: {"latest_folder": …}
_LATEST_FOLDER = re.compile(r"latest[A-Za-z0-9_.-]{0,100}")


class RunLinks(TypedDict):
    """Where a run's documents are, as URLs relative to index.html (None: the run has none)."""

    report_html: str | None
    report_pdf: str | None
    result: str | None
    validation: str | None


class LatestRun(TypedDict):
    """A latest folder of the publication and the run it holds; ``links`` point into the folder."""

    folder: str
    run_id: str
    created_at: str | None
    links: RunLinks


def check_latest_folder(name: object) -> str:
    """``name`` if it can name a latest folder: one path component that starts with ``latest``,
    then up to 100 letters, digits, ``-``, ``_`` or ``.``; else ValueError saying so."""
    if not isinstance(name, str) or not _LATEST_FOLDER.fullmatch(name):
        raise ValueError(
            f"latest_folder {name!r} is not a folder name for a latest report: it must be one path "
            "component starting with 'latest', then only letters, digits, '-', '_' or '.' "
            "(e.g. 'latest' or 'latest-tsbench_comparison')"
        )
    return name


def latest_folder_of(line: IndexLine | Mapping[str, Any]) -> str:
    """The latest folder a run was published under (an index line, or a run's publication marker;
    ``latest`` for older ones)."""
    folder = line.latest_folder if isinstance(line, IndexLine) else line.get("latest_folder")
    return str(folder or LATEST)


def document_name(paths: list[str]) -> str | None:
    """The run document (comparison.json or result.json) among a run folder's ``paths``."""
    return next((name for name in DOCUMENTS if name in paths), None)


def run_links(base: str, summary: IndexLine) -> RunLinks:
    """Where the documents of a run (``summary``: its index line) are when its folder is published
    at ``base`` (a URL relative to index.html, ending in ``/``)."""

    def at(path: str | None) -> str | None:
        return base + path if path else None

    return RunLinks(
        report_html=at(summary.report.html),
        report_pdf=at(summary.report.pdf),
        result=at(COMPARISON if summary.kind == "comparison" else RESULT),
        validation=at(VALIDATION if summary.validation is not None else None),
    )


def latest_entry(folder: str, summary: IndexLine) -> LatestRun:
    """``folder`` holding the run ``summary`` describes: its report files flattened into the
    folder (``latest_name``), its run document and validation.json beside them."""
    report = summary.report
    flat = ReportPaths(
        html=latest_name(report.html) if report.html else None,
        pdf=latest_name(report.pdf) if report.pdf else None,
    )
    return LatestRun(
        folder=folder,
        run_id=str(summary.run_id or "unknown"),
        created_at=summary.created_at,
        links=run_links(f"{folder}/", summary.with_(report=flat.to_json())),
    )


def local_latest(root: Path) -> list[LatestRun]:
    """The latest folders of a local publication root and the run each holds (``latest`` first)."""
    found = []
    for path in sorted(root.iterdir()) if root.is_dir() else []:
        if _LATEST_FOLDER.fullmatch(path.name) and any((path / name).is_file() for name in DOCUMENTS):
            found.append(latest_entry(path.name, summarize_dir(path)))
    return sorted(found, key=lambda entry: (entry["folder"] != LATEST, entry["folder"]))


def latest_name(path: str) -> str:
    """Where a report file of a run goes in a latest folder: ``report/x`` → ``x``."""
    return path.split("/", 1)[1] if path.startswith("report/") else path


def index_line(summary: IndexLine, run_id: str, latest_folder: str) -> IndexLine:
    """An index line: the run's summary, its links under ``runs/<run_id>/`` and its latest folder."""
    return summary.with_(links=run_links(f"runs/{run_id}/", summary), latest_folder=latest_folder)


# -- index.html ----------------------------------------------------------------------------------
def _when(instant: str | None) -> str:
    """``2026-11-22T10:58:14.834193821Z`` → ``2026-11-22 10:58:14``."""
    return (instant or "")[:19].replace("T", " ")


def _rate(value: Any) -> str:
    return f"{value:,.0f}" if isinstance(value, int | float) else "–"


def _documents(links: Mapping[str, Any], html_text: str, validation: bool) -> list[tuple[str, str]]:
    """(href, text) of a ``RunLinks``' documents: HTML, PDF, the run document [, validation.json]."""
    result = links.get("result")
    parts = [
        (links.get("report_html"), html_text),
        (links.get("report_pdf"), "PDF"),
        (result, (result or "").rsplit("/", 1)[-1]),
        (links.get("validation") if validation else None, VALIDATION),
    ]
    return [(quote(href, safe="/"), text) for href, text in parts if href]


def _run_view(run: IndexLine, folders: Sequence[str]) -> dict[str, Any]:
    """One run's table row as the template shows it; ``folders``: the latest folders that hold it.
    (A dict: the template's context.)"""
    critical = run.validation.critical_failed if run.validation else []
    return {
        "run_id": run.run_id,
        "folders": folders,
        "row_class": "failed" if run.verdict == "failed" else "",
        "created": _when(run.created_at),
        "use_case": str(run.use_case or ""),
        "scale": str(run.scale or ""),
        "statuses": [
            (name, "good" if status == "ok" else "bad", status if status == "ok" else status.upper())
            for name, status in run.status.items()
        ],
        "rates": [(name, _rate(rate)) for name, rate in run.load_rows_per_s.items()],
        "verdict": run.verdict,
        "critical_count": len(critical),
        "critical_shown": critical[:3],
        "warnings": run.validation.warnings if run.validation else 0,
        "documents": _documents(run.links or {}, "HTML", validation=True),
    }


def _latest_view(entry: LatestRun) -> dict[str, Any]:
    return {
        "folder": entry["folder"],
        "run_id": entry["run_id"],
        "created": _when(entry.get("created_at")),
        "documents": _documents(entry["links"], "report (HTML)", validation=False),
    }


@cache
def _environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        keep_trailing_newline=True,
    )


def render_index_html(
    runs: Sequence[IndexLine], latest: Sequence[LatestRun], explorer: str | None = None
) -> str:
    """A plain, readable listing of every run, newest first, under one line per latest folder
    (deterministic: no timestamps). ``runs``: index lines with ``links`` (``RunLinks``);
    ``explorer``: the results explorer's page, relative to index.html (None: none is published)."""
    holds: dict[str, list[str]] = {}
    for entry in latest:
        holds.setdefault(entry["run_id"], []).append(entry["folder"])
    return (
        _environment()
        .get_template(INDEX_TEMPLATE)
        .render(
            runs=[_run_view(run, holds.get(run.run_id or "", [])) for run in runs],
            latest=[_latest_view(entry) for entry in latest],
            explorer=quote(explorer) if explorer else None,
        )
    )
