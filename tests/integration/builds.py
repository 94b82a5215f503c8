"""Servers scripts/test.sh builds in the background while other tests run (a target's
``test_prepare.sh``): a test waits for the build's status file and fails — never skips — when the build
failed or did not finish in time, with the tail of the build's log."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

# Under the per-test guard (pyproject.toml: timeout = 1500 s, setup included), so that a build still
# running fails with this message and the build's log, not with the guard's traceback.
BUILD_WAIT_S = 1380


def wait_for_build(variable: str, what: str, wait_s: float = BUILD_WAIT_S) -> None:
    """Wait until the status file named by ``$variable`` exists; fail unless it holds exit code 0.

    Without the variable (the tests run outside scripts/test.sh) there is nothing to wait for: the
    server must already be installed, and the fixture starting it says so when it is not.
    """
    name = os.environ.get(variable, "")
    if not name:
        return
    status = Path(name)
    deadline = time.monotonic() + wait_s
    while not status.is_file():
        if time.monotonic() > deadline:
            pytest.fail(f"the {what} build did not finish within {wait_s:.0f} s ({status})")
        time.sleep(5)
    code = status.read_text().strip()
    if code != "0":
        log = status.with_suffix(".log")
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:]) if log.is_file() else ""
        pytest.fail(f"the {what} build failed (exit {code}; log {log}):\n{tail}")
