"""The product under a real scheduler (LocalExecutor, metadata DB, API server), as users run it:
started by ``scripts/airflow_ui.sh``, triggered and read through the REST API. ``dag.test()`` runs
tasks in-process without an executor, so only tests like these can see scheduler races."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

import pytest

from scheduler.deployment import AirflowDeployment
from tsbench.results.files import read_json

pytestmark = pytest.mark.integration
DAG = "tsbench_comparison"
TWO_TARGETS = {
    "targets": ["questdb", "postgres"],
    "scales": [10],
    "duration": "6h",
    "queries_per_type": 2,
    "hot_runs": 1,
}


# What Airflow logs when a DAG file's parse times out: in a task process, in the DAG processor.
PARSE_TIMED_OUT = ("DagBag import timeout", "exceeding the timeout")


def _stamp(text: str | None) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() if text else float("nan")


def test_starting_the_ui_runs_nothing_unasked(deployment: AirflowDeployment) -> None:
    dags = {dag["dag_id"]: dag for dag in deployment.get("/dags")["dags"]}
    assert dags["tsbench_nightly"]["is_paused"] is False, "the nightly is created switched on"
    assert dags[DAG]["is_paused"] is False, "the on-demand DAG is created switched on"
    next_run = dags["tsbench_nightly"]["next_dagrun_run_after"]
    assert next_run and _stamp(next_run) > time.time(), f"the nightly's next run is not ahead: {next_run}"
    time.sleep(30)  # several scheduler loops (the scheduler is healthy, both DAGs are on)
    runs = deployment.get("/dags/~/dagRuns")
    assert runs["total_entries"] == 0, [(r["dag_id"], r["run_type"]) for r in runs["dag_runs"]]


def _written(path: Path) -> float:
    return path.stat().st_mtime


def _branch_windows(results: Path) -> dict[str, tuple[float, float]]:
    """Per target folder of the run: from its ``acquire_machine`` record (written once the lease is
    taken) to its ``teardown`` record (written before the lease is given back). The tasks' end
    dates would not do: a teardown task still reports its end after the release, by which time the
    next branch may have taken the lease and ended its own task."""
    return {
        folder.name: (_written(folder / "acquire_machine.json"), _written(folder / "teardown.json"))
        for folder in results.glob("*/scale-*/targets/*")
        if (folder / "teardown.json").is_file()
    }


def test_two_targets_through_the_rest_api(deployment: AirflowDeployment) -> None:
    run_id = deployment.trigger(DAG, TWO_TARGETS)
    deployment.runs["two_targets"] = run_id  # the browser test looks at it
    run = deployment.wait_for_run(DAG, run_id)
    instances = deployment.task_instances(DAG, run_id)
    states = {(ti["task_id"], ti["rendered_map_index"]): ti["state"] for ti in instances}
    assert run["state"] == "success", (states, deployment.log_path)

    loads = [ti for ti in instances if ti["task_id"] == "benchmark.load"]
    assert sorted(ti["rendered_map_index"] for ti in loads) == ["scale-10 × postgres", "scale-10 × questdb"]
    for ti in loads:
        text = deployment.task_log(DAG, run_id, ti)
        target = ti["rendered_map_index"].split(" × ")[1]
        assert f"load {target} trial 1/1: done" in text and "rows/s" in text, text[-2000:]
        assert f"{target}: row counts checked" in text, text[-2000:]

    log_lines = deployment.log_path.read_text().splitlines()
    timeouts = [line for line in log_lines if any(m in line for m in PARSE_TIMED_OUT)]
    assert not timeouts, f"a DAG file's parse timed out (its tasks stall until a parse succeeds): {timeouts}"
    noise = [line for line in log_lines if "XCom not found" in line]
    assert not [line for line in noise if run_id in line], noise

    windows = sorted(_branch_windows(deployment.results).values())
    assert len(windows) == 2
    assert windows[0][1] <= windows[1][0], f"two branches held the machine at once: {windows}"

    folders = [p for p in deployment.results.iterdir() if p.is_dir()]
    assert len(folders) == 1, folders
    folder = folders[0]
    assert read_json(folder / "validation.json")["success"] is True
    assert (folder / "report" / "report.pdf").read_bytes()[:5] == b"%PDF-"
    latest = deployment.results.parent / "latest-tsbench_comparison"
    assert (latest / "RUN").read_text().strip() == folder.name
    assert not (deployment.results.parent / "latest").exists(), "an ad-hoc run replaced the nightly's latest/"


def test_a_bad_trigger_names_every_bad_field_at_once(deployment: AirflowDeployment) -> None:
    bad = {"targets": ["nosuchdb"], "scales": [0], "workers": [0], "duration": "forever", "hot_runs": 0}
    run_id = deployment.trigger(DAG, bad)
    deployment.runs["bad"] = run_id
    run = deployment.wait_for_run(DAG, run_id, timeout_s=300)
    assert run["state"] == "failed"
    instances = deployment.task_instances(DAG, run_id)
    validate = next(ti for ti in instances if ti["task_id"] == "validate_params")
    assert validate["state"] == "failed"
    text = deployment.task_log(DAG, run_id, validate)
    reason = text[text.index("invalid run parameters") :]  # logged last, before the traceback
    for field in ("targets", "scales (0)", "workers (0)", "duration", "hot_runs"):
        assert f"  {field}:" in reason, (field, text[-3000:])
    assert not any(ti["task_id"].startswith("benchmark.") and ti["state"] == "running" for ti in instances)
