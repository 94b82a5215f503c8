"""The JVM's own signal handlers, kept in place in this Python process.

The JVM handles some synchronous signals itself: a safepoint poll in compiled Java code is a load
from a page the JVM protects when it needs every thread to stop (for a GC, a thread dump), and the
SIGSEGV it raises is the JVM's way into the safepoint. A handler installed after the JVM started
replaces the JVM's: Python's ``signal.signal`` (Airflow's DAG importer installs one for SIGSEGV
whenever it parses a DAG file in this process) only sets a flag and returns, so the faulting load
runs again, forever, at 100 % CPU, and the JVM never reaches its safepoint (no GC, no ``jstack``).
Seen in CI: a GridDB query spun for 26 minutes in a pytest worker that had parsed the DAGs after its
JVM started; reproduced by ``tests/targets/test_griddb_signals.py``.

So the handlers the JVM installed are recorded when it starts (``remember``) and put back before
each call into it (``restore``), with one warning naming the signals that had been replaced.
"""

from __future__ import annotations

import ctypes
import logging
import signal

log = logging.getLogger("tsbench.griddb")

# The synchronous signals HotSpot handles itself on Linux, and its suspend/resume signal (SIGUSR2).
JVM_SIGNALS = (signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGUSR2)
_SIGACTION_BYTES = 256  # more than glibc's struct sigaction (152 bytes on x86_64 and arm64)
# What says who handles a signal, in glibc's struct sigaction: the handler (bytes 0-8), the kernel's
# part of the mask (8-16; glibc leaves the rest of its 128-byte sigset_t unset when it reads one)
# and the flags (136-140).
_IDENTITY = (slice(0, 16), slice(136, 140))

_libc = ctypes.CDLL(None, use_errno=True)
_saved: dict[int, bytes] = {}


def _current(signum: int) -> ctypes.Array[ctypes.c_char]:
    action = ctypes.create_string_buffer(_SIGACTION_BYTES)
    if _libc.sigaction(signum, None, action) != 0:
        raise OSError(ctypes.get_errno(), f"sigaction({signum}) could not be read")
    return action


def _identity(raw: bytes) -> bytes:
    return b"".join(raw[part] for part in _IDENTITY)


def remember() -> None:
    """Record the JVM's handlers: call right after the JVM started in this process."""
    for signum in JVM_SIGNALS:
        _saved[signum] = _current(signum).raw


def replaced() -> list[int]:
    """The JVM signals whose handler is no longer the one ``remember`` recorded."""
    return [signum for signum, raw in _saved.items() if _identity(_current(signum).raw) != _identity(raw)]


def restore() -> list[str]:
    """Put back every JVM handler that was replaced since ``remember``; the names of those signals
    (empty when none was: the usual case, one ``sigaction`` read per signal)."""
    names = []
    for signum in replaced():
        action = ctypes.create_string_buffer(_saved[signum], _SIGACTION_BYTES)
        if _libc.sigaction(signum, action, None) != 0:
            raise OSError(ctypes.get_errno(), f"sigaction({signum}) could not be restored")
        names.append(signal.Signals(signum).name)
    if names:
        log.warning(
            "griddb: %s had a handler installed after the JVM started (Airflow's DAG importer installs "
            "one for SIGSEGV); the JVM's own handlers are back, without which its next safepoint "
            "would spin forever",
            ", ".join(names),
        )
    return names
