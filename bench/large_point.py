"""One large point through the comparison DAG (``dag.test()``, every task in this process): per task,
the orchestrating process's wall and CPU time, peak RSS and the disk high-water mark, and each
target's phases as measured.

    .venv/bin/python bench/large_point.py [--scale 4000] [--duration 1d] [--trials 1] [--json PATH]

Per task (``bench/process_sampler.py``, every 0.2 s; each task's start and end from Airflow's
metadata database; the dataset task split at its generation time into generation and oracle):
peak RSS of this process, CPU-seconds of it and of its Python children (the wire encoders), and the
disk used on the work folder's filesystem above its level at the start, at its highest. Database
servers are other processes and not counted. The process's own high-water mark (``ru_maxrss``) is
printed at the end. Nothing in the pipeline may hold a whole dataset in memory: the peak must stay
≤ 2 GB. ``--json`` writes every figure for ``bench/stage_costs.py``.
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from orchestration import comparison_dag
from process_sampler import ProcessSampler, Window

ROOT = Path(__file__).resolve().parents[1]


def task_windows(run: Any, sampler: ProcessSampler, generate_s: float) -> list[tuple[str, Window]]:
    """``(task or stage, its cost)`` per task instance of ``run``, in the order they started."""
    rows = []
    for ti in sorted(run.get_task_instances(), key=lambda ti: ti.start_date or ti.end_date):
        if ti.start_date is None or ti.end_date is None:
            continue
        start, end = ti.start_date.timestamp(), ti.end_date.timestamp()
        label = ti.rendered_map_index or str(ti.map_index)
        name = ti.task_id + (f"[{label}]" if ti.map_index >= 0 else "")
        for stage, stage_start, stage_end in _stages(name, start, end, generate_s):
            rows.append((stage, sampler.window(stage_start, stage_end)))
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
    parser.add_argument("--json", type=Path, help="write every figure here (for bench/stage_costs.py)")
    parser.add_argument(
        "--work", type=Path, help="an empty folder for the run (default: a new one in /var/tmp)"
    )
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="tsbench-large-", dir="/var/tmp"))
    work.mkdir(parents=True, exist_ok=True)
    work.chmod(0o755)  # the servers run as their own users (PostgreSQL as postgres)
    logging.getLogger().setLevel(logging.INFO)
    dag = comparison_dag(work, TSBENCH_DATASETS=str(work / "datasets"), TSBENCH_STATE=str(work / "state"))
    from tsbench.airflow.params import DEFAULTS

    sampler = ProcessSampler(work).start()
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
    sampler.stop()
    point = next(p for p in (work / "out" / "runs").iterdir() if p.is_dir()) / f"scale-{args.scale}"
    generate_s = json.loads((point / "run.json").read_text())["dataset"]["generate_s"]
    figures = measured(run.state, wall, task_windows(run, sampler, generate_s), point, sampler)
    report(figures, work, args)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


def measured(
    state: str, wall: float, tasks: list[tuple[str, Window]], point: Path, sampler: ProcessSampler
) -> dict[str, Any]:
    """Every figure of the run: the DAG's, each task's cost, the dataset's and each target's."""
    run_json = json.loads((point / "run.json").read_text())
    dataset = run_json["dataset"]
    return {
        "state": state,
        "wall_s": wall,
        "ru_maxrss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "disk_high_bytes": max(s.disk_used_bytes for s in sampler.samples) - sampler.baseline_disk,
        "rows": dataset.get("rows_total"),
        "generate_s": dataset.get("generate_s"),
        "oracle_s": run_json.get("oracle_s"),
        "dataset_bytes": folder_bytes(Path(dataset["path"]), skip="wire"),
        "tasks": [{"task": name, **asdict(window)} for name, window in tasks],
        "targets": {t.name: target_facts(t) for t in sorted((point / "targets").iterdir())},
    }


def folder_bytes(folder: Path, skip: str = "") -> int:
    """Bytes of the files under ``folder`` (its top-level ``skip`` folder left out)."""
    return sum(
        f.stat().st_size
        for f in folder.rglob("*")
        if f.is_file() and not (skip and f.relative_to(folder).parts[0] == skip)
    )


def target_facts(folder: Path) -> dict[str, Any]:
    """A target's phases' wall seconds, its load rate and row check, its wire bodies and footprint."""
    records = {f.stem: json.loads(f.read_text()) for f in sorted(folder.glob("*.json"))}
    records = {name: body for name, body in records.items() if isinstance(body, dict)}
    load = records.get("load", {})
    wire = load.get("wire") or (records.get("prepare") or {}).get("wire") or {}  # a stream's: the load's
    footprint = records.get("footprint", {})
    return {
        "phases_wall_s": {name: body["wall_s"] for name, body in records.items() if "wall_s" in body},
        "rows_per_s": load.get("median_rows_per_s"),
        "rows_ok": load.get("row_count_ok"),
        "wire_bytes": wire.get("bytes_stored"),
        "wire_encode_s": wire.get("encode_s"),
        "wire_encode_cpu_s": wire.get("encode_cpu_s"),
        "wire_streamed": bool(wire.get("streamed")),
        "footprint_bytes": (footprint.get("after_load") or {}).get("bytes"),
        "answer_checks": (records.get("queries") or {}).get("answer_checks"),
    }


def report(figures: dict[str, Any], work: Path, args: argparse.Namespace) -> None:
    print(
        f"DAG run {figures['state']}: {args.targets} at {args.scale} hosts × {args.duration}, "
        f"trials {args.trials}"
    )
    print(f"  DAG wall {figures['wall_s']:.1f} s; results under {work}")
    print(
        f"  {'task':<34} {'wall s':>8} {'CPU s':>8} {'peak RSS MiB':>12} {'disk high MB':>12} "
        f"{'children RSS MiB':>16}"
    )
    for task in figures["tasks"]:
        print(
            f"  {task['task']:<34} {task['wall_s']:8.1f} {task['cpu_s']:8.1f} "
            f"{task['peak_rss_bytes'] / 2**20:12.0f} {task['disk_high_bytes'] / 1e6:12,.0f} "
            f"{task.get('peak_children_rss_bytes', 0) / 2**20:16.0f}"
        )
    print(f"  process high-water mark (ru_maxrss): {figures['ru_maxrss_bytes'] / 2**20:.0f} MiB")
    print(f"  disk high-water mark above the start: {figures['disk_high_bytes'] / 1e6:,.0f} MB")
    print(
        f"  dataset: {figures['rows']:,} rows, {figures['dataset_bytes'] / 1e6:,.0f} MB, generated in "
        f"{figures['generate_s'] or 0:.1f} s; oracle {figures['oracle_s'] or 0:.1f} s"
    )
    for name, facts in figures["targets"].items():
        rate = facts["rows_per_s"]
        rate_text = f"{rate:,.0f} rows/s" if rate else "no load"
        print(
            f"  {name:<12} {rate_text:>18}, rows ok {facts['rows_ok']}; phases (wall s) "
            f"{ {k: round(v, 1) for k, v in facts['phases_wall_s'].items()} }"
        )


if __name__ == "__main__":
    main()
