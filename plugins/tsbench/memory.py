"""Handing memory a task or an answer freed back to the system, so that a process that runs many
steps one after another (the command line's run, ``dag.test()``: every task in one process) does
not keep the high-water mark of each step it ran.

Freed memory stays with its allocator: glibc keeps it in its arenas (one per thread that
allocated — a load's worker threads, libpq's results), Arrow's memory pool keeps freed pages for
reuse. Neither shows up as a Python object, and both count in the resident size.
"""

from __future__ import annotations

import ctypes
import sys
from functools import cache
from typing import Any


@cache
def _libc() -> Any:
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


def trim_c_heap() -> None:
    """glibc ``malloc_trim(0)``: every arena's free pages back to the system (a no-op elsewhere)."""
    libc = _libc()
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


def release_freed_memory() -> None:
    """After a step: give back what Arrow's pool and glibc hold free. Takes about a millisecond;
    nothing still referenced is touched. (No ``gc.collect()``: a full collection of a process that
    holds Airflow took 0.16–0.5 s per task, and cyclic garbage is Python's own to collect.)"""
    if "pyarrow" in sys.modules:  # only when the step used Arrow: no import for a step that did not
        sys.modules["pyarrow"].default_memory_pool().release_unused()
    trim_c_heap()
