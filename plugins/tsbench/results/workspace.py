"""The run store through which a run's tasks hand each other files, and a task's local copy of a
run folder in it (``Workspace``), so that tasks on workers that share no disk still see what the
earlier tasks wrote.

The store is addressed by URL (``$TSBENCH_RUN_STORE``): a local folder (the default: the results
root, where a workspace *is* the run folder and nothing is copied) or ``s3://bucket/prefix`` (S3 or
MinIO, through fsspec over pyarrow's S3 file system; endpoint and credentials from the usual AWS
variables, never logged). A workspace on S3 pulls the run folder — or the ``Part`` of it the
task opens — into a private scratch folder when it opens and, when it closes (also after a
failure, so that failure records arrive), pushes every file the task created or changed — only
those, so tasks that write disjoint files (the branches of different targets) never overwrite each
other's. Each object is one PUT: readers see a whole file or none.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

Snapshot = dict[str, tuple[int, int]]  # relative path → (size, mtime ns) as pulled
TRANSFER_THREADS = 8  # objects moved at once: a run folder is mostly small JSON files


def _nothing(relative: str) -> bool:
    return False


@dataclass(frozen=True)
class Part:
    """The part of a run folder a task opens; the rest stays in the store, neither fetched nor
    touched. ``paths``: relative folders (all their files) and files it opens (empty: the whole run
    folder);
    ``leaves_out(relative path)``: True for a file in them it never opens (a phase task does not
    read the other targets' folders, nor — but the query phase — the reference answers, over a GB
    at 4,000 hosts)."""

    paths: tuple[str, ...] = ()
    leaves_out: Callable[[str], bool] = _nothing


WHOLE = Part()


def is_remote(url: str) -> bool:
    return urlparse(url).scheme == "s3"


def s3_filesystem() -> Any:
    """fsspec's view of pyarrow's S3 file system; ``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL``
    name a custom endpoint (MinIO), credentials come from the AWS environment variables."""
    from fsspec.implementations.arrow import ArrowFSWrapper
    from pyarrow.fs import S3FileSystem

    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    options: dict[str, Any] = {
        "region": os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    }
    if endpoint:
        parsed = urlparse(endpoint)
        options |= {"endpoint_override": parsed.netloc, "scheme": parsed.scheme or "https"}
    return ArrowFSWrapper(S3FileSystem(**options))


def run_folder_suffix(run_id: str) -> str:
    """The last part of the folder name of an orchestrator's run ``run_id``: six hex digits of its
    sha256 (the same run id always gets the same suffix)."""
    return hashlib.sha256(run_id.encode()).hexdigest()[:6]


def run_folder_name(run_id: str, when: datetime) -> str:
    """The run folder's name of an orchestrator's run ``run_id`` started ``when`` (UTC):
    ``20261124T023000Z-1a2b3c``."""
    return f"{when:%Y%m%dT%H%M%SZ}-{run_folder_suffix(run_id)}"


def find_run_folder(url: str, run_id: str, when: datetime | None = None) -> str | None:
    """The URL of the run folder of ``run_id`` in the run store at ``url`` (a local folder or
    ``s3://…``): ``run_folder_name(run_id, when)`` when ``when`` is known and that folder exists,
    else the folder whose name ends with the run's suffix (``run_folder_suffix``; the newest by
    name when several do); None when none exists (the run never made its folder)."""
    fs = s3_filesystem() if is_remote(url) else None
    if fs is not None:
        remote = _remote_path(url)
        names = [name.rsplit("/", 1)[-1] for name in fs.ls(remote, detail=False)] if fs.exists(remote) else []
    else:
        root = Path(urlparse(url).path if url.startswith("file:") else url)
        names = [path.name for path in root.iterdir() if path.is_dir()] if root.is_dir() else []
    if when is not None and run_folder_name(run_id, when) in names:
        return f"{url.rstrip('/')}/{run_folder_name(run_id, when)}"
    suffix = f"-{run_folder_suffix(run_id)}"
    found = sorted(name for name in names if name.endswith(suffix))
    return f"{url.rstrip('/')}/{found[-1]}" if found else None


def _remote_path(url: str) -> str:
    parsed = urlparse(url)
    return f"{parsed.netloc}/{parsed.path.strip('/')}".rstrip("/")


def _local_files(root: Path) -> Snapshot:
    files: Snapshot = {}
    for path in root.rglob("*"):
        if path.is_file():
            stat = path.stat()
            files[path.relative_to(root).as_posix()] = (stat.st_size, stat.st_mtime_ns)
    return files


def _each(copy: Callable[[str, str], Any], pairs: Iterable[tuple[str, str]], threads: int) -> None:
    """``copy(source, destination)`` for every pair, ``threads`` at a time; the first error raises."""
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for future in [pool.submit(copy, source, destination) for source, destination in pairs]:
            future.result()


def _listed(fs: Any, remote: str, part: Part) -> list[str]:
    """The store's object names under ``part``'s paths of the run folder ``remote`` (a path no
    task wrote yet lists nothing)."""
    return [name for path in part.paths or ("",) for name in fs.find(f"{remote}/{path}".rstrip("/"))]


def pull(
    url: str, local: Path, fs: Any | None = None, part: Part = WHOLE, threads: int = TRANSFER_THREADS
) -> Snapshot:
    """Copy the objects of ``part`` of the run folder at ``url`` into ``local``, ``threads``
    objects at a time; returns what was pulled."""
    fs = fs or s3_filesystem()
    remote = _remote_path(url)
    local.mkdir(parents=True, exist_ok=True)
    pairs = []
    for name in _listed(fs, remote, part):
        relative = name[len(remote) :].lstrip("/")
        if part.leaves_out(relative):
            continue
        target = local / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        pairs.append((name, str(target)))
    _each(fs.get_file, pairs, threads)
    return _local_files(local)


def push(
    local: Path, url: str, pulled: Snapshot, fs: Any | None = None, threads: int = TRANSFER_THREADS
) -> list[str]:
    """Upload every file under ``local`` that is new or changed since ``pulled``, ``threads`` at a
    time; returns their relative paths."""
    fs = fs or s3_filesystem()
    remote = _remote_path(url)
    changed = [name for name, facts in _local_files(local).items() if pulled.get(name) != facts]
    _each(fs.put_file, [(str(local / name), f"{remote}/{name}") for name in changed], threads)
    return changed


@contextmanager
def workspace(url: str, scratch: Path | None = None, part: Part = WHOLE) -> Iterator[Path]:
    """A local folder holding the run folder at ``url`` for one task: the folder itself when the
    store is local; else a fresh copy of ``part`` of it (default: all of it) in a folder of the
    same name in a private folder under ``scratch`` (default: the temporary folder), whose new
    and changed files are pushed back on exit; then it is removed."""
    if not is_remote(url):
        yield Path(urlparse(url).path if url.startswith("file:") else url)  # created by who writes
        return
    fs = s3_filesystem()
    private = Path(tempfile.mkdtemp(prefix="tsbench-task-", dir=scratch))
    local = private / _remote_path(url).rsplit("/", 1)[-1]  # the run folder keeps its name
    try:
        pulled = pull(url, local, fs, part)
        try:
            yield local
        finally:
            push(local, url, pulled, fs)
    finally:
        shutil.rmtree(private, ignore_errors=True)
