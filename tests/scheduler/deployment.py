"""Airflow as users run it: ``bash scripts/airflow_ui.sh`` (standalone: API server, scheduler, DAG
processor and triggerer; LocalExecutor; the SQLite metadata DB under its own AIRFLOW_HOME), reached
only through its REST API and UI — never through ``dag.test()``.

Results, datasets and server state go to a temporary folder; the API listens on a free loopback
port. The whole process group is stopped at the end, whatever happened.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import requests

ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT_S = 600  # first start on a fresh clone runs setup_all.sh (installs are cached per machine)
FINISHED = {"success", "failed"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class AirflowDeployment:
    """A running deployment: its REST API (authenticated as the generated admin) and its folders."""

    base_url: str
    home: Path
    results: Path
    log_path: Path
    username: str = "admin"
    password: str = ""
    session: requests.Session = field(default_factory=requests.Session)
    runs: dict[str, str] = field(default_factory=dict)  # name → run id, for tests that come later

    def api(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        return self.session.request(method, f"{self.base_url}/api/v2{path}", timeout=30, **kwargs)

    def get(self, path: str, **params: Any) -> Any:
        response = self.api("GET", path, params=params)
        response.raise_for_status()
        return response.json()

    def login(self) -> None:
        """The admin password Airflow generated into AIRFLOW_HOME → a JWT for the REST API."""
        generated = self.home / "simple_auth_manager_passwords.json.generated"
        self.password = json.loads(generated.read_text())[self.username]
        response = requests.post(
            f"{self.base_url}/auth/token",
            json={"username": self.username, "password": self.password},
            timeout=30,
        )
        response.raise_for_status()
        self.session.headers["Authorization"] = "Bearer " + response.json()["access_token"]

    def trigger(self, dag_id: str, conf: dict[str, Any]) -> str:
        response = self.api("POST", f"/dags/{dag_id}/dagRuns", json={"logical_date": None, "conf": conf})
        assert response.status_code == 200, response.text
        return response.json()["dag_run_id"]

    def wait_for_run(self, dag_id: str, run_id: str, timeout_s: float = 1200) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while True:
            run = self.get(f"/dags/{dag_id}/dagRuns/{run_id}")
            if run["state"] in FINISHED:
                return run
            if time.monotonic() >= deadline:
                stalled = self.stall_report(dag_id, run_id)
                raise AssertionError(f"run {run_id} still {run['state']} after {timeout_s} s; {stalled}")
            time.sleep(3)

    def import_errors(self) -> list[str]:
        """The DAG files the DAG processor failed to parse, with its message (a file that fails
        registers no DAG, and the scheduler schedules none of its tasks until it parses again)."""
        body = self.get("/importErrors", limit=100)
        return [f"{e['filename']}: {e['stack_trace'][-300:]}" for e in body["import_errors"]]

    def stall_report(self, dag_id: str, run_id: str) -> str:
        """Why a run may be stuck: its unfinished task instances and the DAG files' import errors."""
        pending = [
            f"{ti['task_id']}[{ti['rendered_map_index'] or ti['map_index']}]={ti['state']}"
            for ti in self.task_instances(dag_id, run_id)
            if ti["state"] not in {"success", "failed", "skipped", "upstream_failed"}
        ]
        return f"unfinished tasks: {pending}; import errors: {self.import_errors()}; see {self.log_path}"

    def task_instances(self, dag_id: str, run_id: str) -> list[dict[str, Any]]:
        body = self.get(f"/dags/{dag_id}/dagRuns/{run_id}/taskInstances", limit=1000)
        return body["task_instances"]

    def task_log(self, dag_id: str, run_id: str, ti: dict[str, Any]) -> str:
        """The task instance's log as text (its newest try), fetched through the REST API."""
        path = f"/dags/{dag_id}/dagRuns/{run_id}/taskInstances/{ti['task_id']}/logs/{ti['try_number']}"
        params = {"map_index": ti["map_index"], "full_content": True}
        response = self.api("GET", path, params=params, headers={"Accept": "application/json"})
        response.raise_for_status()
        lines = []
        for entry in response.json()["content"]:
            if not isinstance(entry, dict):
                lines.append(str(entry))
                continue
            lines.append(entry.get("event", ""))
            lines += [f"{e['exc_type']}: {e['exc_value']}" for e in entry.get("error_detail") or []]
        return "\n".join(lines)


def _execution_api_warmed(deployment: AirflowDeployment) -> bool:
    """The deployment's scripts sent their warm-up request into the task execution API (its first
    request builds Cadwyn's versioned routes and blocks the API server for seconds; unwarmed, the
    first task's start call timed out and failed a run in CI)."""
    logs = [deployment.log_path, deployment.home / "celery" / "logs" / "api-server.log"]
    return any("path=/execution/health" in log.read_text(errors="replace") for log in logs if log.is_file())


def _wait_until_healthy(deployment: AirflowDeployment, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        assert process.poll() is None, (
            f"airflow_ui.sh exited ({process.returncode}); see {deployment.log_path}"
        )
        try:
            health = requests.get(f"{deployment.base_url}/api/v2/monitor/health", timeout=5).json()
            if (
                health.get("scheduler", {}).get("status") == "healthy"
                and (deployment.home / "simple_auth_manager_passwords.json.generated").is_file()
                and _execution_api_warmed(deployment)
            ):
                return
        except (requests.ConnectionError, requests.Timeout, ValueError):
            pass
        time.sleep(2)
    raise AssertionError(
        f"Airflow not healthy (or its execution API never warmed) after {READY_TIMEOUT_S} s;"
        f" see {deployment.log_path}"
    )


def _wait_until_parsed(deployment: AirflowDeployment, process: subprocess.Popen) -> None:
    """The DAG processor registered the DAGs (its first parse; nothing registers them sooner)."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        assert process.poll() is None, f"airflow_ui.sh exited ({process.returncode})"
        listed = {dag["dag_id"] for dag in deployment.get("/dags", limit=100)["dags"]}
        if {"tsbench_comparison", "tsbench_nightly"} <= listed:
            return
        time.sleep(2)
    raise AssertionError(f"the DAGs were not registered after {READY_TIMEOUT_S} s; see {deployment.log_path}")


def _stragglers(home: Path) -> list[psutil.Process]:
    """Processes of this deployment that left its process group (task supervisors may; the Celery
    form's components run in their own groups, its workers with an AIRFLOW_HOME below ``home``)."""
    found = []
    for proc in psutil.process_iter():
        try:
            if (proc.environ().get("AIRFLOW_HOME") or "/").startswith(str(home)):  # workers: below
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def _stop(process: subprocess.Popen, home: Path) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
    # Members that outlived the script: LocalExecutor's workers stayed idle, orphaned (found after a
    # suite: 8 of them, ~145 MB each; setproctitle hides their environment from _stragglers).
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    for proc in _stragglers(home):
        proc.kill()


@contextmanager
def airflow_ui(workdir: Path, extra_env: dict[str, str] | None = None) -> Iterator[AirflowDeployment]:
    """Start ``scripts/airflow_ui.sh`` the documented way (docs/operating.md), with its own
    AIRFLOW_HOME under ``workdir``."""
    port = _free_port()
    base_url = f"http://127.0.0.1:{port}"
    home, results = workdir / "airflow", workdir / "out" / "runs"
    inherited = {  # the test process's connections stay out; ``extra_env`` may name its own
        key: value
        for key, value in os.environ.items()
        if not key.startswith("AIRFLOW_CONN_") and key != "AIRFLOW__CORE__UNIT_TEST_MODE"
    }
    env = {
        **inherited,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__API__PORT": str(port),
        "AIRFLOW__API__BASE_URL": base_url,
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{base_url}/execution/",
        "TSBENCH_RESULTS": str(results),
        "TSBENCH_DATASETS": str(workdir / "datasets"),
        "TSBENCH_STATE": str(workdir / "state"),
        # Nobody edits the DAG files while the tests run: parse them once, not every 30 s (the
        # DAG processor's re-parsing is CPU taken from the servers on a 2-core machine).
        "AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL": "600",
        **(extra_env or {}),
    }
    deployment = AirflowDeployment(base_url, home, results, workdir / "airflow_ui.log")
    with deployment.log_path.open("wb") as log:
        process = subprocess.Popen(
            ["bash", str(ROOT / "scripts" / "airflow_ui.sh")],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            _wait_until_healthy(deployment, process)
            deployment.login()
            _wait_until_parsed(deployment, process)
            yield deployment
        finally:
            _stop(process, home)
