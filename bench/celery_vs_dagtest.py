"""The comparison DAG under the Celery form against ``dag.test()`` on the same machine (issue 13).

    .venv/bin/python bench/celery_vs_dagtest.py [--targets questdb,timescaledb,postgres,influxdb]

Both forms run the same conf (4 local targets, 100 hosts × 1 day, the DAG's defaults otherwise), one
after the other (Celery first), nothing else running:

- ``dag.test()``: ``bench/orchestration.py`` in its own process (every task in that process);
- Celery: ``TSBENCH_EXECUTOR=celery scripts/airflow_ui.sh`` (PostgreSQL metadata DB, Redis, two
  workers that share no folder), the run store in a MinIO bucket, triggered through the REST API.

Printed per form: wall time, the work measured inside tasks (database phases; dataset, oracle and
post-run steps), and what is left — Airflow's share, which under Celery also holds the workspaces'
transfers to and from the run store. For Celery also, per task instance, the latency from
``scheduled`` to ``running`` (scheduled_when → start_date) and from ``queued`` to ``running``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "plugins"), str(ROOT / "bench")]

from integration.minio import MinioServer, running_minio  # noqa: E402
from orchestration import measured_work, print_shares  # noqa: E402
from scheduler.deployment import airflow_ui  # noqa: E402

DAG = "tsbench_comparison"


def _stamp(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def dag_test_side(targets: str, scale: int, duration: str, out: Path) -> dict[str, Any]:
    """``bench/orchestration.py`` in its own process; its figures."""
    script = ROOT / "bench" / "orchestration.py"
    arguments = ["--targets", targets, "--scale", str(scale), "--duration", duration, "--json", str(out)]
    subprocess.run([sys.executable, str(script), *arguments], check=True)
    return json.loads(out.read_text())


def _pull_run(minio: MinioServer, bucket: str, local: Path) -> Path:
    """The run's folder, copied from the run store into ``local``."""
    os.environ.update(minio.aws_environment())
    from tsbench.results.workspace import pull

    listed = minio.client().list_objects_v2(Bucket=bucket, Prefix="runs/")["Contents"]
    # (the first keys may be pyarrow's directory markers, "runs/" and "runs/<run>/")
    name = next(item["Key"].split("/")[1] for item in listed if item["Key"].endswith("/comparison.json"))
    pull(f"s3://{bucket}/runs/{name}", local / name)
    return local / name


def component_cpu_s(home: Path) -> dict[str, float]:
    """CPU-s (user + system) used so far by each of the deployment's processes started from
    ``$AIRFLOW_HOME/celery/pids/NAME.pid`` (scheduler, API server, DAG processor, triggerer, Redis,
    workers), with their live descendants and the children they reaped."""
    import psutil

    used = {}
    for pid_file in sorted((home / "celery" / "pids").glob("*.pid")):
        try:
            root = psutil.Process(int(pid_file.read_text()))
            tree = [root, *root.children(recursive=True)]
        except (psutil.Error, ValueError):
            continue
        total = 0.0
        for process in tree:
            try:
                times = process.cpu_times()
            except psutil.Error:
                continue
            total += times.user + times.system + times.children_user + times.children_system
        used[pid_file.stem] = total
    return used


def print_component_cpu(before: dict[str, float], after: dict[str, float], wall_s: float) -> None:
    print("  CPU-s of the deployment's processes during the run (workers include their tasks):")
    for name in sorted(after):
        used = after[name] - before.get(name, 0.0)
        print(f"    {name:<14} {used:8.1f} CPU-s = {100 * used / wall_s:5.1f} % of one core")


def celery_side(
    conf: dict[str, Any], work: Path
) -> tuple[dict[str, Any], list[dict[str, Any]], Path, tuple[dict[str, float], dict[str, float]]]:
    """One run under the Celery form: (the run, its task instances, its run folder pulled here,
    the deployment's processes' CPU-s before and after the run)."""
    for folder in ("minio", "deployment"):
        (work / folder).mkdir(parents=True, exist_ok=True)
    with running_minio(work / "minio") as minio:
        bucket = minio.new_bucket("runstore")
        env = {
            "TSBENCH_EXECUTOR": "celery",
            "TSBENCH_RUN_STORE": f"s3://{bucket}/runs",
            "TSBENCH_CELERY_VAR": f"/var/tmp/tsbench-bench/celery-{uuid.uuid4().hex[:6]}",
            "TSBENCH_NIGHTLY": "paused",
            **minio.aws_environment(),
        }
        with airflow_ui(work / "deployment", env) as deployment:
            before = component_cpu_s(deployment.home)
            run_id = deployment.trigger(DAG, conf)
            run = deployment.wait_for_run(DAG, run_id, timeout_s=3600)
            after = component_cpu_s(deployment.home)
            instances = deployment.task_instances(DAG, run_id)
        for ti in instances:
            ti["function_span"] = function_span(minio.client(), bucket, run_id, ti)
        return run, instances, _pull_run(minio, bucket, work / "pulled"), (before, after)


def function_span(s3: Any, bucket: str, run_id: str, ti: dict[str, Any]) -> tuple[float, float] | None:
    """When the task's own function ran (epoch s), from its task log in the bucket the workers
    upload to: from the end of Airflow's pre-execute group (the DAG file parsed, the context
    built) to the start of its post-execute group (XCom push, state); None without a log."""
    mapped = f"map_index={ti['map_index']}/" if ti["map_index"] >= 0 else ""
    key = (
        f"airflow-task-logs/dag_id={DAG}/run_id={run_id}/task_id={ti['task_id']}/{mapped}"
        f"attempt={ti['try_number']}.log"
    )
    try:
        text = s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode()
    except s3.exceptions.NoSuchKey:
        return None
    start = end = None
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("event") == "::endgroup::" and start is None:
            start = _stamp(entry["timestamp"])
        elif entry.get("event") == "::group::Post Execute":
            end = _stamp(entry["timestamp"])
    return (start, end) if start is not None and end is not None else None


def print_latencies(instances: list[dict[str, Any]]) -> None:
    """Per task instance: scheduled → running and queued → running (s), then their spread."""
    rows = []
    for ti in sorted(instances, key=lambda ti: ti["start_date"] or ""):
        if not (ti["start_date"] and ti["scheduled_when"] and ti["queued_when"]):
            continue
        start = _stamp(ti["start_date"])
        rows.append((start - _stamp(ti["scheduled_when"]), start - _stamp(ti["queued_when"]), ti))
    print(f"  {'task':<36} {'map':>3} {'try':>3} {'sched→run s':>11} {'queued→run s':>12} {'ran s':>7}")
    for scheduled, queued, ti in rows:
        task = f"{ti['task_id']:<36} {ti['map_index']:>3} {ti['try_number']:>3}"
        print(f"  {task} {scheduled:11.2f} {queued:12.2f} {ti['duration'] or 0:7.1f}")
    for label, index in (("scheduled → running", 0), ("queued → running", 1)):
        values = sorted(row[index] for row in rows)
        print(
            f"  {label:<20} median {statistics.median(values):.2f} s, "
            f"p90 {values[int(0.9 * (len(values) - 1))]:.2f} s, max {values[-1]:.2f} s, "
            f"sum {sum(values):.1f} s over {len(values)} task instances"
        )


def print_timeline(run: dict[str, Any], instances: list[dict[str, Any]], work: dict[str, Any]) -> None:
    """The run's wall split by its task instances' own start/end times: seconds when no task ran
    (the run's start until its first task, the hops between tasks, the last task until the run's
    end) and seconds when some task ran, less the work measured inside them."""
    spans = [
        (_stamp(ti["start_date"]), _stamp(ti["end_date"]))
        for ti in instances
        if ti["start_date"] and ti["end_date"]
    ]
    covered = _union(spans)
    wall = _stamp(run["end_date"]) - _stamp(run["start_date"])
    inside = covered - work["database"] - work["other"]
    print(f"  no task running (hops, run start/end)  {wall - covered:6.1f} s")
    print(f"  some task running, outside measured work {inside:6.1f} s over {len(spans)} task instances")
    in_functions = _union(_function_spans(instances))
    airflow, glue = wall - in_functions, in_functions - work["database"] - work["other"]
    print(
        f"  Airflow's own (wall − time in tsbench's task functions) {airflow:6.1f} s = "
        f"{100 * airflow / work['database']:.1f} % of database work"
    )
    print(
        f"  tsbench's glue in its task functions (run store pull/push, lease, records) {glue:6.1f} s = "
        f"{100 * glue / work['database']:.1f} %"
    )


def _function_spans(instances: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """Each task instance's function span; a branch's ``acquire_machine`` counts only from the end
    of the previous branch's teardown (before that it waits beside that branch's tasks)."""
    spans = {(ti["task_id"], ti["map_index"]): ti.get("function_span") for ti in instances}
    chosen = []
    for (task, index), span in spans.items():
        if span is None:
            continue
        start, end = span
        previous = spans.get(("benchmark.teardown", index - 1))
        if task == "benchmark.acquire_machine" and previous:
            start = max(start, previous[1])
        chosen.append((start, max(start, end)))
    return chosen


def _union(spans: list[tuple[float, float]]) -> float:
    """Seconds covered by at least one of ``spans``."""
    covered, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        covered += max(0.0, end - max(start, reach))
        reach = max(reach, end)
    return covered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="questdb,timescaledb,postgres,influxdb")
    parser.add_argument("--scale", type=int, default=100)
    parser.add_argument("--duration", default="1d")
    parser.add_argument("--celery-only", action="store_true", help="skip the dag.test() side")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tsbench-celery-bench-"))
    from tsbench.airflow.params import DEFAULTS

    conf = {**DEFAULTS, "scales": [args.scale], "duration": args.duration, "targets": args.targets.split(",")}
    run, instances, folder, cpu = celery_side(conf, work)
    (work / "celery_run.json").write_text(json.dumps({"run": run, "task_instances": instances}))
    celery_wall = _stamp(run["end_date"]) - _stamp(run["start_date"])
    print(f"\n{args.targets} at {args.scale} hosts × {args.duration}")
    if not args.celery_only:
        local = dag_test_side(args.targets, args.scale, args.duration, work / "dag_test.json")
        print(f"dag.test(): run {local['state']}")
        print_shares(local["wall"], local)
    print(f"Celery form, 2 workers, MinIO run store: run {run['state']}")
    celery_work = measured_work(folder, args.scale)
    print_shares(celery_wall, celery_work)
    print_timeline(run, instances, celery_work)
    if not args.celery_only:
        print(f"  wall ratio Celery / dag.test()     {celery_wall / local['wall']:.2f}")
    print_component_cpu(*cpu, celery_wall)
    print_latencies(instances)


if __name__ == "__main__":
    main()
