"""The run report: HTML (Jinja2, inline SVG charts) and PDF (WeasyPrint) from one template.

``render_report(run_dir, history=(), out_dir=None) -> ReportFiles(html, pdf)`` is the entry point;
``run_dir`` is a run folder (``result.json``) or a comparison folder (``comparison.json`` and a
run folder per scale). ``read_inputs``, ``render_document``/``render_html`` and
``build_report_context``/``build_context`` expose the steps (for previews and tests).
"""

from tsbench.report.model import build_context, build_report_context
from tsbench.report.render import (
    ReportFiles,
    html_to_pdf,
    read_inputs,
    render_document,
    render_html,
    render_report,
)

__all__ = [
    "ReportFiles",
    "build_context",
    "build_report_context",
    "html_to_pdf",
    "read_inputs",
    "render_document",
    "render_html",
    "render_report",
]
