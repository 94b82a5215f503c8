"""The Celery form, started the documented way (docs/team.md:
``TSBENCH_EXECUTOR=celery bash scripts/airflow_ui.sh``): PostgreSQL as the metadata DB, Redis as
the broker, two ``airflow celery worker`` processes with their own AIRFLOW_HOME, state root, results
root and dataset cache, and the run store in MinIO. Triggered and read through the REST API only.
The ``runtime: aws`` case provisions against moto's server (an AWS emulator: it creates instances,
volumes and security groups, but boots no machine)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil
import pytest
from integration.moto import FAKE_CREDENTIALS, REGION, leftovers, run_options
from scheduler.deployment import AirflowDeployment, airflow_ui

if TYPE_CHECKING:
    from integration.minio import MinioServer

pytest_plugins = ("integration.minio", "integration.moto")
pytestmark = pytest.mark.integration
DAG = "tsbench_comparison"
STATE_BASE = Path("/var/tmp/tsbench-tests")  # short: PostgreSQL's socket path limit
AWS_TARGETS = {  # two targets, each on its own (emulated) host
    "targets": ["questdb", "postgres"],
    "scales": [10],
    "duration": "6h",
    "queries_per_type": 1,
    "hot_runs": 1,
}
CANARY = "canary-questdb-password-93be1f"  # the database password the workers are given: must appear nowhere
AWS_CONNECTION = {
    "conn_type": "aws",
    "login": FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
    "password": FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    "extra": {"region_name": REGION},
}


@pytest.fixture(scope="module")
def celery(minio_server: MinioServer) -> Iterator[tuple[AirflowDeployment, str, Path]]:
    """The deployment, its run store's bucket and its TSBENCH_CELERY_VAR folder."""
    workdir = Path(tempfile.mkdtemp(prefix="tsbench-celery-"))
    var = STATE_BASE / f"celery-{uuid.uuid4().hex[:6]}"  # the metadata DB, the workers' state roots
    store = minio_server.new_bucket("runstore")
    env = {
        "TSBENCH_EXECUTOR": "celery",
        "TSBENCH_RUN_STORE": f"s3://{store}/team/runs",
        "TSBENCH_CELERY_VAR": str(var),
        "TSBENCH_NIGHTLY": "paused",
        # A killed worker's task is declared lost after 30 s without a heartbeat (default 300 s).
        "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": "30",
        # runtime aws: the Terraform providers from the machine's mirror, the deployment key every
        # worker derives a host's secrets from, AWS credentials (moto's) from an Airflow connection
        "TSBENCH_TF_PLUGIN_MIRROR": "/opt/tf-plugins",
        "TSBENCH_SECRET_KEY": uuid.uuid4().hex * 2,
        "AIRFLOW_CONN_TSBENCH_AWS": json.dumps(AWS_CONNECTION),
        "TSBENCH_QUESTDB_PASSWORD": CANARY,
        **minio_server.aws_environment(),
    }
    try:
        with airflow_ui(workdir, env) as running:
            yield running, store, var
    finally:
        shutil.rmtree(var, ignore_errors=True)
        shutil.rmtree(workdir, ignore_errors=True)  # the deployment's home: ~415 MB a run


def _workers_by_task(deployment: AirflowDeployment, run_id: str) -> dict[tuple[str, int], str]:
    """(task id, map index) → the worker whose own log folder holds that task's log."""
    found: dict[tuple[str, int], str] = {}
    for worker in sorted((deployment.home / "celery").glob("worker-*")):
        for log in (worker / "airflow" / "logs").glob(f"dag_id={DAG}/run_id={run_id}/task_id=*/**/*.log"):
            task = next(p.name.removeprefix("task_id=") for p in log.parents if p.name.startswith("task_id="))
            index = next(
                (
                    int(p.name.removeprefix("map_index="))
                    for p in log.parents
                    if p.name.startswith("map_index=")
                ),
                -1,
            )
            found[(task, index)] = worker.name
    return found


def _keys(minio_server: MinioServer, bucket: str) -> set[str]:
    pages = minio_server.client().get_paginator("list_objects_v2").paginate(Bucket=bucket)
    return {item["Key"] for page in pages for item in page.get("Contents", [])}


def _assert_no_worker_path_handed_on(deployment: AirflowDeployment, run_id: str, var: Path) -> None:
    """What a task hands the next (the XCom values later tasks take as arguments: the plan, the
    points, the branches) names no worker's folder — only run store URLs — so no task could read a
    path another worker wrote; and no XCom at all names a task's scratch copy (gone with the task)."""
    listed = deployment.get(f"/dags/{DAG}/dagRuns/{run_id}/taskInstances/~/xcomEntries", limit=1000)
    entries = listed["xcom_entries"]
    handed_on = {"validate_params", "points_of", "dataset", "branches"}
    assert handed_on <= {entry["task_id"] for entry in entries}, entries
    worker_roots = (str(deployment.home), str(var), str(deployment.results), "/tmp/", "/var/tmp/")
    urls: set[str] = set()
    for entry in entries:
        path = f"/dags/{DAG}/dagRuns/{run_id}/taskInstances/{entry['task_id']}/xcomEntries/{entry['key']}"
        text = json.dumps(deployment.get(path, map_index=entry["map_index"])["value"])
        where = f"{entry['task_id']}[{entry['map_index']}].{entry['key']}"
        assert "tsbench-task-" not in text, f"{where} named a scratch folder: {text[:500]}"
        if entry["task_id"] in handed_on:
            named = [root for root in worker_roots if root in text]
            assert not named, f"{where} handed on {named}: {text[:500]}"
            urls |= {entry["task_id"]} if "s3://" in text else set()
    assert urls == handed_on, f"handed on no run store URL: {handed_on - urls}"


def _assert_logs_in_the_ui(
    deployment: AirflowDeployment, run_id: str, instances: list[dict[str, Any]], keys: set[str]
) -> None:
    """Each load task's log, as the UI shows it (REST API), though the API server shares no disk
    with the workers and they serve no logs: read from the remote log folder in the bucket."""
    assert any(key.startswith("airflow-task-logs/") for key in keys), "no task log reached the bucket"
    for ti in [ti for ti in instances if ti["task_id"] == "benchmark.load"]:
        text = deployment.task_log(DAG, run_id, ti)
        target = ti["rendered_map_index"].split(" × ")[1]
        assert f"load {target} trial 1/1: done" in text and "rows/s" in text, text[-2000:]


def _assert_nothing_left_running(state: Path) -> None:
    """No local server's instance folder is left in a worker's state root (teardown ran wherever it
    ran). The aws runtime's own folder (``aws/``, left by this module's aws run) is not one: that
    test checks it keeps no host's state or secrets."""
    folders = [p.name for p in state.iterdir() if p.is_dir()] if state.is_dir() else []
    leftovers = [name for name in folders if name != "aws"]
    assert not leftovers, f"{state}: {leftovers}"


STATE_BUCKET = "tsbench-team-tfstate"


def _aws_conf(moto_url: str, ami: str, backend: Path) -> dict[str, Any]:
    return {
        **AWS_TARGETS,
        "runtime": "aws",
        "aws": run_options(moto_url, ami, max_parallel_hosts=2, backend_config=str(backend)),
    }


def _backend_file(folder: Path, moto_url: str) -> Path:
    """Terraform's S3 backend in moto's S3 (the team's state bucket), S3-native locking."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "backend.hcl"
    path.write_text(
        f'bucket = "{STATE_BUCKET}"\nregion = "{REGION}"\nuse_lockfile = true\nuse_path_style = true\n'
        "skip_credentials_validation = true\nskip_requesting_account_id = true\n"
        "skip_metadata_api_check = true\nskip_region_validation = true\n"
        f'endpoints = {{\n  s3 = "{moto_url}"\n  sts = "{moto_url}"\n  iam = "{moto_url}"\n}}\n'
    )
    return path


def _overlap(first: dict[str, Any], second: dict[str, Any]) -> float:
    """Seconds two task instances ran at the same time."""
    start = max(first["start_date"], second["start_date"])
    end = min(first["end_date"], second["end_date"])
    return max(0.0, (_instant(end) - _instant(start)))


def _instant(text: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def test_aws_hosts_of_two_targets_are_provisioned_in_parallel_and_both_destroyed(
    celery: tuple[AirflowDeployment, str, Path],
    minio_server: MinioServer,
    moto_url: str,
    aws_client: Any,
) -> None:
    """moto boots no machine, so neither host becomes ready: each provision fails after its apply,
    is not retried (the ready timeout is the run's own patience), and each teardown — on whichever
    worker — destroys its host from the remote state."""
    deployment, store, var = celery
    aws_client("s3").create_bucket(Bucket=STATE_BUCKET)
    backend = _backend_file(Path(tempfile.mkdtemp(prefix="tsbench-backend-")), moto_url)
    ami = aws_client("ec2").describe_images()["Images"][0]["ImageId"]
    run_id = deployment.trigger(DAG, _aws_conf(moto_url, ami, backend))
    run = deployment.wait_for_run(DAG, run_id)
    assert run["state"] == "failed"
    instances = {(ti["task_id"], ti["map_index"]): ti for ti in deployment.task_instances(DAG, run_id)}
    provisions = [ti for (task, _), ti in instances.items() if task == "benchmark.provision"]
    teardowns = [ti for (task, _), ti in instances.items() if task == "benchmark.teardown"]
    assert [ti["state"] for ti in provisions] == ["failed", "failed"], provisions
    for ti in provisions:  # (an apply failing for another reason is retried: moto, two applies at
        # once, once answered an ingress rule of a new security group with InvalidPermission.Duplicate)
        attempts = _attempt_logs(minio_server, store, run_id, ti)
        assert "not ready after" in attempts[-1], attempts[-1][-2000:]
        assert not any("not ready after" in log for log in attempts[:-1]), "a host never ready was retried"
    assert [ti["state"] for ti in teardowns] == ["success", "success"], teardowns
    together = _overlap(*provisions)
    assert together > 30, f"the two hosts were provisioned one after the other ({together:.0f} s together)"

    assert leftovers(aws_client, keep_buckets=frozenset({STATE_BUCKET})) == {
        "instances": [],
        "volumes": [],
        "security_groups": [],
        "key_pairs": [],
        "buckets": [],
    }
    states = _remote_states(aws_client)
    assert len(states) == 2 and all(not body["resources"] for body in states.values()), states
    for root in var.glob("*/worker-*/state"):
        kept = [
            p for p in root.rglob("*") if p.name in ("terraform.tfstate", "secrets.json", "instance.json")
        ]
        assert not kept, f"a worker kept a host's state or secrets locally: {kept}"
    _assert_failure_published(minio_server, store, run_id, deployment)


def _attempt_logs(minio_server: MinioServer, store: str, run_id: str, ti: dict[str, Any]) -> list[str]:
    """The task log of every attempt of task instance ``ti``, from the bucket the workers upload to."""
    client, logs = minio_server.client(), []
    for attempt in range(1, ti["try_number"] + 1):
        key = (
            f"airflow-task-logs/dag_id={DAG}/run_id={run_id}/task_id={ti['task_id']}/"
            f"map_index={ti['map_index']}/attempt={attempt}.log"
        )
        logs.append(client.get_object(Bucket=store, Key=key)["Body"].read().decode(errors="replace"))
    return logs


def _remote_states(aws_client: Any) -> dict[str, Any]:
    s3 = aws_client("s3")
    listed = s3.list_objects_v2(Bucket=STATE_BUCKET).get("Contents", [])
    return {
        item["Key"]: json.loads(s3.get_object(Bucket=STATE_BUCKET, Key=item["Key"])["Body"].read())
        for item in listed
        if item["Key"].endswith(".tfstate")
    }


def _assert_failure_published(
    minio_server: MinioServer, store: str, run_id: str, deployment: AirflowDeployment
) -> None:
    """Each target's failure and its host's end are in the run store, the report names the failure,
    and the database password appears in no object and no worker's log."""
    client = minio_server.client()
    keys = _keys(minio_server, store)
    records = sorted(k for k in keys if k.endswith("/cloud_instance.json"))
    folders = {k.split("/")[2] for k in records}
    assert len(records) == 2 and len(folders) == 1, records
    for key in records:
        body = json.loads(client.get_object(Bucket=store, Key=key)["Body"].read())
        assert body["state"]["stage"] == "destroyed", body
        error = json.loads(
            client.get_object(Bucket=store, Key=key.replace("cloud_instance", "error"))["Body"].read()
        )
        assert error["failed_phase"] == "provision" and "not ready" in error["error"], error
        assert "benchmark host i-" in error["error"] and "m5.large" in error["error"]
    folder = f"team/runs/{folders.pop()}"
    report = client.get_object(Bucket=store, Key=f"{folder}/report/report.html")["Body"].read().decode()
    assert "not ready" in report
    leaked = [
        k
        for k in keys
        if k.startswith(folder) and CANARY.encode() in client.get_object(Bucket=store, Key=k)["Body"].read()
    ]
    assert not leaked, leaked
    logs = (deployment.home / "celery").glob(f"worker-*/airflow/logs/dag_id={DAG}/run_id={run_id}/**/*.log")
    assert not [log for log in logs if CANARY in log.read_text(errors="replace")]


# Last in the module (it kills a worker). Two local targets on two workers; the worker running the
# load of the branch that takes the machine second is killed (nothing else of the run runs then:
# the first branch has torn down).
LOCAL_CONF = {
    "targets": ["questdb", "postgres"],
    "scales": [100],
    "duration": "1d",
    "queries_per_type": 1,
    "hot_runs": 1,
}
ROWS = {"cpu": 864_000}  # 100 hosts × 1 day at 10 s


def test_two_targets_on_two_workers_one_killed_while_loading(
    celery: tuple[AirflowDeployment, str, Path], minio_server: MinioServer
) -> None:
    """The run's tasks spread over both workers, which share no disk; the killed worker's load is
    retried on the other, loads its target exactly once, and the report is still published."""
    deployment, store, var = celery
    assert (deployment.home / "celery" / "secrets" / "sql_alchemy_conn").read_text().startswith("postgresql")
    health = deployment.get("/monitor/health")
    assert health["metadatabase"]["status"] == "healthy"
    _assert_workers_preloaded(deployment)
    run_id = deployment.trigger(DAG, LOCAL_CONF)
    killed, victim = _second_load(deployment, run_id)
    _wait_for_rows_sent(deployment, run_id, killed["map_index"], victim)
    killed_at = time.time()
    _kill_worker(deployment, victim)
    run = deployment.wait_for_run(DAG, run_id)
    instances = deployment.task_instances(DAG, run_id)
    states = {(ti["task_id"], ti["map_index"]): ti["state"] for ti in instances}
    assert run["state"] == "success", (states, deployment.log_path)

    where = _workers_by_task(deployment, run_id)
    ran = {key for key, state in states.items() if state == "success"}
    assert ran <= set(where), f"tasks without a log in any worker's own folder: {ran - set(where)}"
    before = {(ti["task_id"], ti["map_index"]) for ti in instances if _ended_before(ti, killed_at)}
    assert {where[key] for key in before & ran} == {"worker-1", "worker-2"}, where
    folder, keys = _assert_published(minio_server, store)
    _assert_retried_once(
        deployment, minio_server, store, run_id, instances, killed["map_index"], victim, folder
    )
    states_roots = list(var.glob("*/worker-*/state"))
    assert len(states_roots) == 2, states_roots
    for state in states_roots:
        _assert_nothing_left_running(state)
    _assert_logs_in_the_ui(deployment, run_id, instances, keys)
    _assert_no_worker_path_handed_on(deployment, run_id, var)


def _ended_before(ti: dict[str, Any], moment: float) -> bool:
    return bool(ti["end_date"]) and _instant(ti["end_date"]) < moment


def _assert_published(minio_server: MinioServer, store: str) -> tuple[str, set[str]]:
    """The run's folder in the run store (its key prefix), with the report and every phase, and
    the store's keys."""
    keys = _keys(minio_server, store)
    runs = {key.split("/")[2] for key in keys if key.startswith("team/runs/") and "/scale-100/" in key}
    assert len(runs) == 1, runs
    folder = f"team/runs/{runs.pop()}"
    assert {
        f"{folder}/report/report.html",
        f"{folder}/report/report.pdf",
        f"{folder}/validation.json",
    } <= keys, "the report was not published to the run store"
    for target in LOCAL_CONF["targets"]:
        for phase in ("provision", "load", "queries", "teardown"):
            assert f"{folder}/scale-100/targets/{target}/{phase}.json" in keys
    assert not [key for key in keys if "/leases/" in key], "a host lease was not given back"
    return folder, keys


def _assert_retried_once(
    deployment: AirflowDeployment,
    minio_server: MinioServer,
    store: str,
    run_id: str,
    instances: list[dict[str, Any]],
    index: int,
    victim: str,
    folder: str,
) -> None:
    """The killed load (map ``index``) ran a second try on the surviving worker and its target
    holds each row once (``instances``: the run's task instances once it ended)."""
    load = next(ti for ti in instances if (ti["task_id"], ti["map_index"]) == ("benchmark.load", index))
    assert load["try_number"] == 2, load
    survivor = ({"worker-1", "worker-2"} - {victim}).pop()
    retried = list(
        (deployment.home / "celery" / survivor / "airflow" / "logs").glob(
            f"dag_id={DAG}/run_id={run_id}/task_id=benchmark.load/map_index={index}/attempt=2.log"
        )
    )
    assert retried, f"the retried load did not run on {survivor}"
    target = load["rendered_map_index"].split(" × ")[1]  # rendered once the task has run
    record = f"{folder}/scale-100/targets/{target}/load.json"
    body = json.loads(minio_server.client().get_object(Bucket=store, Key=record)["Body"].read())
    assert body["row_count_ok"] is True
    assert [trial["row_counts"] for trial in body["trials"]] == [ROWS]  # loaded once


def _assert_workers_preloaded(deployment: AirflowDeployment) -> None:
    """Each worker's own process (which runs no task) loaded pyarrow: its task processes, forked
    from it, start with ``tsbench.airflow.preload``'s modules (``celery_config``)."""
    for pid_file in sorted((deployment.home / "celery" / "pids").glob("worker-*.pid")):
        mapped = psutil.Process(int(pid_file.read_text())).memory_maps()
        assert any("libarrow" in m.path for m in mapped), f"{pid_file.stem} did not preload pyarrow"


def _kill_worker(deployment: AirflowDeployment, worker: str) -> None:
    """SIGKILL a worker: its process group and every process started with its AIRFLOW_HOME."""
    own = str(deployment.home / "celery" / worker / "airflow")
    pid = int((deployment.home / "celery" / "pids" / f"{worker}.pid").read_text())
    victims = [p for p in psutil.process_iter() if _environ(p).get("AIRFLOW_HOME") == own]
    os.killpg(pid, signal.SIGKILL)
    for proc in victims:
        proc.kill()


def _environ(proc: psutil.Process) -> dict[str, str]:
    try:
        return proc.environ()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return {}


def _wait_for_rows_sent(
    deployment: AirflowDeployment, run_id: str, index: int, worker: str, timeout_s: float = 120
) -> None:
    """Until the load (map ``index``) on ``worker`` has started sending, as its live task log in the
    worker's own folder says, and then 0.5 s more: rows are arriving (a load of these 864,000 rows
    lasts over a second even on a fast machine), whatever the machine's speed."""
    logs = deployment.home / "celery" / worker / "airflow" / "logs"
    pattern = f"dag_id={DAG}/run_id={run_id}/task_id=benchmark.load/map_index={index}/attempt=1.log"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if any(": starting, " in log.read_text(errors="replace") for log in logs.glob(pattern)):
            time.sleep(0.5)
            return
        time.sleep(0.05)
    raise AssertionError(f"the load on {worker} never started sending")


def _second_load(
    deployment: AirflowDeployment, run_id: str, timeout_s: float = 900
) -> tuple[dict[str, Any], str]:
    """The load task of the branch that takes the machine second, once it runs after the other
    branch's teardown, and the worker running it."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        instances = deployment.task_instances(DAG, run_id)
        torn_down = {
            ti["map_index"]
            for ti in instances
            if ti["task_id"] == "benchmark.teardown" and ti["state"] == "success"
        }
        second = [
            ti
            for ti in instances
            if ti["task_id"] == "benchmark.load"
            and ti["state"] == "running"
            and torn_down - {ti["map_index"]}
        ]
        where = _workers_by_task(deployment, run_id)
        if second and ("benchmark.load", second[0]["map_index"]) in where:
            return second[0], where[("benchmark.load", second[0]["map_index"])]
        time.sleep(0.5)
    raise AssertionError(f"the second branch of run {run_id} never loaded")
