"""The machine's state when a point starts: what else is running and how fast the machine is now.

A nightly history on one machine can move with nothing the run records changing: other load, a
noisy cloud neighbour (CPU steal), or a freshly booted VM whose memory the host has not yet backed
(here, on 2026-12-02, touching never-used memory cost 9.1 µs per page in the first minutes after
boot and 4.5 µs once touched). Each point records, before its targets run (≈ 1.5 s, outside any
timed window):

- ``uptime_s``: seconds since the machine booted;
- ``load_1min``: the kernel's 1-minute load average;
- ``busy_percent`` / ``steal_percent``: the share of all cores busy (anything: other processes
  included) and stolen by the hypervisor, over ``SAMPLE_S`` seconds;
- ``fresh_page_us``: µs to fault in one never-touched 4 KiB page (``FRESH_MB`` MiB mapped anew);
- ``cpu_probe_ms``: ms for a fixed piece of work (SHA-256 of ``HASHED_MB`` MiB), the machine's
  speed for one core now.

``material_differences`` says which of two states differ by more than ``TOLERANCES``: what change
detection names as the machine's part in a change.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

SAMPLE_S = 1.0
FRESH_MB = 256
HASHED_MB = 32
PAGE = 4096
FRESH_BOOT_S = 3600  # a machine up for less than this is "freshly booted"


@dataclass(frozen=True)
class Tolerance:
    """When two values of one state figure differ materially: by a ``ratio`` (the larger over the
    smaller) or by ``points`` (absolute), whichever is given."""

    ratio: float | None = None
    points: float | None = None
    unit: str = ""

    def differs(self, before: float, after: float) -> bool:
        if self.points is not None:
            return abs(after - before) > self.points
        low, high = sorted((before, after))
        return self.ratio is not None and low > 0 and high / low > self.ratio


TOLERANCES = {
    "fresh_page_us": Tolerance(ratio=1.3, unit="µs per page"),
    "cpu_probe_ms": Tolerance(ratio=1.1, unit="ms"),
    "busy_percent": Tolerance(points=25.0, unit="% of the cores"),
    "steal_percent": Tolerance(points=3.0, unit="% of the cores"),
    "load_1min": Tolerance(points=1.0),
}


def _cpu_times() -> tuple[int, int, int]:
    """(total, idle + iowait, steal) jiffies of all cores since boot (``/proc/stat``)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    total = sum(fields[:8])  # user nice system idle iowait irq softirq steal (guest is in user)
    return total, fields[3] + fields[4], fields[7]


def _fresh_page_us() -> float:
    """µs per page to fault in ``FRESH_MB`` MiB of newly mapped anonymous memory."""
    size = FRESH_MB << 20
    with mmap.mmap(-1, size) as mapped:
        pages = np.frombuffer(mapped, dtype=np.uint8)[::PAGE]
        started = time.perf_counter()
        pages[:] = 1  # one write per page: each one faults its page in
        seconds = time.perf_counter() - started
        del pages
    return seconds / (size // PAGE) * 1e6


def _cpu_probe_ms() -> float:
    data = bytes(HASHED_MB << 20)
    started = time.perf_counter()
    hashlib.sha256(data).digest()
    return (time.perf_counter() - started) * 1000


def measure_machine_state() -> dict[str, float]:
    """The state figures above, measured now (≈ ``SAMPLE_S`` + 0.5 s); Linux only."""
    total_0, idle_0, steal_0 = _cpu_times()
    time.sleep(SAMPLE_S)
    total_1, idle_1, steal_1 = _cpu_times()
    elapsed = max(1, total_1 - total_0)
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    return {
        "uptime_s": round(uptime, 1),
        "load_1min": round(os.getloadavg()[0], 2),
        "busy_percent": round(100 * (elapsed - (idle_1 - idle_0)) / elapsed, 1),
        "steal_percent": round(100 * (steal_1 - steal_0) / elapsed, 1),
        "fresh_page_us": round(_fresh_page_us(), 3),
        "cpu_probe_ms": round(_cpu_probe_ms(), 2),
    }


class StateFigures(Protocol):
    """A recorded state (``results.model.MachineState``): every figure above, None if not measured."""

    uptime_s: float | None
    load_1min: float | None
    busy_percent: float | None
    steal_percent: float | None
    fresh_page_us: float | None
    cpu_probe_ms: float | None


def material_differences(before: StateFigures, after: StateFigures) -> list[tuple[str, str, str]]:
    """(figure, before, after) texts of each figure that differs beyond its tolerance, and
    ``freshly booted`` when one side ran in its machine's first hour and the other did not."""
    out = []
    up = (before.uptime_s, after.uptime_s)
    if up[0] is not None and up[1] is not None and (up[0] < FRESH_BOOT_S) != (up[1] < FRESH_BOOT_S):
        texts = [f"{'yes' if u < FRESH_BOOT_S else 'no'} (up {u / 60:.0f} min)" for u in up]
        out.append(("freshly booted", texts[0], texts[1]))
    for name, tolerance in TOLERANCES.items():
        old, new = getattr(before, name), getattr(after, name)
        if old is not None and new is not None and tolerance.differs(old, new):
            out.append((name, f"{old:g} {tolerance.unit}".strip(), f"{new:g} {tolerance.unit}".strip()))
    return out


def describe(state: StateFigures | None) -> str:
    """The state in one line, for reports and logs ("not recorded" without one)."""
    if state is None or state.uptime_s is None:
        return "not recorded"
    return (
        f"up {state.uptime_s / 60:,.0f} min, load {state.load_1min}, cores {state.busy_percent} % busy "
        f"and {state.steal_percent} % stolen (over {SAMPLE_S:g} s), fresh page {state.fresh_page_us} µs, "
        f"CPU probe {state.cpu_probe_ms} ms"
    )
