"""What the measuring process itself costs while it runs, sampled every 0.2 s: its resident set, the
CPU-seconds of it and of its Python child processes (the wire encoders), and the disk used on the
filesystem its work folder lives on.

A database server is another process and is not counted (its CPU and RSS are the run's own
``resources`` records). Children are counted while they live, so a child's last 0.2 s can be
missed. Disk is the whole filesystem's: anything else writing to it at the time counts too, so
stage costs are measured with nothing else running.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

INTERVAL_S = 0.2


@dataclass(frozen=True)
class Sample:
    at: float  # epoch seconds
    rss_bytes: int  # this process's resident set
    cpu_s: float  # CPU-seconds so far: this process (all threads) + its Python descendants
    disk_used_bytes: int  # bytes used on the work folder's filesystem
    children_rss_bytes: int = 0  # the resident sets of its live Python descendants (wire encoders)


@dataclass(frozen=True)
class Window:
    """One stage's cost between two instants: wall and CPU seconds, peak RSS and the RSS at its start,
    and the disk used above the sampler's first sample at its highest (``disk_high_bytes``) and at
    its end."""

    wall_s: float
    cpu_s: float
    peak_rss_bytes: int
    start_rss_bytes: int
    disk_high_bytes: int
    disk_end_bytes: int
    peak_children_rss_bytes: int = 0  # its Python descendants' resident sets together, at their highest


def disk_used(path: Path) -> int:
    stats = os.statvfs(path)
    return (stats.f_blocks - stats.f_bfree) * stats.f_frsize


class ProcessSampler:
    """Samples this process (and its Python children) and ``disk_of``'s filesystem in a thread."""

    def __init__(self, disk_of: Path) -> None:
        self.disk_of = disk_of
        self.process = psutil.Process()
        self.children_cpu: dict[int, float] = {}
        self.samples: list[Sample] = []
        self.done = threading.Event()
        self.baseline_disk = disk_used(disk_of)

    def start(self) -> ProcessSampler:
        threading.Thread(target=self._run, daemon=True).start()
        return self

    def stop(self) -> None:
        self.done.set()

    def _cpu_s_and_children_rss(self) -> tuple[float, int]:
        own, rss = self.process.cpu_times(), 0
        for child in self.process.children(recursive=True):
            try:
                if child.name().startswith("python"):
                    times = child.cpu_times()
                    self.children_cpu[child.pid] = times.user + times.system
                    rss += child.memory_info().rss
            except psutil.Error:
                continue  # ended between the listing and the reading: its last value stays
        return own.user + own.system + sum(self.children_cpu.values()), rss

    def sample(self) -> Sample:
        cpu_s, children_rss = self._cpu_s_and_children_rss()
        rss = self.process.memory_info().rss
        return Sample(time.time(), rss, cpu_s, disk_used(self.disk_of), children_rss)

    def _run(self) -> None:
        self.samples.append(self.sample())
        while not self.done.wait(INTERVAL_S):
            self.samples.append(self.sample())

    def window(self, start: float, end: float) -> Window:
        """The cost between ``start`` and ``end`` (epoch seconds), from the samples nearest them."""
        inside = [s for s in self.samples if start <= s.at <= end]
        before = [s for s in self.samples if s.at < start]
        after = [s for s in self.samples if s.at > end]
        first = before[-1] if before else (inside[0] if inside else self.samples[0])
        last = after[0] if after else (inside[-1] if inside else self.samples[-1])
        span = inside or [first, last]
        return Window(
            wall_s=end - start,
            cpu_s=max(0.0, last.cpu_s - first.cpu_s),
            peak_rss_bytes=max(s.rss_bytes for s in span),
            start_rss_bytes=first.rss_bytes,
            disk_high_bytes=max(s.disk_used_bytes for s in span) - self.baseline_disk,
            disk_end_bytes=last.disk_used_bytes - self.baseline_disk,
            peak_children_rss_bytes=max(s.children_rss_bytes for s in span),
        )
