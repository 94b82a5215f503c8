"""Render a run into ``report.html`` (self-contained: inline CSS and SVG) and ``report.pdf``.

The input is a run folder (``result.json`` + ``targets/<name>/rendered.jsonl``, as
``tsbench.run.target_phases`` and ``tsbench.run.collect`` leave it) or a comparison folder
(``comparison.json`` + one such run folder per scale, see ``tsbench.run.comparison``): one document then
covers every scale, with a table per scale × database up front. ``validation.json`` is read from the
run folder, else from the comparison folder around it.

One Jinja2 template (``templates/report.html.j2``) makes the HTML; WeasyPrint lays the very same HTML
out for print (the stylesheet's ``@page`` / ``@media print`` rules: A4, page numbers, repeated table
headers, no cut rows, page breaks before the big sections). Both files are written atomically
(temporary file in the same folder, then rename), so a reader never sees half a report.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from tsbench.report import fmt
from tsbench.report.model import ScaleInputs, build_report_context, read_examples
from tsbench.report.sections import client_share
from tsbench.results.change_records import ChangeReport
from tsbench.results.documents import HistoryItem, read_result, read_validation, scale_dirs
from tsbench.results.files import read_json, write_bytes_atomic
from tsbench.results.folder import REPORT_HTML, REPORT_PDF, PointFolder, RunFolder
from tsbench.results.model import RunResult, Validation
from tsbench.studies import Study

log = logging.getLogger("tsbench.report")
TEMPLATES = Path(__file__).parent / "templates"
TEMPLATE = "report.html.j2"
STYLESHEET = "report.css"


@dataclass(frozen=True)
class ReportFiles:
    """Where the report was written: ``report.html`` and ``report.pdf``."""

    html: Path
    pdf: Path


def write_atomic(path: Path, data: bytes, mode: int = 0o644) -> Path:
    """The report is meant to be read by others (a web server, a colleague): mode 0644."""
    return write_bytes_atomic(path, data, mode)


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html", "j2"], default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=False,
        lstrip_blocks=False,
        keep_trailing_newline=True,
    )
    env.filters.update(fmt.FILTERS)
    env.globals["client_share_limit"] = client_share.CLIENT_SHARE_LIMIT
    return env


Inputs = list[tuple[RunResult, Validation | None, dict[str, dict[str, str]]]]


def render_document(
    runs: Sequence[ScaleInputs],
    history: Sequence[HistoryItem] = (),
    study: Study | None = None,
    changes: ChangeReport | None = None,
) -> str:
    """The report as one HTML document for ``runs`` = (result, validation, examples) per scale
    (and ``study``'s claims checked on them, ``changes`` marked on the trends); the same text goes
    to the browser and to WeasyPrint."""
    context = build_report_context(runs, history, study=study, changes=changes)
    css = Markup((TEMPLATES / STYLESHEET).read_text())  # our own stylesheet, not input
    return _environment().get_template(TEMPLATE).render(css=css, **context.template_vars())


def render_html(
    result: RunResult | Mapping[str, Any],
    validation: Validation | Mapping[str, Any] | None = None,
    examples: Mapping[str, Mapping[str, str]] | None = None,
    history: Sequence[HistoryItem] = (),
) -> str:
    """The report of one result (one scale) as one HTML document."""
    return render_document([(result, validation, examples)], history)


def _comparison_validation(folder: Path) -> Validation | None:
    return read_validation(folder) if RunFolder(folder).has_comparison() else None


def study_of(folder: Path) -> Study | None:
    """The study a comparison folder is an instance of, as ``plan.json`` recorded it when the run
    was planned; None for an ad-hoc run or a single run folder."""
    plan = RunFolder(folder).plan
    body = read_json(plan).get("study") if plan.is_file() else None
    return Study.model_validate(body) if body else None


def read_inputs(folder: Path) -> Inputs:
    """(result, validation, examples) of a run folder, or of every scale of a comparison folder."""
    if PointFolder(folder).has_result():
        result = read_result(folder)
        validation = read_validation(folder) or _comparison_validation(folder.parent)
        return [(result, validation, read_examples(folder, result.targets))]
    scales = scale_dirs(folder)
    if not scales:
        raise FileNotFoundError(
            f"{folder / 'result.json'} does not exist and {folder} holds no collected point folder: "
            "collect the run first (tsbench.run.collect / tsbench.run.comparison.collect_comparison)"
        )
    shared = read_validation(folder)
    inputs: Inputs = []
    for path in scales:
        result = read_result(path)
        inputs.append((result, read_validation(path) or shared, read_examples(path, result.targets)))
    return inputs


class _DemoteFontSubsetNotice(logging.Filter):
    """WeasyPrint warns once per embedded font when the system lacks libharfbuzz-subset (>= 4.1)
    and it subsets fonts with fontTools instead: a fact of the machine, not of the report (the PDF
    is fine). That one message is logged at DEBUG; every other record passes unchanged."""

    PREFIX = "Using fontTools instead of HarfBuzz-Subset"

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.WARNING and str(record.msg).startswith(self.PREFIX):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


@contextmanager
def _quiet_weasyprint() -> Iterator[None]:
    """The font-subset notice at DEBUG, and WeasyPrint's per-page progress lines (INFO, about 60
    per report in the task log) only when someone set ``weasyprint.progress``'s level."""
    weasyprint_log, progress = logging.getLogger("weasyprint"), logging.getLogger("weasyprint.progress")
    notice, progress_level = _DemoteFontSubsetNotice(), progress.level
    weasyprint_log.addFilter(notice)
    if progress_level == logging.NOTSET:
        progress.setLevel(logging.WARNING)
    try:
        yield
    finally:
        weasyprint_log.removeFilter(notice)
        progress.setLevel(progress_level)


def html_to_pdf(html: str, base_url: str | None = None) -> bytes:
    """Lay the HTML out for print (A4) with WeasyPrint. The report's own HTML makes WeasyPrint log
    no warning (``tests/unit/test_report.py``); see ``_quiet_weasyprint`` for what is quieted."""
    with _quiet_weasyprint():
        from weasyprint import HTML  # heavy, and parses its own stylesheets: only for a PDF

        return HTML(string=html, base_url=base_url).write_pdf()


def render_report(
    run_dir: Path, history: Sequence[HistoryItem] = (), out_dir: Path | None = None
) -> ReportFiles:
    """Render ``run_dir`` — a run folder or a comparison folder (see the module docstring) — with
    ``history`` = earlier results or comparisons (records, their JSON, or stored results) for the
    trend charts, to
    ``report.html`` and ``report.pdf`` in ``out_dir`` (default: the run folder's report folder)."""
    run_dir = Path(run_dir)
    out = Path(out_dir) if out_dir is not None else RunFolder(run_dir).report
    started = time.perf_counter()
    inputs = read_inputs(run_dir)
    html = render_document(inputs, list(history), study_of(run_dir), RunFolder(run_dir).read_changes())
    html_done = time.perf_counter()
    pdf = html_to_pdf(html, base_url=str(run_dir))
    files = ReportFiles(
        html=write_atomic(out / REPORT_HTML, html.encode()),
        pdf=write_atomic(out / REPORT_PDF, pdf),
    )
    log.info(
        "report for %s: html %.2f s, pdf %.2f s → %s",
        inputs[0][0].run_id,
        html_done - started,
        time.perf_counter() - html_done,
        out,
    )
    return files
