"""A local server's process group, found from the record its instance left (``instance.json``)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path

import psutil


def kill_recorded_process(state: Path) -> None:
    """SIGTERM, then SIGKILL, the process group of the pid an ``instance.json`` records."""
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError, psutil.Error):
        pid = int(json.loads(state.read_text())["pid"])
        proc = psutil.Process(pid)
        os.killpg(pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except psutil.TimeoutExpired:
            os.killpg(pid, signal.SIGKILL)
            proc.wait(10)
