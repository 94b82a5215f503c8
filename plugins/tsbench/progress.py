"""Progress reporting for long work: a tqdm bar on a terminal, log lines every N seconds elsewhere.

Airflow task logs are not terminals, so there the same call prints lines such as
``generate: 1,048,576 / 8,640,000 rows (12%), 2,345,678 rows/s``.
"""

from __future__ import annotations

import logging
import sys
import time
from types import TracebackType

from tqdm import tqdm

log = logging.getLogger("tsbench")


class Progress:
    """Counts units of work (rows, queries…) towards an optional total."""

    def __init__(
        self,
        label: str,
        total: int | None = None,
        unit: str = "rows",
        every_s: float = 10.0,
        bar: bool | None = None,
    ):
        self.label, self.total, self.unit, self.every_s = label, total, unit, every_s
        self.done = 0
        self.started = time.perf_counter()
        self._last_log = self.started
        use_bar = sys.stderr.isatty() if bar is None else bar
        self._bar = (
            tqdm(total=total, unit=unit, unit_scale=True, desc=label, leave=False) if use_bar else None
        )

    def update(self, n: int) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
            return
        now = time.perf_counter()
        if now - self._last_log >= self.every_s:
            self._last_log = now
            log.info("%s", self.line())

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    @property
    def rate(self) -> float:
        return self.done / self.elapsed if self.elapsed > 0 else 0.0

    def line(self) -> str:
        share = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        of = f" / {self.total:,}" if self.total else ""
        return f"{self.label}: {self.done:,}{of} {self.unit}{share}, {self.rate:,.0f} {self.unit}/s"

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
