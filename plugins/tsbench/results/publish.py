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

``index.json`` is updated read-modify-write: publishers of different runs into the same prefix at
the same moment can lose each other's index line; ``publish_run(..., rebuild_index=True)``
recreates the index from the ``runs/`` folders.
"""

from __future__ import annotations

import hashlib
import html
import json
import logging
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypedDict
from urllib.parse import quote

from tsbench.results.store import (
    DOCUMENTS,
    INDEX_FORMAT,
    newest_first,
    read_validation,
    report_files,
    run_document,
    run_files,
    summarize,
    summarize_dir,
)

log = logging.getLogger("tsbench.publish")

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".pdf": "application/pdf",
    ".json": "application/json",
    ".jsonl": "application/x-ndjson",
    ".svg": "image/svg+xml",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".png": "image/png",
    ".csv": "text/csv; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".log": "text/plain; charset=utf-8",
    ".conf": "text/plain; charset=utf-8",
    ".toml": "text/plain; charset=utf-8",
    ".yaml": "text/plain; charset=utf-8",
}
MUTABLE = "no-cache"
SINGLE_PUT_LIMIT = 4 << 30  # below S3's 5 GiB single-PUT limit: every object's ETag is its MD5
CREDENTIAL_ERRORS = {
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "InvalidToken",
    "ExpiredToken",
    "InvalidClientTokenId",
    "AuthorizationHeaderMalformed",
}


LATEST = "latest"  # the default latest folder (the nightly's)
MARKER = ".publication.json"  # in runs/<run_id>/: {"latest_folder": …}
_LATEST_FOLDER = re.compile(r"latest[A-Za-z0-9_.-]{0,100}")


class PublishError(RuntimeError):
    """Publication failed; the message says why without revealing credentials."""


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


def latest_folder_of(line: Mapping[str, Any]) -> str:
    """The latest folder an index line's run was published under (``latest`` for older lines)."""
    return str(line.get("latest_folder") or LATEST)


def content_type(name: str) -> str:
    return CONTENT_TYPES.get(Path(name).suffix.lower(), "application/octet-stream")


def make_client(
    endpoint_url: str | None = None,
    region: str | None = None,
    aws_access_key_id: str | None = None,
    aws_secret_access_key: str | None = None,
    aws_session_token: str | None = None,
) -> Any:
    """An S3 client. Unset arguments fall back to boto3's environment/profile chain; with a custom
    endpoint (argument or ``AWS_ENDPOINT_URL[_S3]``) path-style addressing is used (MinIO)."""
    import boto3
    from botocore.config import Config

    custom = endpoint_url or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    config = Config(
        signature_version="s3v4",
        retries={"max_attempts": 3, "mode": "standard"},
        s3={"addressing_style": "path"} if custom else {},
    )
    session = boto3.session.Session(
        aws_access_key_id=aws_access_key_id,
        aws_secret_access_key=aws_secret_access_key,
        aws_session_token=aws_session_token,
        region_name=region
        or os.environ.get("AWS_REGION")
        or os.environ.get("AWS_DEFAULT_REGION")
        or "us-east-1",
    )
    return session.client("s3", endpoint_url=endpoint_url, config=config)


def _md5(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


class Bucket:
    """One bucket and key prefix, with errors translated into ``PublishError``."""

    def __init__(self, client: Any, bucket: str, prefix: str = ""):
        self.client = client
        self.bucket = bucket
        self.prefix = prefix.strip("/")

    def key(self, relative: str) -> str:
        return f"{self.prefix}/{relative}" if self.prefix else relative

    def relative(self, key: str) -> str:
        return key[len(self.prefix) + 1 :] if self.prefix else key

    @property
    def where(self) -> str:
        endpoint = getattr(getattr(self.client, "meta", None), "endpoint_url", "") or "AWS S3"
        return f"s3://{self.bucket}/{self.prefix} at {endpoint}"

    @contextmanager
    def errors(self, doing: str) -> Iterator[None]:
        from boto3.exceptions import S3UploadFailedError
        from botocore.exceptions import (
            BotoCoreError,
            ClientError,
            EndpointConnectionError,
            NoCredentialsError,
            PartialCredentialsError,
        )

        try:
            yield
        except (NoCredentialsError, PartialCredentialsError):
            raise PublishError(
                f"{doing}: no S3 credentials. Pass them as arguments or set AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY (or use an AWS profile or role)."
            ) from None
        except EndpointConnectionError:
            raise PublishError(f"{doing}: cannot reach the S3 endpoint for {self.where}") from None
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "")
            status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if code in CREDENTIAL_ERRORS:
                raise PublishError(
                    f"{doing}: S3 rejected the credentials ({code}) for {self.where}. Check "
                    "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or the arguments); their values are "
                    "never logged."
                ) from None
            if code in ("AccessDenied", "403") or status == 403:
                raise PublishError(
                    f"{doing}: access denied to {self.where}: the credentials lack permission "
                    "(or were rejected)."
                ) from None
            if code == "NoSuchBucket":
                raise PublishError(
                    f"{doing}: bucket {self.bucket!r} does not exist (publish with create_bucket=True "
                    "to create it)"
                ) from None
            message = error.response.get("Error", {}).get("Message", "")
            raise PublishError(f"{doing}: S3 error {code or status} for {self.where}: {message}") from None
        except (BotoCoreError, S3UploadFailedError) as error:
            raise PublishError(f"{doing}: {type(error).__name__} for {self.where}: {error}") from None

    # -- operations ------------------------------------------------------------------------------
    def ensure(self, create: bool) -> None:
        """Check access to the bucket (listing one key); create it when missing and ``create``."""
        from botocore.exceptions import ClientError

        with self.errors("checking the bucket"):
            try:
                self.client.list_objects_v2(Bucket=self.bucket, MaxKeys=1)
                return
            except ClientError as error:
                if error.response.get("Error", {}).get("Code") != "NoSuchBucket" or not create:
                    raise
        with self.errors("creating the bucket"):
            region = self.client.meta.region_name
            if region and region != "us-east-1":
                self.client.create_bucket(
                    Bucket=self.bucket, CreateBucketConfiguration={"LocationConstraint": region}
                )
            else:
                self.client.create_bucket(Bucket=self.bucket)
            log.info("created bucket %s", self.bucket)

    def list(self, relative_prefix: str) -> dict[str, str]:
        """Key → ETag (without quotes) of every object under ``relative_prefix``."""
        found: dict[str, str] = {}
        with self.errors(f"listing {relative_prefix}"):
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=self.key(relative_prefix)
            )
            for page in pages:
                for item in page.get("Contents", []):
                    found[item["Key"]] = item["ETag"].strip('"')
        return found

    def upload(self, path: Path, key: str, cache_control: str | None = None) -> None:
        from boto3.s3.transfer import TransferConfig

        extra = {"ContentType": content_type(path.name)}
        if cache_control:
            extra["CacheControl"] = cache_control
        with self.errors(f"uploading {key}"):
            self.client.upload_file(
                str(path),
                self.bucket,
                key,
                ExtraArgs=extra,
                Config=TransferConfig(multipart_threshold=SINGLE_PUT_LIMIT),
            )

    def put(self, key: str, data: bytes, kind: str, existing: dict[str, str] | None = None) -> bool:
        """Write ``data`` unless the object already holds exactly it; returns whether it wrote."""
        if existing is not None and existing.get(key) == hashlib.md5(data, usedforsecurity=False).hexdigest():
            return False
        with self.errors(f"writing {key}"):
            self.client.put_object(
                Bucket=self.bucket, Key=key, Body=data, ContentType=kind, CacheControl=MUTABLE
            )
        return True

    def copy(self, source: str, key: str) -> None:
        with self.errors(f"copying {source} to {key}"):
            self.client.copy_object(
                Bucket=self.bucket,
                Key=key,
                CopySource={"Bucket": self.bucket, "Key": source},
                MetadataDirective="REPLACE",
                ContentType=content_type(key),
                CacheControl=MUTABLE,
            )

    def delete(self, keys: list[str]) -> None:
        for start in range(0, len(keys), 1000):
            chunk = keys[start : start + 1000]
            with self.errors("deleting stale objects"):
                self.client.delete_objects(
                    Bucket=self.bucket, Delete={"Objects": [{"Key": k} for k in chunk], "Quiet": True}
                )

    def get_json(self, relative: str) -> Any | None:
        """A JSON object's content, or None when the key does not exist."""
        from botocore.exceptions import ClientError

        with self.errors(f"reading {relative}"):
            try:
                body = self.client.get_object(Bucket=self.bucket, Key=self.key(relative))["Body"].read()
            except ClientError as error:
                if error.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                    return None
                raise
        return json.loads(body)


# -- the index -----------------------------------------------------------------------------------
def _document_name(paths: list[str]) -> str | None:
    return next((name for name in DOCUMENTS if name in paths), None)


def run_links(base: str, summary: Mapping[str, Any]) -> RunLinks:
    """Where the documents of a run (``summary``: a ``store.summarize`` line) are when its folder is
    published at ``base`` (a URL relative to index.html, ending in ``/``)."""
    report = summary.get("report") or {}

    def at(path: str | None) -> str | None:
        return base + path if path else None

    return RunLinks(
        report_html=at(report.get("html")),
        report_pdf=at(report.get("pdf")),
        result=at("comparison.json" if summary.get("kind") == "comparison" else "result.json"),
        validation=at("validation.json" if summary.get("validation") is not None else None),
    )


def latest_entry(folder: str, summary: Mapping[str, Any]) -> LatestRun:
    """``folder`` holding the run ``summary`` describes: its report files flattened into the
    folder (``_latest_name``), its run document and validation.json beside them."""
    report = summary.get("report") or {}
    flat = {kind: _latest_name(report[kind]) if report.get(kind) else None for kind in ("html", "pdf")}
    return LatestRun(
        folder=folder,
        run_id=str(summary.get("run_id") or "unknown"),
        created_at=summary.get("created_at"),
        links=run_links(f"{folder}/", {**summary, "report": flat}),
    )


def local_latest(root: Path) -> list[LatestRun]:
    """The latest folders of a local publication root and the run each holds (``latest`` first)."""
    found = []
    for path in sorted(root.iterdir()) if root.is_dir() else []:
        if _LATEST_FOLDER.fullmatch(path.name) and any((path / name).is_file() for name in DOCUMENTS):
            found.append(latest_entry(path.name, summarize_dir(path)))
    return sorted(found, key=lambda entry: (entry["folder"] != LATEST, entry["folder"]))


def _latest_name(path: str) -> str:
    """Where a report file of a run goes in a latest folder: ``report/x`` → ``x``."""
    return path.split("/", 1)[1] if path.startswith("report/") else path


def _line(summary: dict[str, Any], run_id: str, latest_folder: str) -> dict[str, Any]:
    """An index line: the run's summary, its links under ``runs/<run_id>/`` and its latest folder."""
    return {**summary, "links": run_links(f"runs/{run_id}/", summary), "latest_folder": latest_folder}


def _rebuild(bucket: Bucket) -> list[dict[str, Any]]:
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
        document = _document_name(paths)
        if document is None:
            continue
        body = bucket.get_json(f"runs/{run_id}/{document}")
        validation = bucket.get_json(f"runs/{run_id}/validation.json") if "validation.json" in paths else None
        marker = bucket.get_json(f"runs/{run_id}/{MARKER}") if MARKER in paths else None
        summary = summarize(body, validation, report_files(paths))
        runs.append(_line(summary, run_id, latest_folder_of(marker or {})))
    return newest_first(runs)


def _fmt_rate(value: Any) -> str:
    return f"{value:,.0f}" if isinstance(value, int | float) else "–"


def _when(instant: str | None) -> str:
    """``2026-11-22T10:58:14.834193821Z`` → ``2026-11-22 10:58:14``."""
    return (instant or "")[:19].replace("T", " ")


def _a(href: str | None, text: str) -> str:
    if not href:
        return ""
    return f'<a href="{html.escape(quote(href, safe="/"))}">{html.escape(text)}</a>'


def _documents(links: Mapping[str, Any], html_text: str, validation: bool) -> str:
    """The links of a ``RunLinks`` as ``HTML · PDF · comparison.json [· validation.json]``."""
    result = links.get("result")
    parts = (
        _a(links.get("report_html"), html_text),
        _a(links.get("report_pdf"), "PDF"),
        _a(result, (result or "").rsplit("/", 1)[-1]),
        _a(links.get("validation"), "validation.json") if validation else "",
    )
    return " · ".join(part for part in parts if part)


def _verdict_cell(run: Mapping[str, Any]) -> str:
    e = html.escape
    verdict = run.get("verdict", "not validated")
    validation = run.get("validation") or {}
    if verdict == "failed":
        failed = validation.get("critical_failed") or []
        why = "<br><small>" + "<br>".join(e(name) for name in failed[:3]) + "</small>" if failed else ""
        return f'<span class="bad">FAILED</span> <small>{len(failed)} critical</small>{why}'
    if verdict == "passed":
        warnings = validation.get("warnings") or 0
        return '<span class="good">PASSED</span>' + (
            f" <small>{warnings} warning(s)</small>" if warnings else ""
        )
    return '<span class="none">not validated</span>'


def _row(run: Mapping[str, Any], folders: Sequence[str]) -> str:
    """One run's table row; ``folders``: the latest folders that hold it."""
    e = html.escape
    statuses = []
    for name, status in (run.get("status") or {}).items():
        cls = "good" if status == "ok" else "bad"
        label = e(status if status == "ok" else status.upper())
        statuses.append(f'<span class=nowrap>{e(name)} <span class="{cls}">{label}</span></span>')
    rates = "<br>".join(
        f"{e(name)}: {_fmt_rate(rate)}" for name, rate in (run.get("load_rows_per_s") or {}).items()
    )
    marker = "".join(f' <small class="good">{e(folder)}</small>' for folder in folders)
    row_class = "failed" if run.get("verdict") == "failed" else ""
    return (
        f'<tr class="{row_class}"><td><code>{e(run["run_id"])}</code>{marker}</td>'
        f"<td class=nowrap>{e(_when(run.get('created_at')))}</td>"
        f"<td>{e(str(run.get('use_case') or ''))}, scale {e(str(run.get('scale') or ''))}</td>"
        f"<td>{'<br>'.join(statuses)}</td><td class=num>{rates}</td><td>{_verdict_cell(run)}</td>"
        f"<td>{_documents(run.get('links') or {}, 'HTML', validation=True)}</td></tr>"
    )


def _latest_lines(latest: Sequence[LatestRun]) -> str:
    """One paragraph per latest folder: which run it holds, with links into the folder."""
    e = html.escape
    if not latest:
        return "<p>No run has passed validation yet, so there is no latest report.</p>"
    return "\n".join(
        f'<p class="latest">Latest validated run in <code>{e(entry["folder"])}/</code>: '
        f"<code>{e(entry['run_id'])}</code> ({e(_when(entry.get('created_at')))} UTC) — "
        f"{_documents(entry['links'], 'report (HTML)', validation=False)}</p>"
        for entry in latest
    )


INDEX_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;width:100%}"
    "th,td{border-bottom:1px solid #ddd;padding:.4em .6em;text-align:left;vertical-align:top}"
    "th{background:#f4f4f4}.num{text-align:right;white-space:nowrap}.good{color:#16653a;font-weight:600}"
    ".bad{color:#b3261e;font-weight:700}.none{color:#777}tr.failed{background:#fdf0ef}small{color:#555}"
    ".nowrap{white-space:nowrap}"
)


def render_index_html(runs: Sequence[Mapping[str, Any]], latest: Sequence[LatestRun]) -> str:
    """A plain, readable listing of every run, newest first, under one line per latest folder
    (deterministic: no timestamps). ``runs``: index lines with ``links`` (``RunLinks``)."""
    holds: dict[str, list[str]] = {}
    for entry in latest:
        holds.setdefault(entry["run_id"], []).append(entry["folder"])
    rows = [_row(run, holds.get(run["run_id"], [])) for run in runs]
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>tsbench runs</title>\n<style>{INDEX_STYLE}</style>\n</head>\n<body>\n"
        "<h1>tsbench: time-series database benchmark runs</h1>\n"
        f"{_latest_lines(latest)}\n"
        f"<p>{len(runs)} run(s), newest first. A run whose validation FAILED is listed here but never "
        "replaces a latest report.</p>\n"
        "<table>\n<thead><tr><th>Run</th><th>Created (UTC)</th><th>Workload</th><th>Targets</th>"
        "<th>Load rows/s</th><th>Validation</th><th>Documents</th></tr></thead>\n<tbody>\n"
        + "\n".join(rows)
        + "\n</tbody>\n</table>\n</body>\n</html>\n"
    )


# -- publishing ----------------------------------------------------------------------------------
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
) -> dict[str, Any]:
    """Publish one run folder (see the module docstring); returns what was done.

    ``client``: an existing boto3 S3 client (else one is made from the other arguments and the
    environment). ``force``: upload every file even when the object already has the same bytes.
    ``latest_folder``: the latest folder this run may replace (``check_latest_folder``; ValueError
    before anything is written when it is not a valid name).
    """
    latest_folder = check_latest_folder(latest_folder)
    run_dir = Path(run_dir)
    try:
        _, document = run_document(run_dir)
    except FileNotFoundError as error:
        raise PublishError(str(error)) from None
    run_id = document.get("run_id") or run_dir.name
    store = Bucket(
        client
        or make_client(endpoint_url, region, aws_access_key_id, aws_secret_access_key, aws_session_token),
        bucket,
        prefix,
    )
    store.ensure(create_bucket)
    paths = run_files(run_dir)
    uploaded, unchanged, stale = _upload_run(store, run_dir, run_id, paths, force)
    summary = _line(summarize(document, read_validation(run_dir), report_files(paths)), run_id, latest_folder)
    runs, moved_from = _index_runs(store, summary, rebuild_index)
    _put_marker(store, run_id, latest_folder)
    mirrored = {
        f: _mirror_latest(store, runs, f, run_id, paths) for f in dict.fromkeys([latest_folder, *moved_from])
    }
    _write_index(store, runs)
    outcome = {
        "run_id": run_id,
        "bucket": bucket,
        "prefix": store.prefix,
        "run_key_prefix": store.key(f"runs/{run_id}/"),
        "verdict": summary["verdict"],
        "uploaded": uploaded,
        "unchanged": unchanged,
        "deleted": stale,
        "latest_folder": latest_folder,
        "latest": mirrored[latest_folder][0],
        "latest_updated": any(changed for _, changed in mirrored.values()),
        "index_json": store.key("index.json"),
        "index_html": store.key("index.html"),
    }
    log.info(
        "published %(run_id)s to s3://%(bucket)s/%(run_key_prefix)s (%(verdict)s): %(uploaded)d uploaded, "
        "%(unchanged)d unchanged, %(deleted)d stale removed; %(latest_folder)s/ holds %(latest)s",
        outcome,
    )
    return outcome


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
        if not force and existing.get(key) == _md5(run_dir / path):
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


def _index_runs(store: Bucket, line: dict[str, Any], rebuild: bool) -> tuple[list[dict[str, Any]], list[str]]:
    """The index's lines with ``line`` inserted or replacing the run's old one, newest first, and
    the latest folder the run was listed under before, when that was another one."""
    index = None if rebuild else store.get_json("index.json")
    if index is None or index.get("format") != INDEX_FORMAT:
        runs = _rebuild(store)
    else:
        runs = list(index.get("runs") or [])
    old = next((r for r in runs if r.get("run_id") == line["run_id"]), None)
    moved = [latest_folder_of(old)] if old and latest_folder_of(old) != line["latest_folder"] else []
    return newest_first([r for r in runs if r.get("run_id") != line["run_id"]] + [line]), moved


def _newest_passing(runs: Sequence[Mapping[str, Any]], folder: str) -> Mapping[str, Any] | None:
    """The newest run published under ``folder`` whose validation passed (``runs``: newest first)."""
    return next((r for r in runs if r.get("verdict") == "passed" and latest_folder_of(r) == folder), None)


def _mirror_latest(
    store: Bucket, runs: list[dict[str, Any]], folder: str, run_id: str, paths: list[str]
) -> tuple[str | None, bool]:
    """Make ``folder/`` mirror its newest passing run (emptied when it has none); ``run_id`` and
    ``paths``: the run being published. Returns (the run it holds, whether anything changed)."""
    line = _newest_passing(runs, folder)
    if line is None:
        stale = sorted(store.list(f"{folder}/"))
        store.delete(stale)
        return None, bool(stale)
    source = paths if line["run_id"] == run_id else _paths_of(store, line["run_id"])
    return line["run_id"], _update_latest(store, folder, line["run_id"], source)


def _write_index(store: Bucket, runs: list[dict[str, Any]]) -> None:
    """index.json and index.html (written only when their bytes change)."""
    folders = sorted({latest_folder_of(r) for r in runs}, key=lambda f: (f != LATEST, f))
    holding = ((f, _newest_passing(runs, f)) for f in folders)
    latest = [latest_entry(folder, line) for folder, line in holding if line is not None]
    current = store.list("index.")
    body = {"format": INDEX_FORMAT, "latest": {entry["folder"]: entry for entry in latest}, "runs": runs}
    store.put(
        store.key("index.json"), (json.dumps(body, indent=2) + "\n").encode(), "application/json", current
    )
    page = render_index_html(runs, latest).encode()
    store.put(store.key("index.html"), page, "text/html; charset=utf-8", current)


def _paths_of(store: Bucket, run_id: str) -> list[str]:
    """A published run's files, relative to its folder."""
    base = store.key(f"runs/{run_id}/")
    return sorted(key[len(base) :] for key in store.list(f"runs/{run_id}/"))


def _update_latest(store: Bucket, folder: str, run_id: str, paths: list[str]) -> bool:
    """Make ``folder/`` an exact copy of the run's report, its result.json or comparison.json and
    validation.json (server-side copies from ``runs/<run_id>/``); returns whether anything changed."""
    sources = {_latest_name(p): p for p in report_files(paths)["files"]}
    for name in (*DOCUMENTS, "validation.json"):
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
