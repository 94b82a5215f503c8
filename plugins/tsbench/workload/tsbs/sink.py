"""Buffered output for an export: writing (and gzip compression) runs on a helper thread."""

from __future__ import annotations

import gzip
import os
import queue
import threading
from pathlib import Path
from typing import IO, Any

from tsbench.workload.tsbs.formats import TsbsFormatError

GZIP_LEVEL = 1  # fast; TSBS users pipe through gzip themselves when size matters


class Sink:
    """Buffered output; writing (and gzip compression, which releases the GIL) runs on a thread."""

    FLUSH_BYTES = 4 << 20

    def __init__(self, out: str | os.PathLike[str] | IO[bytes]):
        self.path: Path | None = None
        self._files: list[IO[bytes]] = []
        if isinstance(out, str | os.PathLike):
            self.path = Path(out)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.tmp = self.path.with_name(f".{self.path.name}.partial")
            raw = open(self.tmp, "wb")  # noqa: SIM115 (closed in close())
            self._files.append(raw)
            if self.path.name.endswith(".gz"):
                self._files.insert(
                    0,
                    gzip.GzipFile(self.path.name, mode="wb", compresslevel=GZIP_LEVEL, fileobj=raw, mtime=0),
                )
            self.handle: IO[bytes] = self._files[0]
        else:
            self.handle = out
        self._pending: list[bytes | memoryview] = []
        self._pending_bytes = 0
        self._queue: queue.Queue[bytes | memoryview | None] = queue.Queue(4)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._drain, name="tsbs-export", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while (item := self._queue.get()) is not None:
            if self._error is None:
                try:
                    self.handle.write(item)
                except BaseException as error:  # surfaced by the next write() or close()
                    self._error = error

    def _send(self, item: bytes | memoryview) -> None:
        if self._error is not None:
            raise TsbsFormatError(f"writing the TSBS file failed: {self._error}") from self._error
        self._queue.put(item)

    def write(self, data: bytes | memoryview) -> None:
        if len(data) >= self.FLUSH_BYTES and not self._pending:
            self._send(data)
            return
        self._pending.append(data)
        self._pending_bytes += len(data)
        if self._pending_bytes >= self.FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        if self._pending:
            self._send(b"".join(self._pending))
            self._pending, self._pending_bytes = [], 0

    def __enter__(self) -> Sink:
        return self

    def __exit__(self, kind: Any, error: Any, tb: Any) -> None:
        failure: BaseException | None = None
        try:
            if error is None:
                self.flush()
        except BaseException as problem:
            failure = problem
        self._queue.put(None)
        self._thread.join()
        try:
            for handle in self._files:  # the gzip stream first, then the file under it
                handle.close()
            if self.path is None and error is None and failure is None and self._error is None:
                self.handle.flush()
        except BaseException as problem:
            failure = failure or problem
        failure = failure or self._error
        if self.path is not None:
            if error is None and failure is None:
                os.replace(self.tmp, self.path)
            else:
                self.tmp.unlink(missing_ok=True)
        if failure is not None and error is None:
            raise TsbsFormatError(f"writing the TSBS file failed: {failure}") from failure
