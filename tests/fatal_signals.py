"""The process's handlers of the fatal signals, kept across code that replaces them.

chDB (ClickHouse in-process, the ClickHouse tests) installs its own handlers of SIGSEGV, SIGBUS,
SIGILL and SIGFPE on every query — over the JVM's, when GridDB's client JVM already runs in the same
process (an xdist worker that ran a GridDB module first). The JVM raises SIGSEGV itself and relies on
its own handler; a worker that ran the chDB tests after a GridDB module later died inside the JVM
without an ``hs_err`` file ("node down: Not properly terminated" in a GridDB test, sessions 25 and
26). The C handlers are saved and restored as raw ``struct sigaction`` bytes: Python's ``signal``
module cannot hold a handler it did not install.
"""

from __future__ import annotations

import ctypes
import signal
from collections.abc import Iterator
from contextlib import contextmanager

FATAL_SIGNALS = (signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE)
SIGACTION_BYTES = 256  # ≥ sizeof(struct sigaction) (152 on x86-64 glibc)


def handler_address(number: int) -> int:
    """The address of the C handler installed for signal ``number`` (0: the default)."""
    action = ctypes.create_string_buffer(SIGACTION_BYTES)
    ctypes.CDLL(None).sigaction(int(number), None, action)
    return int.from_bytes(action.raw[:8], "little")


@contextmanager
def kept_fatal_signal_handlers() -> Iterator[None]:
    """The fatal signals' handlers as they were on entry, put back on exit."""
    libc = ctypes.CDLL(None)
    saved = {}
    for number in FATAL_SIGNALS:
        saved[number] = ctypes.create_string_buffer(SIGACTION_BYTES)
        libc.sigaction(int(number), None, saved[number])
    try:
        yield
    finally:
        for number, action in saved.items():
            libc.sigaction(int(number), action, None)
