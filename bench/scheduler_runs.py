"""Exclusivity under the real scheduler, on a busy machine (issue 9's proof; a benchmark, not a test).

Starts Airflow the documented way (docs/operating.md: ``scripts/airflow_ui.sh``: LocalExecutor,
scheduler, API server), keeps ``--burners`` CPU-burning processes running beside it, triggers the
two-target comparison ``--runs`` times through the REST API (all at once: they queue behind
``max_active_runs=1``), and prints per run: state, wall time, how long the second branch waited for
the machine, and whether two branches ever held the machine at once (from the task instances' own
start/end times).

    .venv/bin/python bench/scheduler_runs.py --runs 10 --burners 2
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [
    str(Path(__file__).resolve().parents[1] / "tests"),
    str(Path(__file__).resolve().parents[1] / "plugins"),
]

from scheduler.deployment import airflow_ui  # noqa: E402
from scheduler.test_real_scheduler import DAG, TWO_TARGETS, _branch_windows, _stamp  # noqa: E402


def _burn(seconds: float) -> None:
    deadline = time.monotonic() + seconds
    x = 0
    while time.monotonic() < deadline:
        x = (x * 31 + 7) % 1_000_003


def _row(airflow, run_id: str, timeout_s: float) -> tuple[bool, str]:
    """(passed, printed row) of one finished run."""
    run = airflow.wait_for_run(DAG, run_id, timeout_s=timeout_s)
    instances = airflow.task_instances(DAG, run_id)
    windows = sorted(_branch_windows(instances).values())
    overlap = any(a[1] > b[0] for a, b in itertools.pairwise(windows))
    acquire = [ti for ti in instances if ti["task_id"] == "benchmark.acquire_machine"]
    waited = max(_stamp(ti["end_date"]) - _stamp(ti["start_date"]) for ti in acquire)
    wall = _stamp(run["end_date"]) - _stamp(run["start_date"])
    ok = run["state"] == "success" and not overlap and len(windows) == 2
    cells = f"{run_id:<48} {run['state']:<8} {wall:7.1f} {waited:9.1f}"
    return ok, f"{cells} {'YES' if overlap else 'no':>8}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--burners", type=int, default=2, help="CPU-burning processes beside Airflow")
    parser.add_argument("--max-seconds", type=float, default=3600, help="bound on the whole bench")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="tsbench-bench-ui-"))
    burners = [
        multiprocessing.Process(target=_burn, args=(args.max_seconds,), daemon=True)
        for _ in range(args.burners)
    ]
    passed = 0
    with airflow_ui(workdir, {"TSBENCH_STATE": f"/var/tmp/tsbench-bench-{workdir.name[-6:]}"}) as airflow:
        for burner in burners:
            burner.start()
        try:
            run_ids = [airflow.trigger(DAG, TWO_TARGETS) for _ in range(args.runs)]
            print(f"{args.runs} runs triggered; {args.burners} CPU burners; log {airflow.log_path}")
            print(f"{'run':<48} {'state':<8} {'wall s':>7} {'waited s':>9} {'overlap':>8}", flush=True)
            for run_id in run_ids:
                ok, row = _row(airflow, run_id, args.max_seconds)
                passed += ok
                print(row, flush=True)
        finally:
            for burner in burners:
                burner.terminate()
    print(f"{passed} of {args.runs} runs passed with the machine held by one branch at a time")
    return 0 if passed == args.runs else 1


if __name__ == "__main__":
    sys.exit(main())
