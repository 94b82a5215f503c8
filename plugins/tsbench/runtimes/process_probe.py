"""The local runtime's ``UsageProbe``: CPU % and RSS of the server's local processes (psutil),
summed over the process and its children (100 % = one core busy)."""

from __future__ import annotations

from collections.abc import Callable

import psutil


class ProcessTreeProbe:
    """CPU % since the previous ``measure`` and RSS of local processes (psutil)."""

    def __init__(self, processes: Callable[[], list[psutil.Process]]):
        self.processes = processes
        self._seen: dict[int, psutil.Process] = {}

    def measure(self) -> tuple[float, int]:
        cpu, rss = 0.0, 0
        for proc in self.processes():
            known = self._seen.setdefault(proc.pid, proc)  # cpu_percent needs the same object
            try:
                cpu += known.cpu_percent(None)
                rss += known.memory_info().rss
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                self._seen.pop(proc.pid, None)
        return cpu, rss
