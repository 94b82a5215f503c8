"""A real nightly history on this machine, and what change detection finds in it (issue 45).

Runs ``--nights`` small comparisons one after another with ``python -m tsbench run`` (the DAG's
steps in one process, each run its own folder in one store, each ending in its report and its
``changes.json``), all with the same parameters except that from night ``--change-at`` on, one
parameter is changed (``--change workers=1``: a real change the load rate feels). Then prints what
the last night's change detection found: every change with its series, the nights on either
side and what differed; the changes at the changed night (expected) and any other (false alarms:
noise flagged as change).

    PYTHONPATH=plugins .venv/bin/python bench/nightly_history.py [--nights 14] [--change-at 8]
        [--change workers=1] [--targets questdb,postgres] [--store reports/out/nightly-history]
        [--queries-per-type 5] [--hot-runs 3] [--redetect]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from tsbench.changes.history import detect_folder_changes
from tsbench.machine_state import describe
from tsbench.results.change_records import ChangeReport
from tsbench.results.folder import RunFolder
from tsbench.results.store import RunStore

ROOT = Path(__file__).resolve().parents[1]
RUN = ["--scales", "100", "--duration", "6h", "--trials", "1"]


def run_night(store: Path, night: int, targets: str, extra: list[str]) -> float:
    """One comparison as night ``night`` into ``store``; its wall seconds."""
    command = [sys.executable, "-m", "tsbench", "run", "--targets", targets, *RUN, *extra]
    command += ["--results-dir", str(store / "runs"), "--run-id", f"night-{night:02d}"]
    started = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode not in (0, 1):  # 1: a validation warning/failure still leaves a report
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"night {night} failed ({done.returncode})")
    return time.perf_counter() - started


def summarize(report: ChangeReport, change_at: int) -> None:
    expected = f"night-{change_at:02d}"
    print(f"\nchange detection of the last night: {report.runs} runs, {report.series} series")
    print(f"detector: {report.detector}")
    at_change = [c for c in report.changes if c.after.run_id == expected]
    elsewhere = [c for c in report.changes if c.after.run_id != expected]
    print(f"\nchanges at the changed night ({expected}): {len(at_change)}")
    for change in at_change:
        print("  " + change.summary())
    machine = [c for c in elsewhere if c.differences and all(_by_machine(d.what) for d in c.differences)]
    unexplained = [c for c in elsewhere if not c.differences]
    other = [c for c in elsewhere if c not in machine and c not in unexplained]
    print(f"changes elsewhere naming only the machine's state: {len(machine)}")
    for change in machine:
        print("  " + change.summary())
    print(f"changes elsewhere naming something else: {len(other)}")
    for change in other:
        print("  " + change.summary())
    print(f"changes elsewhere with nothing recorded differing (noise flagged as change): {len(unexplained)}")
    for change in unexplained:
        print("  " + change.summary())


def _state(store: Path, night: int) -> str:
    """The machine's state as the night's point started (``tsbench.machine_state``)."""
    points = RunFolder(store / "runs" / f"night-{night:02d}").points()
    return describe(points[0].read_run().machine_state if points else None)


def _by_machine(what: str) -> bool:
    return what.startswith("machine state ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nights", type=int, default=14)
    parser.add_argument("--change-at", type=int, default=8, help="first night with the change (0-based)")
    parser.add_argument("--change", default="workers=1", help="PARAMETER=VALUE from that night on")
    parser.add_argument("--targets", default="questdb,postgres")
    parser.add_argument("--queries-per-type", type=int, default=5, help="queries of each type a night")
    parser.add_argument("--hot-runs", type=int, default=3, help="hot runs of each query a night")
    parser.add_argument("--store", type=Path, default=ROOT / "reports" / "out" / "nightly-history")
    parser.add_argument("--report-only", action="store_true", help="only print the last night's changes")
    parser.add_argument(
        "--redetect", action="store_true", help="run no night: detect the last night's changes again"
    )
    args = parser.parse_args()
    name, value = args.change.split("=", 1)
    last_folder = args.store / "runs" / f"night-{args.nights - 1:02d}"
    if args.redetect:
        detect_folder_changes(last_folder, RunStore(args.store / "runs"))
    elif not args.report_only:
        for night in range(args.nights):
            extra = [f"--{name.replace('_', '-')}", value] if night >= args.change_at else []
            sizes = ["--queries-per-type", str(args.queries_per_type), "--hot-runs", str(args.hot_runs)]
            seconds = run_night(args.store, night, args.targets, [*sizes, *extra])
            state = _state(args.store, night)
            print(f"night {night:02d}{' (changed)' if extra else ''}: {seconds:.0f} s; {state}", flush=True)
    last = RunFolder(last_folder).read_changes()
    if last is None:
        raise SystemExit("the last night has no changes.json")
    summarize(last, args.change_at)


if __name__ == "__main__":
    main()
