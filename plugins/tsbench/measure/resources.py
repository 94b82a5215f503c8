"""Server CPU % and RSS, sampled in a background thread while a phase runs.

CPU % is summed over the server process and its children (PostgreSQL backends, for example), so
100 % = one core busy; RSS is summed likewise (shared pages count once per process: an upper bound).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

import psutil


class ResourceSampler:
    """``with ResourceSampler(processes) as sampler: …`` then ``sampler.summary()``."""

    def __init__(self, processes: Callable[[], list[psutil.Process]], every_s: float = 0.5):
        self.processes = processes
        self.every_s = every_s
        self.samples: list[tuple[float, float, int]] = []  # (t, cpu %, rss bytes)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="resource-sampler", daemon=True)
        self._seen: dict[int, psutil.Process] = {}

    def _measure(self) -> tuple[float, int]:
        cpu, rss = 0.0, 0
        for proc in self.processes():
            known = self._seen.setdefault(proc.pid, proc)  # cpu_percent needs the same object
            try:
                cpu += known.cpu_percent(None)
                rss += known.memory_info().rss
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                self._seen.pop(proc.pid, None)
        return cpu, rss

    def _run(self) -> None:
        self._measure()  # prime cpu_percent
        started = time.perf_counter()
        while not self._stop.wait(self.every_s):
            cpu, rss = self._measure()
            self.samples.append((time.perf_counter() - started, cpu, rss))

    def __enter__(self) -> ResourceSampler:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> dict[str, Any]:
        """mean / max CPU % and RSS (bytes) over the samples, and how many samples there were."""
        if not self.samples:
            return {"samples": 0}
        cpus = [s[1] for s in self.samples]
        rss = [s[2] for s in self.samples]
        return {
            "samples": len(self.samples),
            "cpu_percent_mean": sum(cpus) / len(cpus),
            "cpu_percent_max": max(cpus),
            "rss_bytes_mean": sum(rss) / len(rss),
            "rss_bytes_max": max(rss),
        }
