"""Stopping a run from outside (Ctrl-C, ``kill``, a CI timeout) the way a failure stops it: the
stack unwinds, so every ``finally`` runs — each branch's teardown stops its servers and gives the
machine lease back — and the process exits with the shell's code for the signal (130 for SIGINT,
143 for SIGTERM).

SIGTERM's default action kills the process where it stands, leaving servers running, so
``signals_unwind`` makes SIGTERM and SIGINT raise ``Interrupted`` in the main thread. Only the first
signal does: a second one (an impatient Ctrl-C) while the run unwinds is reported and ignored, so
the teardowns finish (SIGKILL still abandons them). Threads that measure (load workers, query
workers) are told to stop by their owner when the interruption passes through it; they are
daemons, so a straggler never holds the exit.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Interrupted(BaseException):
    """The run was stopped by a signal; ``code`` is the exit status (128 + the signal number).
    A ``BaseException``, so the ``except Exception`` that isolates a failing target never
    swallows it."""

    def __init__(self, signum: int):
        self.signum, self.code = signum, 128 + signum
        super().__init__(f"interrupted by {signal.Signals(signum).name}")


@contextmanager
def signals_unwind() -> Iterator[None]:
    """While the block runs, the first SIGTERM or SIGINT raises ``Interrupted`` in the main
    thread and later ones are only reported (on stderr); the previous handlers are restored
    afterwards."""
    received: list[int] = []

    def raise_interrupted(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        if len(received) == 1:
            raise Interrupted(signum)
        name = signal.Signals(signum).name
        print(f"{name} ignored: tearing down after the first signal (SIGKILL abandons it)", file=sys.stderr)

    previous = {sig: signal.signal(sig, raise_interrupted) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
