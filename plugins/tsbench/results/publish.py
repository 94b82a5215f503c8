"""Publication of runs to S3 (or any S3-compatible server, e.g. MinIO) with boto3.

Layout under ``s3://<bucket>/<prefix>/``::

    runs/<run_id>/…     the whole run folder: a single run (result.json, …) or a comparison
                        (comparison.json, scale-<N>/…), with validation.json and report/
    latest/…            the newest run published under ``latest_folder="latest"`` whose validation
                        passed: its report files (``report/…`` flattened into ``latest/``), its
                        result.json or comparison.json, and validation.json
    latest-<name>/…     the same for the runs published under that latest folder (e.g. the on-demand
                        DAG's ``latest-tsbench_comparison``), so one channel never replaces another's
    index.json          every published run's summary (with the latest folder it was published
                        under), newest first, and which run each latest folder holds
    index.html          the same as a readable page, with links to every report and every latest folder
    explorer.html …     more pages of the site (``pages``: the results explorer, ``tsbench.explorer``),
                        rendered from the index every time index.html is

Rules:

- every run is published under ``runs/``, including one whose validation failed: it is listed as
  FAILED and never replaces a latest folder; a latest folder always mirrors the newest (by creation
  time) run published under it whose validation passed, so re-publishing an older run does not
  move it back, and re-publishing the latest run after it failed re-validation hands the folder to
  the one before. Which latest folder a run was published under is kept in its index line and in
  ``runs/<run_id>/.publication.json`` (so a rebuilt index knows it too);
- idempotent: objects are named after the run and the folder layout only (no publish timestamps),
  unchanged files (same MD5 as the object's ETag) are not uploaded again, and objects under
  ``runs/<run_id>/`` or a latest folder that no longer belong there are deleted — publishing the same
  run twice leaves the same objects with the same bytes;
- content types from the file suffix (``text/html``, ``application/pdf``, ``application/json``…);
  the mutable keys (index, latest folders) carry ``Cache-Control: no-cache``;
- credentials and endpoint come from the arguments or boto3's usual sources (``AWS_ACCESS_KEY_ID``,
  ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_ENDPOINT_URL``, profiles, roles); they
  are never logged or written anywhere. Errors are ``PublishError`` with a plain explanation.

``index.json`` is updated by compare-and-swap (S3 conditional writes on its ETag): publishers of
different runs into the same prefix at the same moment (workers of a team's deployment) each
re-read, re-mirror and retry until their write lands, so no index line is lost; ``index.html`` is
rendered again until the index it was rendered from is still the current one.
``publish_run(..., rebuild_index=True)`` recreates the index from the ``runs/`` folders.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tsbench.results.bucket import Bucket, PublishError, content_type, make_client, md5_of
from tsbench.results.documents import Document, parse_document, read_validation, run_document
from tsbench.results.folder import PUBLISHED_DOCUMENTS, VALIDATION
from tsbench.results.index import (
    LATEST,
    MARKER,
    check_latest_folder,
    document_name,
    index_line,
    latest_entry,
    latest_folder_of,
    latest_name,
    local_latest,
    render_index_html,
    run_links,
)
from tsbench.results.index_line import IndexLine
from tsbench.results.model import Validation
from tsbench.results.store import (
    index_document,
    index_lines,
    newest_first,
    report_files,
    run_files,
    summarize,
)

__all__ = [
    "LATEST",
    "PublishError",
    "SitePages",
    "check_latest_folder",
    "latest_folder_of",
    "local_latest",
    "publish_run",
    "render_index_html",
    "run_links",
]

log = logging.getLogger("tsbench.publish")
INDEX_ATTEMPTS = 20  # compare-and-swap rounds on index.json before giving up


def _rebuild(bucket: Bucket) -> list[IndexLine]:
    """Index lines of every run under ``runs/`` (from their comparison.json or result.json,
    validation.json and ``.publication.json``)."""
    keys = bucket.list("runs/")
    by_run: dict[str, list[str]] = {}
    for key in keys:
        parts = bucket.relative(key).split("/", 2)
        if len(parts) == 3:
            by_run.setdefault(parts[1], []).append(parts[2])
    runs = []
    for run_id, paths in by_run.items():
        document = document_name(paths)
        if document is None:
            continue
        body = parse_document(bucket.get_json(f"runs/{run_id}/{document}"))
        validation = _bucket_validation(bucket, run_id) if VALIDATION in paths else None
        marker = bucket.get_json(f"runs/{run_id}/{MARKER}") if MARKER in paths else None
        summary = summarize(body, validation, report_files(paths))
        runs.append(index_line(summary, run_id, latest_folder_of(marker or {})))
    return newest_first(runs)


def _bucket_validation(bucket: Bucket, run_id: str) -> Validation | None:
    body = bucket.get_json(f"runs/{run_id}/validation.json")
    return Validation.from_json(body) if body is not None else None


# -- publishing ----------------------------------------------------------------------------------
DocumentReader = Callable[[IndexLine], Document | None]


@dataclass(frozen=True)
class SitePages:
    """More pages of the published site, beside index.html, which links to ``entry``: ``render``
    makes their files (name → bytes, written in that order) from the index's lines (links relative
    to the site's root) and a reader of each run's document (None: not readable)."""

    entry: str
    render: Callable[[Sequence[IndexLine], DocumentReader], Mapping[str, bytes]]


@dataclass(frozen=True)
class S3Settings:
    """Where a run is published on S3 (bucket, key prefix) and how to reach it: an endpoint (an
    S3-compatible server), a region, credentials (None: the standard AWS environment), and whether a
    missing bucket may be created. The secret never appears in its repr."""

    bucket: str
    prefix: str = ""
    endpoint_url: str | None = None
    region: str | None = None
    aws_access_key_id: str | None = field(default=None, repr=False)
    aws_secret_access_key: str | None = field(default=None, repr=False)
    create_bucket: bool = False

    def client_options(self) -> dict[str, Any]:
        """``publish_run``'s keyword arguments beyond the bucket and prefix."""
        return {k: v for k, v in asdict(self).items() if k not in ("bucket", "prefix")}


def publish_run(
    run_dir: str | Path,
    bucket: str,
    prefix: str = "",
    *,
    client: Any = None,
    endpoint_url: str | None = None,
    region: str | None = None,
    aws_access_key_id: str | None = None,
    aws_secret_access_key: str | None = None,
    aws_session_token: str | None = None,
    create_bucket: bool = False,
    rebuild_index: bool = False,
    force: bool = False,
    latest_folder: str = LATEST,
    pages: SitePages | None = None,
) -> dict[str, Any]:
    """Publish one run folder (see the module docstring); returns what was done.

    ``client``: an existing boto3 S3 client (else one is made from the other arguments and the
    environment). ``force``: upload every file even when the object already has the same bytes.
    ``latest_folder``: the latest folder this run may replace (``check_latest_folder``; ValueError
    before anything is written when it is not a valid name). ``pages``: more pages of the site,
    rendered again with index.html (``SitePages``).
    """
    latest_folder = check_latest_folder(latest_folder)
    run_dir = Path(run_dir)
    try:
        _, document = run_document(run_dir)
    except FileNotFoundError as error:
        raise PublishError(str(error)) from None
    store = Bucket(
        client
        or make_client(endpoint_url, region, aws_access_key_id, aws_secret_access_key, aws_session_token),
        bucket,
        prefix,
    )
    store.ensure(create_bucket)
    outcome = _publish(store, run_dir, document, latest_folder, rebuild_index, force, pages)
    log.info(
        "published %(run_id)s to s3://%(bucket)s/%(run_key_prefix)s (%(verdict)s): %(uploaded)d uploaded, "
        "%(unchanged)d unchanged, %(deleted)d stale removed; %(latest_folder)s/ holds %(latest)s",
        outcome,
    )
    return outcome


def _publish(
    store: Bucket,
    run_dir: Path,
    document: Document,
    latest_folder: str,
    rebuild_index: bool,
    force: bool,
    pages: SitePages | None,
) -> dict[str, Any]:
    """The run's files, its index line, its marker, the latest folders it affects, the index and
    the site's pages; returns what was done (``publish_run``'s outcome)."""
    run_id = document.run_id or run_dir.name
    paths = run_files(run_dir)
    uploaded, unchanged, stale = _upload_run(store, run_dir, run_id, paths, force)
    summary = summarize(document, read_validation(run_dir), report_files(paths))
    line = index_line(summary, run_id, latest_folder)
    _put_marker(store, run_id, latest_folder)
    for _ in range(INDEX_ATTEMPTS):
        index, version = store.get_json_tagged("index.json")
        runs, moved_from = _index_runs(store, line, None if rebuild_index else index)
        folders = dict.fromkeys([latest_folder, *moved_from])
        mirrored = {f: _mirror_latest(store, runs, f, run_id, paths) for f in folders}
        if _write_index(store, runs, version):
            break
        log.info("index.json changed while publishing %s: reading it again", run_id)
    else:
        raise PublishError(f"index.json kept changing under {INDEX_ATTEMPTS} attempts to publish {run_id}")
    written = _write_index_page(store, pages)
    return {
        "run_id": run_id,
        "bucket": store.bucket,
        "prefix": store.prefix,
        "run_key_prefix": store.key(f"runs/{run_id}/"),
        "verdict": line.verdict,
        "uploaded": uploaded,
        "unchanged": unchanged,
        "deleted": stale,
        "latest_folder": latest_folder,
        "latest": mirrored[latest_folder][0],
        "latest_updated": any(changed for _, changed in mirrored.values()),
        "index_json": store.key("index.json"),
        "index_html": store.key("index.html"),
        "pages": [store.key(name) for name in written],
    }


def _upload_run(
    store: Bucket, run_dir: Path, run_id: str, paths: list[str], force: bool
) -> tuple[int, int, int]:
    """The run folder → ``runs/<run_id>/`` (unchanged files skipped unless ``force``; objects no
    longer in the folder deleted, the marker excepted). Returns (uploaded, unchanged, deleted)."""
    base = f"runs/{run_id}/"
    existing = store.list(base)
    uploaded = unchanged = 0
    wanted = {store.key(base + MARKER)}
    for path in paths:
        key = store.key(base + path)
        wanted.add(key)
        if not force and existing.get(key) == md5_of(run_dir / path):
            unchanged += 1
            continue
        store.upload(run_dir / path, key)
        uploaded += 1
    stale = sorted(set(existing) - wanted)
    store.delete(stale)
    return uploaded, unchanged, len(stale)


def _put_marker(store: Bucket, run_id: str, latest_folder: str) -> None:
    """``runs/<run_id>/.publication.json``: the latest folder the run was published under."""
    key = store.key(f"runs/{run_id}/{MARKER}")
    body = (json.dumps({"latest_folder": latest_folder}) + "\n").encode()
    store.put(key, body, "application/json", store.list(f"runs/{run_id}/{MARKER}"))


def _index_runs(
    store: Bucket, line: IndexLine, index: Mapping[str, Any] | None
) -> tuple[list[IndexLine], list[str]]:
    """The lines of ``index`` (rebuilt from ``runs/`` when None or of another format) with ``line``
    inserted or replacing the run's old one, newest first, and the latest folder the run was
    listed under before, when that was another one."""
    runs = index_lines(index)
    if runs is None:
        runs = _rebuild(store)
    old = next((r for r in runs if r.run_id == line.run_id), None)
    moved = [latest_folder_of(old)] if old and latest_folder_of(old) != line.latest_folder else []
    return newest_first([r for r in runs if r.run_id != line.run_id] + [line]), moved


def _newest_passing(runs: Sequence[IndexLine], folder: str) -> IndexLine | None:
    """The newest run published under ``folder`` whose validation passed (``runs``: newest first)."""
    return next((r for r in runs if r.verdict == "passed" and latest_folder_of(r) == folder), None)


def _mirror_latest(
    store: Bucket, runs: list[IndexLine], folder: str, run_id: str, paths: list[str]
) -> tuple[str | None, bool]:
    """Make ``folder/`` mirror its newest passing run (emptied when it has none); ``run_id`` and
    ``paths``: the run being published. Returns (the run it holds, whether anything changed)."""
    line = _newest_passing(runs, folder)
    if line is None:
        stale = sorted(store.list(f"{folder}/"))
        store.delete(stale)
        return None, bool(stale)
    held = line.run_id or ""
    source = paths if held == run_id else _paths_of(store, held)
    return held, _update_latest(store, folder, held, source)


def _write_index(store: Bucket, runs: list[IndexLine], version: str | None) -> bool:
    """index.json, only over ``version`` (its ETag when read; None: it did not exist). False when
    another publisher wrote it in between."""
    folders = sorted({latest_folder_of(r) for r in runs}, key=lambda f: (f != LATEST, f))
    holding = ((f, _newest_passing(runs, f)) for f in folders)
    latest = [latest_entry(folder, line) for folder, line in holding if line is not None]
    body = index_document(runs, latest={entry["folder"]: entry for entry in latest})
    data = (json.dumps(body, indent=2) + "\n").encode()
    return store.put_if(store.key("index.json"), data, "application/json", version)


def _write_index_page(store: Bucket, pages: SitePages | None) -> list[str]:
    """index.html (and ``pages``) from the current index.json, again until that index is still
    current after they were written (a concurrent publisher may have rendered an older one over
    them). Returns the names of the pages written beside index.html."""
    for _ in range(INDEX_ATTEMPTS):
        index, version = store.get_json_tagged("index.json")
        runs = index_lines(index) or []
        latest = list((index or {}).get("latest", {}).values())
        files = dict(pages.render(runs, _bucket_reader(store))) if pages is not None else {}
        files["index.html"] = render_index_html(runs, latest, pages.entry if pages else None).encode()
        for name, body in files.items():
            store.put(store.key(name), body, content_type(name), store.list(name))
        if store.get_json_tagged("index.json")[1] == version:
            return [name for name in files if name != "index.html"]
    raise PublishError(f"index.json kept changing under {INDEX_ATTEMPTS} attempts to render index.html")


def _bucket_reader(store: Bucket) -> DocumentReader:
    """A published run's document (its ``result`` link: runs/<id>/comparison.json or result.json)."""

    def read(line: IndexLine) -> Document | None:
        key = (line.links or {}).get("result")
        body = store.get_json(key) if key else None
        return parse_document(body) if body is not None else None

    return read


def _paths_of(store: Bucket, run_id: str) -> list[str]:
    """A published run's files, relative to its folder."""
    base = store.key(f"runs/{run_id}/")
    return sorted(key[len(base) :] for key in store.list(f"runs/{run_id}/"))


def _update_latest(store: Bucket, folder: str, run_id: str, paths: list[str]) -> bool:
    """Make ``folder/`` an exact copy of the run's report, its result.json or comparison.json and
    validation.json (server-side copies from ``runs/<run_id>/``); returns whether anything changed."""
    sources = {latest_name(p): p for p in report_files(paths)["files"]}
    for name in PUBLISHED_DOCUMENTS:
        if name in paths:
            sources[name] = name
    existing = store.list(f"{folder}/")
    runs = store.list(f"runs/{run_id}/")
    changed = False
    wanted = set()
    for name, path in sorted(sources.items()):
        key, source = store.key(f"{folder}/{name}"), store.key(f"runs/{run_id}/{path}")
        wanted.add(key)
        if existing.get(key) == runs.get(source):
            continue
        store.copy(source, key)
        changed = True
    stale = sorted(set(existing) - wanted)
    store.delete(stale)
    return changed or bool(stale)
