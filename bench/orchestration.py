"""Orchestration overhead: wall time of one comparison DAG run (``dag.test()``) minus the work the
library measured inside its tasks, at 100 hosts × 1 day.

    .venv/bin/python bench/orchestration.py [--targets questdb,timescaledb,postgres,influxdb]

Work measured inside tasks: dataset generation, oracle, every phase of every target (provision …
teardown, ``wall_s`` in each phase file), collect, validate, report, publish. Two figures:
overhead = DAG wall − all measured work (what Airflow adds: task start-up, scheduling loop, XCom,
lease polling), and DAG wall − database work only (it also counts dataset, oracle, validation and
report as overhead). Issue 13's target: overhead ≤ 10 % of the database work.

Before the run the process imports what a Celery worker imports before its first task
(``tsbench.airflow.preload``: the task modules, pyarrow, psycopg, DuckDB …), timed and printed apart,
so that both forms start their tasks from the same imports.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def comparison_dag(work: Path, dag_id: str = "tsbench_comparison", **environment: str) -> Any:
    """The comparison DAG ``dag_id`` (or a study's, ``tsbench_study_<name>``) for ``dag.test()``
    with Airflow's home and the run folders under ``work`` (``environment`` adds or overrides
    variables, e.g. the state root), its metadata DB migrated."""
    os.environ.update(
        AIRFLOW_HOME=str(work / "airflow"),
        AIRFLOW__CORE__DAGS_FOLDER=str(ROOT / "dags"),
        AIRFLOW__CORE__PLUGINS_FOLDER=str(ROOT / "plugins"),
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
        TSBENCH_RESULTS=str(work / "out" / "runs"),
        **environment,
    )
    sys.path.insert(0, str(ROOT / "plugins"))
    airflow = Path(sys.executable).with_name("airflow")
    subprocess.run([str(airflow), "db", "migrate"], check=True, capture_output=True)
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(dag_folder=str(ROOT / "dags")).get_dag(dag_id)


def phase_walls(folder: Path, scale: int) -> dict[str, float]:
    """Seconds each phase took inside the library (its files' ``wall_s``), summed over targets."""
    walls: dict[str, float] = {}
    for phase_file in (folder / f"scale-{scale}" / "targets").glob("*/*.json"):
        wall = json.loads(phase_file.read_text()).get("wall_s", 0.0)
        walls[phase_file.stem] = walls.get(phase_file.stem, 0.0) + wall
    return walls


def measured_work(folder: Path, scale: int) -> dict[str, Any]:
    """Seconds of work timed inside the tasks of the run in ``folder`` (a run folder with
    ``scale-<scale>/`` and ``steps.json``): ``database`` (every phase file's ``wall_s``),
    ``other`` (dataset + oracle + the post-run steps) and ``steps`` (those steps by name)."""
    point = folder / f"scale-{scale}"
    run_json = json.loads((point / "run.json").read_text())
    database = sum(phase_walls(folder, scale).values())
    steps = json.loads((folder / "steps.json").read_text())
    other = run_json["dataset"]["generate_s"] + run_json["oracle_s"] + sum(steps.values())
    return {"database": database, "other": other, "steps": steps}


def print_shares(wall: float, work: dict[str, Any]) -> None:
    """The wall time against the measured work: what Airflow (and its hand-offs) add."""
    print(f"  wall time                        {wall:8.1f} s")
    print(f"  database work (phases)           {work['database']:8.1f} s")
    print(f"  dataset + oracle + collect/validate/report/publish {work['other']:8.1f} s {work['steps']}")
    for label, rest in (
        ("overhead = wall − all measured", wall - work["database"] - work["other"]),
        ("wall − database work only", wall - work["database"]),
    ):
        print(
            f"  {label:<32} {rest:8.1f} s = {100 * rest / wall:.1f} % of wall, "
            f"{100 * rest / work['database']:.1f} % of database work"
        )


def task_breakdown(run: Any, folder: Path, scale: int) -> list[dict[str, Any]]:
    """Per task id of the DAG run: its task instances, their summed seconds (start → end), the
    reschedules (a waiting ``acquire_machine`` handing its turn back) and their seconds, and for a
    branch phase the seconds its phase files measured inside — so task time minus work shows
    what each kind of task costs around its work."""
    from airflow.models.taskinstance import TaskInstance
    from airflow.models.taskreschedule import TaskReschedule
    from airflow.utils.session import create_session

    measured = phase_walls(folder, scale)
    rows: dict[str, dict[str, Any]] = {}
    with create_session() as session:
        instances = session.query(TaskInstance).filter_by(dag_id=run.dag_id, run_id=run.run_id).all()
        for ti in instances:
            row = rows.setdefault(
                ti.task_id, {"task": ti.task_id, "n": 0, "task_s": 0.0, "resched": 0, "resched_s": 0.0}
            )
            row["n"] += 1
            if ti.start_date and ti.end_date:
                row["task_s"] += (ti.end_date - ti.start_date).total_seconds()
            for again in session.query(TaskReschedule).filter_by(ti_id=ti.id).all():
                row["resched"] += 1
                row["resched_s"] += (again.end_date - again.start_date).total_seconds()
    from tsbench.run.phases import PHASES
    from tsbench.run.pipeline import STEPS

    phases_of = {step.name: step.phases or (step.name,) for step in STEPS}
    file_of = {phase.name: phase.file for phase in PHASES}  # settle writes the footprint
    for row in rows.values():
        name = row["task"].rsplit(".", 1)[-1]
        files = [file_of.get(phase, phase) for phase in phases_of.get(name, (name,))]
        row["work_s"] = sum(measured.get(file, 0.0) for file in files)
    return sorted(rows.values(), key=lambda row: -row["task_s"])


def print_breakdown(rows: list[dict[str, Any]], wall: float) -> None:
    print(
        f"  {'task':<28} {'n':>3} {'task s':>8} {'work s':>8} {'task-work':>9} "
        f"{'resched':>7} {'resched s':>9}"
    )
    for row in rows:
        print(
            f"  {row['task']:<28} {row['n']:>3} {row['task_s']:8.1f} {row['work_s']:8.1f} "
            f"{row['task_s'] - row['work_s']:9.1f} {row['resched']:>7} {row['resched_s']:9.1f}"
        )
    inside = sum(row["task_s"] + row["resched_s"] for row in rows)
    print(f"  between tasks (wall − every task's and reschedule's time) {wall - inside:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="questdb,timescaledb,postgres,influxdb")
    parser.add_argument("--scale", type=int, default=100)
    parser.add_argument("--duration", default="1d")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tsbench-orch-"))
    dag = comparison_dag(work, TSBENCH_STATE=str(Path("/var/tmp/tsbench-orch") / work.name))
    from tsbench.airflow.params import DEFAULTS

    conf = {**DEFAULTS, "scales": [args.scale], "duration": args.duration, "targets": args.targets.split(",")}
    importing = time.perf_counter()
    import tsbench.airflow.preload  # noqa: F401  (a Celery worker's imports before its first task)

    preload_s = time.perf_counter() - importing
    print(f"  imports before the run (a worker's preload) {preload_s:.1f} s")
    started = time.perf_counter()
    run = dag.test(run_conf=conf)
    wall = time.perf_counter() - started
    folder = next(p for p in (work / "out" / "runs").iterdir() if p.is_dir())
    figures = measured_work(folder, args.scale)
    print(f"DAG run {run.state}: {args.targets} at {args.scale} hosts × {args.duration}")
    print_shares(wall, figures)
    breakdown = task_breakdown(run, folder, args.scale)
    print_breakdown(breakdown, wall)
    if args.json:
        args.json.write_text(
            json.dumps(
                {"state": str(run.state), "wall": wall, "preload_s": preload_s, "tasks": breakdown, **figures}
            )
        )


if __name__ == "__main__":
    main()
