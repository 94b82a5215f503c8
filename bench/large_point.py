"""One large point through the comparison DAG (``dag.test()``, every task in this process): wall
time and peak RSS of the orchestrating process per task, and each target's phases as measured.

    .venv/bin/python bench/large_point.py [--scale 4000] [--duration 1d] [--trials 1]

Peak RSS per task = the highest resident set of this process sampled every 0.2 s while the task ran
(``/proc/self/status`` VmRSS; each task's start and end from Airflow's metadata database); the
process's own high-water mark (``ru_maxrss``) is printed at the end. Database servers are other
processes and not counted. Nothing in the pipeline may hold a whole dataset in memory: at 4,000
hosts × 1 day (34.56 M rows) the peak must stay ≤ 2 GB.
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from orchestration import comparison_dag

ROOT = Path(__file__).resolve().parents[1]


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


class RssSampler:
    """This process's resident set every 0.2 s, with the wall-clock time (UTC) of each sample."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, int]] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.2):
            self.samples.append((time.time(), rss_bytes()))

    def peak(self, start: float, end: float) -> int:
        """The highest sample between ``start`` and ``end`` (epoch seconds), or 0."""
        return max((rss for at, rss in self.samples if start <= at <= end), default=0)


def task_peaks(run: Any, sampler: RssSampler, generate_s: float) -> list[tuple[str, float, int]]:
    """``(task or stage, wall s, peak RSS bytes)`` per task instance of ``run``, in the order they
    started (their start and end times from Airflow's metadata database; the dataset task split
    at ``generate_s`` into its generation and its oracle)."""
    rows = []
    for ti in sorted(run.get_task_instances(), key=lambda ti: ti.start_date or ti.end_date):
        if ti.start_date is None or ti.end_date is None:
            continue
        start, end = ti.start_date.timestamp(), ti.end_date.timestamp()
        name = ti.task_id + (f"[{ti.map_index}]" if ti.map_index >= 0 else "")
        for stage, stage_start, stage_end in _stages(name, start, end, generate_s):
            rows.append((stage, stage_end - stage_start, sampler.peak(stage_start, stage_end)))
    return rows


def _stages(name: str, start: float, end: float, generate_s: float) -> list[tuple[str, float, float]]:
    """A task's stages: the dataset task generates (its first ``generate_s`` seconds), then
    answers the queries (the oracle); every other task is one stage."""
    if not name.startswith("dataset"):
        return [(name, start, end)]
    split = min(end, start + generate_s)
    return [(f"{name} generate", start, split), (f"{name} oracle", split, end)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="questdb,timescaledb,postgres,influxdb")
    parser.add_argument("--scale", type=int, default=4000)
    parser.add_argument("--duration", default="1d")
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--queries-per-type", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tsbench-large-", dir="/var/tmp"))
    work.chmod(0o755)  # the servers run as their own users (PostgreSQL as postgres)
    sampler = RssSampler()
    logging.getLogger().setLevel(logging.INFO)
    dag = comparison_dag(work, TSBENCH_DATASETS=str(work / "datasets"), TSBENCH_STATE=str(work / "state"))
    from tsbench.airflow.params import DEFAULTS

    threading.Thread(target=sampler.run, daemon=True).start()
    conf = {
        **DEFAULTS,
        "scales": [args.scale],
        "duration": args.duration,
        "targets": args.targets.split(","),
        "trials": [args.trials],
        "queries_per_type": args.queries_per_type,
        "hot_runs": 1,
    }
    started = time.perf_counter()
    run = dag.test(run_conf=conf)
    wall = time.perf_counter() - started
    sampler.done.set()
    point = next(p for p in (work / "out" / "runs").iterdir() if p.is_dir()) / f"scale-{args.scale}"
    generate_s = json.loads((point / "run.json").read_text())["dataset"]["generate_s"]
    report(run.state, wall, task_peaks(run, sampler, generate_s), work, args)


def report(
    state: str, wall: float, tasks: list[tuple[str, float, int]], work: Path, args: argparse.Namespace
) -> None:
    print(f"DAG run {state}: {args.targets} at {args.scale} hosts × {args.duration}, trials {args.trials}")
    print(f"  DAG wall {wall:.1f} s; results under {work}")
    print(f"  {'task':<34} {'wall s':>8} {'peak RSS MiB':>12}")
    for name, seconds, peak in tasks:
        print(f"  {name:<34} {seconds:8.1f} {peak / 2**20:12.0f}")
    high_water = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"  process high-water mark (ru_maxrss): {high_water / 2**20:.0f} MiB")
    folder = next(p for p in (work / "out" / "runs").iterdir() if p.is_dir())
    point = folder / f"scale-{args.scale}"
    run_json = json.loads((point / "run.json").read_text())
    dataset = run_json["dataset"]
    print(
        f"  dataset: {dataset.get('rows_total'):,} rows, generated in {dataset.get('generate_s', 0):.1f} s;"
        f" oracle {run_json.get('oracle_s', 0):.1f} s"
    )
    for target in sorted((point / "targets").iterdir()):
        phases = {}
        for phase_file in sorted(target.glob("*.json")):
            body = json.loads(phase_file.read_text())
            if isinstance(body, dict) and "wall_s" in body:
                phases[phase_file.stem] = round(body["wall_s"], 1)
        load = json.loads((target / "load.json").read_text()) if (target / "load.json").is_file() else {}
        rate = load.get("median_rows_per_s")
        rate_text = f"{rate:,.0f} rows/s" if rate else "no load"
        ok = load.get("row_count_ok")
        print(f"  {target.name:<12} {rate_text:>18}, rows ok {ok}; phases (wall s) {phases}")


if __name__ == "__main__":
    main()
