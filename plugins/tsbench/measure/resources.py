"""Server CPU % and RSS, sampled in a background thread while a phase runs.

CPU % is summed over the server process and its children (PostgreSQL backends, for example), so
100 % = one core busy; RSS is summed likewise (shared pages count once per process: an upper bound).
Where the server runs (local process, container, remote host) decides how a sample is taken: the
sampler asks a ``UsageProbe`` (``tsbench.runtimes.base``); the local runtime's is
``runtimes/process_probe.py``.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import Any

from tsbench.runtimes.base import UsageProbe


class ResourceSampler:
    """``with ResourceSampler(probe) as sampler: …`` then ``sampler.summary()``. A probe that fails
    (a remote agent unreachable for a moment) costs that sample, never the measured phase."""

    def __init__(self, probe: UsageProbe, every_s: float = 0.5):
        self.probe = probe
        self.every_s = every_s
        self.samples: list[tuple[float, float, int]] = []  # (t, cpu %, rss bytes)
        self.failures = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="resource-sampler", daemon=True)

    def _measure(self) -> tuple[float, int] | None:
        try:
            return self.probe.measure()
        except Exception:
            self.failures += 1
            return None

    def _run(self) -> None:
        self._measure()  # prime: CPU % is a delta
        started = time.perf_counter()
        while not self._stop.wait(self.every_s):
            sample = self._measure()
            if sample is not None:
                self.samples.append((time.perf_counter() - started, *sample))

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
            return {"samples": 0, "failed_samples": self.failures}
        cpus = [s[1] for s in self.samples]
        rss = [s[2] for s in self.samples]
        return {
            "samples": len(self.samples),
            "failed_samples": self.failures,
            "cpu_percent_mean": sum(cpus) / len(cpus),
            "cpu_percent_max": max(cpus),
            "rss_bytes_mean": sum(rss) / len(rss),
            "rss_bytes_max": max(rss),
        }
