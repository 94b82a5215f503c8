"""A CLI run stopped from outside (``kill``, Ctrl-C) tears its servers down, records where it
stopped, gives the machine back and exits with the shell's code for the signal — on real servers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tsbench.results.files import read_json

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def _processes_under(folder: Path) -> list[str]:
    """Command lines of running processes that name ``folder`` (the servers of a state root)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(folder) in cmdline:
            found.append(f"{proc.name}: {cmdline[:200]}")
    return found


@pytest.mark.parametrize(
    ("signum", "phase"),
    [(signal.SIGTERM, "load"), (signal.SIGINT, "queries")],
    ids=["term-load", "int-queries"],
)
def test_a_stopped_run_tears_down_its_servers_and_frees_the_machine(
    tmp_path: Path, dataset_cache: Path, signum: int, phase: str
) -> None:
    """PostgreSQL at 100 hosts × 1 day (864,000 rows, ≥ 3 s of load here): the signal arrives one
    second into ``phase``; the run exits with 128 + the signal within a minute, the phase records the
    interruption, teardown ran, no server process is left and the lease is free."""
    out, state = tmp_path / "out", Path("/var/tmp/tsbench-tests") / f"stop-{tmp_path.name}"
    run = ["run", "--targets", "postgres", "--scales", "100", "--duration", "1d", "--runtime", "local"]
    run += ["--queries-per-type", "20", "--hot-runs", "3", "--run-id", "stopped"]
    run += ["--results-dir", str(out), "--cache-dir", str(dataset_cache), "--state-dir", str(state)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    child = subprocess.Popen(
        [sys.executable, "-m", "tsbench", *run], stderr=subprocess.PIPE, text=True, env=env
    )
    assert child.stderr is not None
    seen = []
    for line in child.stderr:
        seen.append(line)
        if line.startswith(f"· {phase} "):
            break
    assert seen and seen[-1].startswith(f"· {phase} "), "".join(seen)[-3000:]
    target_dir = out / "stopped" / "scale-100" / "targets" / "postgres"
    _wait_for_the_phases_before(phase, target_dir)
    time.sleep(1.0)
    child.send_signal(signum)
    stopped_at = time.monotonic()
    rest = child.stderr.read()
    child.wait(timeout=120)
    took = time.monotonic() - stopped_at
    assert child.returncode == 128 + signum, rest[-3000:]
    assert took < 60, f"the run needed {took:.0f} s to stop"
    assert f"interrupted by {signal.Signals(signum).name}" in rest
    error = read_json(target_dir / "error.json")
    assert error["failed_phase"] == phase and error["error"].startswith("Interrupted"), error
    assert (target_dir / "teardown.json").exists()
    assert _processes_under(state) == []
    assert not (state / "machine.lease").exists()


def _wait_for_the_phases_before(phase: str, target_dir: Path, timeout_s: float = 120) -> None:
    """A step that runs phases before ``phase`` (the queries step opens with the cache reset): wait
    until their records are written, so that the signal arrives inside ``phase`` itself."""
    from tsbench.run.pipeline import steps

    step = next(step for step in steps("branch") if step.name == phase)
    deadline = time.monotonic() + timeout_s
    for before in step.phases[: step.phases.index(phase)]:
        while not (target_dir / f"{before}.json").is_file():
            assert time.monotonic() < deadline, f"{before} never finished"
            time.sleep(0.05)
