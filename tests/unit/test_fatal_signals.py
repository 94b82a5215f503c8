"""chDB replaces the JVM's fatal-signal handlers on every query; the ClickHouse test modules' guard
(``tests/fatal_signals.py``) puts them back. Run in a child process: a real JVM (GridDB's client) and
a real chDB query in one interpreter, as in an xdist worker that ran both kinds of module."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
PROBE = textwrap.dedent(
    """
    from fatal_signals import FATAL_SIGNALS, handler_address, kept_fatal_signal_handlers
    from tsbench.targets.griddb.client import java

    java()
    jvm = [handler_address(number) for number in FATAL_SIGNALS]
    with kept_fatal_signal_handlers():
        import chdb

        chdb.query("SELECT 1")
        during = [handler_address(number) for number in FATAL_SIGNALS]
    after = [handler_address(number) for number in FATAL_SIGNALS]
    print(all(jvm), during != jvm, after == jvm)
    """
)


def test_the_jvms_handlers_are_back_after_chdb_replaced_them() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(TESTS.parent / "plugins")])}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    # the JVM had handlers; chDB's query replaced them; the guard put the JVM's back
    assert done.stdout.split()[-3:] == ["True", "True", "True"], done.stdout[-2000:]
