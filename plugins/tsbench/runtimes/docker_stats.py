"""Readings from the engine's container statistics (``GET /containers/{id}/stats``), pure functions.

CPU is the cgroup's cumulative CPU time (``cpu_stats.cpu_usage.total_usage``, ns), turned into a
percentage between two readings by the engine's reading times (100 = one core busy, as ``UsageProbe``
says). Memory is the cgroup's resident memory: anonymous memory plus mapped file pages (cgroup v2
``anon`` + ``file_mapped``; v1 ``total_rss`` + ``total_mapped_file``), each page counted once — the local
probe sums per-process RSS instead, which counts shared pages (e.g. PostgreSQL's shared buffers) once
per process. Without those fields: usage minus inactive page cache, as ``docker stats`` shows it.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

_READ = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$")


def read_time_ns(text: str | None) -> int | None:
    """The engine's reading time (RFC 3339 with up to ns digits) as Unix ns; None when absent/zero."""
    match = _READ.match(text or "")
    if not match or match.group(1).startswith("0001-"):
        return None
    head, fraction, zone = match.groups()
    seconds = datetime.fromisoformat(head + ("+00:00" if zone == "Z" else zone)).timestamp()
    return int(seconds) * 1_000_000_000 + int((fraction or "0")[:9].ljust(9, "0"))


def cpu_ns(stats: dict[str, Any]) -> int:
    """Cumulative CPU time of the container's cgroup (ns)."""
    return int(stats.get("cpu_stats", {}).get("cpu_usage", {}).get("total_usage", 0))


def resident_bytes(memory_stats: dict[str, Any]) -> int:
    """Resident memory of the container's cgroup (see the module docstring)."""
    stats = memory_stats.get("stats") or {}
    if "anon" in stats:  # cgroup v2
        return int(stats["anon"]) + int(stats.get("file_mapped", 0))
    if "total_rss" in stats:  # cgroup v1
        return int(stats["total_rss"]) + int(stats.get("total_mapped_file", 0))
    if "rss" in stats:
        return int(stats["rss"]) + int(stats.get("mapped_file", 0))
    usage = int(memory_stats.get("usage", 0))
    inactive = stats.get("inactive_file", stats.get("total_inactive_file", 0))
    return max(0, usage - int(inactive))


def cpu_percent(previous: tuple[int, int], current: tuple[int, int]) -> float:
    """CPU % between two ``(reading time ns, cpu ns)`` readings; 0.0 when time did not advance."""
    elapsed = current[0] - previous[0]
    if elapsed <= 0:
        return 0.0
    return 100.0 * max(0, current[1] - previous[1]) / elapsed
