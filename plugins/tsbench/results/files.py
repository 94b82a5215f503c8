"""Atomic file writes: write to a temporary file in the same folder, fsync, rename."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

COPY_BLOCK_BYTES = 4 * 2**20


@contextmanager
def atomic_writer(path: str | os.PathLike[str], mode: int = 0o644) -> Iterator[BinaryIO]:
    """A binary handle on a temporary file next to ``path``; on a clean exit it is flushed, given
    ``mode`` (results and reports are meant to be read by others: 0644 by default, not mkstemp's
    0600), fsynced and renamed over ``path``; on any exception it is removed."""
    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{final.name}.", dir=final.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(tmp, final)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes, mode: int = 0o644) -> Path:
    """Write ``data`` to ``path`` atomically (``atomic_writer``)."""
    with atomic_writer(path, mode) as handle:
        handle.write(data)
    return Path(path)


def copy_file_atomic(source: str | os.PathLike[str], path: str | os.PathLike[str], mode: int = 0o644) -> Path:
    """``write_bytes_atomic`` of ``source``'s bytes, copied in blocks (never the whole file in memory)."""
    with atomic_writer(path, mode) as handle, open(source, "rb") as reading:
        shutil.copyfileobj(reading, handle, COPY_BLOCK_BYTES)
    return Path(path)


def write_json_atomic(path: str | os.PathLike[str], body: Any, mode: int = 0o644) -> Path:
    return write_bytes_atomic(path, (json.dumps(body, indent=2, default=str) + "\n").encode(), mode)


def write_private_json(path: str | os.PathLike[str], body: Any) -> Path:
    """Atomic JSON readable by the owner only (0600 from creation on: mkstemp's mode, kept)."""
    return write_json_atomic(path, body, mode=0o600)


def read_json(path: str | os.PathLike[str]) -> Any:
    return json.loads(Path(path).read_text())
