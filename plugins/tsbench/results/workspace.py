"""The run store through which a run's tasks hand each other files, and a task's local copy of a
run folder in it (``Workspace``), so that tasks on workers that share no disk still see what the
earlier tasks wrote.

The store is addressed by URL (``$TSBENCH_RUN_STORE``): a local folder (the default: the results
root, where a workspace *is* the run folder and nothing is copied) or ``s3://bucket/prefix`` (S3 or
MinIO, through fsspec over pyarrow's S3 file system; endpoint and credentials from the usual AWS
variables, never logged). A workspace on S3 pulls the run folder into a private scratch folder when
it opens and, when it closes (also after a failure, so that failure records arrive), pushes every
file the task created or changed — only those, so tasks that write disjoint files (the branches of
different targets) never overwrite each other's. Each object is one PUT: readers see a whole file
or none.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

Snapshot = dict[str, tuple[int, int]]  # relative path → (size, mtime ns) as pulled
TRANSFER_THREADS = 8  # objects moved at once: a run folder is mostly small JSON files


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


def pull(
    url: str,
    local: Path,
    fs: Any | None = None,
    skip: frozenset[str] = frozenset(),
    threads: int = TRANSFER_THREADS,
) -> Snapshot:
    """Copy every object under ``url`` into ``local``, but those whose file name is in ``skip``
    (at any depth), ``threads`` objects at a time; returns what was pulled."""
    fs = fs or s3_filesystem()
    remote = _remote_path(url)
    local.mkdir(parents=True, exist_ok=True)
    pairs = []
    for name in fs.find(remote):
        relative = name[len(remote) :].lstrip("/")
        if relative.rsplit("/", 1)[-1] in skip:
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
def workspace(url: str, scratch: Path | None = None, skip: frozenset[str] = frozenset()) -> Iterator[Path]:
    """A local folder holding the run folder at ``url`` for one task: the folder itself when the
    store is local; else a fresh copy of the same name in a private folder under ``scratch``
    (default: the temporary folder), pushed back on exit and then removed. ``skip``: file names
    the task never opens, left in the store (a task that reads no reference answers need not
    download them: at 4,000 hosts they are over a GB)."""
    if not is_remote(url):
        yield Path(urlparse(url).path if url.startswith("file:") else url)  # created by who writes
        return
    fs = s3_filesystem()
    private = Path(tempfile.mkdtemp(prefix="tsbench-task-", dir=scratch))
    local = private / _remote_path(url).rsplit("/", 1)[-1]  # the run folder keeps its name
    try:
        pulled = pull(url, local, fs, skip)
        try:
            yield local
        finally:
            push(local, url, pulled, fs)
    finally:
        shutil.rmtree(private, ignore_errors=True)
