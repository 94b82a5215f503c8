"""The explorer's files: ``explorer.html`` (the same bytes on every publish: the page, its style and
its script, from ``report/templates/explorer.*``) and ``explorer-data.js`` (the data, as
``window.TSBENCH_EXPLORER = {…};``).

Why a script file and not a JSON file fetched by the page: a page opened from disk (``file://``)
may not ``fetch()`` another local file, but it may load a ``<script src>`` beside it; and why not
the data inside the page: the page then never changes between publishes (an unchanged object is not
uploaded again) and the data stays one plain JSON document after a fixed prefix, for other tools.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from tsbench.explorer.build import DocumentReader, explorer_data
from tsbench.explorer.data import FORMAT, ExplorerData
from tsbench.results.documents import Document, run_document
from tsbench.results.files import write_bytes_atomic
from tsbench.results.index_line import IndexLine
from tsbench.results.publish import SitePages

log = logging.getLogger("tsbench.explorer")
TEMPLATES = Path(__file__).parents[1] / "report" / "templates"
PAGE = "explorer.html"
DATA = "explorer-data.js"
VARIABLE = "TSBENCH_EXPLORER"


@cache
def render_page() -> str:
    """explorer.html: the static page (no run's data in it)."""
    environment = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined)
    return environment.get_template("explorer.html.j2").render(
        data_file=DATA,
        variable=VARIABLE,
        data_format=FORMAT,
        style=Markup((TEMPLATES / "explorer.css").read_text()),
        script=Markup((TEMPLATES / "explorer.js").read_text()),
    )


def data_script(data: ExplorerData) -> str:
    """explorer-data.js: ``window.TSBENCH_EXPLORER = <the data as JSON, every field>;``."""
    body = json.dumps(data.model_dump(mode="json"), separators=(",", ":"), ensure_ascii=False)
    return f"window.{VARIABLE} = {body};\n"


def explorer_files(lines: Sequence[IndexLine], read: DocumentReader) -> dict[str, bytes]:
    """The explorer's files by name (the data first), for the runs ``lines`` lists (links relative
    to the folder the files go in)."""
    data = explorer_data(lines, read)
    log.info("results explorer: %d run(s), %d series", len(data.runs), len(data.series))
    return {DATA: data_script(data).encode(), PAGE: render_page().encode()}


def write_explorer(root: Path, lines: Sequence[IndexLine], runs_root: Path) -> Path:
    """Write the explorer's files into ``root`` (each atomically, the data first) for the runs of
    the local run store at ``runs_root``; returns explorer.html's path."""

    def read(line: IndexLine) -> Document | None:
        try:
            return run_document(runs_root / (line.run_id or ""))[1]
        except FileNotFoundError:
            return None

    for name, body in explorer_files(lines, read).items():
        write_bytes_atomic(root / name, body)
    return root / PAGE


def explorer_pages() -> SitePages:
    """The explorer as pages of an S3 publication (``publish_run``'s ``pages``)."""
    return SitePages(entry=PAGE, render=explorer_files)
