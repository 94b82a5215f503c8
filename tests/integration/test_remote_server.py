"""The cloud runtime's network path, here: a real server, the real node agent beside it, and the
pipeline's phases reaching both over TCP exactly as they reach a benchmark host on AWS.

Only the service control differs from a cloud host: there is no systemd here, so the agent starts
and stops the server with shell commands (its ``--start/--stop/--pids`` mode) instead of a unit.
"""

from __future__ import annotations

import secrets
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tsbench.run.comparison import parse_comparison, scale_dir
from tsbench.run.point_setup import prepare_run
from tsbench.run.target_phases import TargetPhases
from tsbench.runtimes.disk import allocated_bytes
from tsbench.runtimes.local import LocalRuntime
from tsbench.runtimes.ports import free_port
from tsbench.runtimes.remote import AgentClient, RemoteServer
from tsbench.targets.base import Target, TargetError
from tsbench.targets.registry import load_target

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "infra" / "modules" / "benchmark_host" / "files" / "node_agent.py"
SMALL = {"start": "2016-01-01T00:00:00Z", "end": "2016-01-01T12:00:00Z", "queries_per_type": 2, "hot_runs": 1}


def _control(runtime: LocalRuntime, instance: str, action: str) -> str:
    """A shell command that runs ``action`` on the local instance (what systemctl does on a VM)."""
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT / 'plugins')!r}); from pathlib import Path; "
        "from tsbench.runtimes.local import LocalRuntime; "
        f"s = LocalRuntime(Path({str(runtime.root)!r})).attach({instance!r}); "
    )
    if action == "pids":  # asked every 0.5 s: read the pid file, no interpreter start-up with imports
        state = runtime.root / instance / "instance.json"
        read = f"import json; print(json.load(open({str(state)!r}))['pid'] or '')"
        return f'pid=$(python3 -c "{read}"); [ -n "$pid" ] && pgrep -g "$pid" || true'
    code += {"start": "s.start()", "stop": "s.stop()"}[action]
    return f'{sys.executable} -c "{code}"'


class AgentRuntime:
    """Runtime protocol over an already-running server and its node agent (what AwsRuntime returns
    after terraform apply)."""

    name = "remote"

    def __init__(self, server: RemoteServer):
        self.server = server
        self.torn_down = 0

    def provision(self, target_type: type[Target], instance: str) -> RemoteServer:
        self.server.wait_ready(60)
        return self.server

    def attach(self, instance: str) -> RemoteServer:
        return self.server

    def teardown(self, instance: str) -> None:
        self.torn_down += 1


@pytest.fixture(scope="module")
def remote(
    runtime: LocalRuntime, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[RemoteServer, dict[str, Any]]]:
    """One server and its agent for the module (each test leaves the server running)."""
    tmp_path = tmp_path_factory.mktemp("agent")
    instance = f"remote-{uuid.uuid4().hex[:6]}"
    local = runtime.provision(load_target("questdb"), instance)
    # Restart it from a short-lived process, as the agent will: the server then belongs to init (as
    # to systemd on a VM), which reaps it when the agent's stop command ends it.
    local.stop()
    subprocess.run(_control(runtime, instance, "start"), shell=True, check=True)
    local = runtime.attach(instance)
    token = secrets.token_urlsafe(24)
    token_file = tmp_path / "agent.token"
    token_file.write_text(token)
    port = free_port()
    agent = subprocess.Popen(
        [
            sys.executable,
            str(AGENT),
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--token-file",
            str(token_file),
            "--data-dir",
            str(local.recipe.data_dir),
            "--start",
            _control(runtime, instance, "start"),
            "--stop",
            _control(runtime, instance, "stop"),
            "--pids",
            _control(runtime, instance, "pids"),
        ]
    )
    client = AgentClient(f"http://127.0.0.1:{port}", token)
    server = RemoteServer(
        instance, local.endpoint(), client, {"provider": "test", "instance_type": "here"}, 120
    )
    try:
        yield server, {"local": local, "port": port}
    finally:
        agent.terminate()
        agent.wait(10)
        runtime.teardown(instance)


def test_agent_reports_usage_disk_and_facts_and_restarts_cold(remote: tuple[RemoteServer, dict]) -> None:
    server, parts = remote
    assert server.wait_ready(30) >= 0
    probe = server.usage_probe()
    probe.measure()
    time.sleep(0.3)
    cpu, rss = probe.measure()
    assert cpu >= 0 and rss > 100 * 2**20  # a JVM with a 1 GiB minimum heap
    expected = allocated_bytes([parts["local"].recipe.data_dir])  # what the agent was pointed at
    assert server.disk_bytes() == pytest.approx(expected, rel=0.2) and expected > 0
    facts = server.facts()
    assert facts["host"]["cpus"] >= 1 and facts["host"]["memory_bytes"] > 2**30
    assert facts["instance_type"] == "here"
    outcome = server.restart_cold()
    assert outcome["restarted"] and outcome["was_down"] and outcome["os_cache_dropped"] is True
    assert outcome["ready_s"] >= 0 and parts["local"].recipe.ready()


def test_agent_refuses_a_wrong_token(remote: tuple[RemoteServer, dict]) -> None:
    server, parts = remote
    intruder = AgentClient(f"http://127.0.0.1:{parts['port']}", "not-the-token-at-all")
    server.wait_ready(30)
    with pytest.raises(TargetError, match="HTTP 401"):
        intruder.call("POST", "/restart-cold")
    assert parts["local"].recipe.ready()


def test_phases_run_over_the_network_path(
    remote: tuple[RemoteServer, dict], tmp_path: Path, dataset_cache: Path
) -> None:
    """Load, footprint, cold restart and checked queries through RemoteServer and the agent."""
    server, _ = remote
    spec = parse_comparison({**SMALL, "scales": [10], "targets": ["questdb"]})[0]
    run_dir = scale_dir(tmp_path / "net", 10)
    prepare_run(spec, run_dir, dataset_cache)
    runtime = AgentRuntime(server)
    phases = TargetPhases(run_dir, "questdb", runtime)
    assert phases.run_all(), (
        (phases.dir / "error.json").read_text() if (phases.dir / "error.json").exists() else ""
    )
    from tsbench.results.files import read_json

    provision = read_json(phases.dir / "provision.json")
    assert provision["placement"]["instance_type"] == "here" and provision["placement"]["host"]["cpus"] >= 1
    load = read_json(phases.dir / "load.json")
    assert load["row_count_ok"] and load["trials"][0]["resources"]["failed_samples"] == 0
    assert read_json(phases.dir / "footprint.json")["after_load"]["disk_bytes"] > 0
    assert read_json(phases.dir / "cache_reset.json")["os_cache_dropped"] is True
    queries = read_json(phases.dir / "queries.json")
    assert queries["resources"]["failed_samples"] == 0  # phases at this scale last < 0.5 s or so
    checks = queries["answer_checks"]
    assert checks["mismatches"] == 0 and checks["agreed"] == checks["checked"] > 0
    assert runtime.torn_down == 1
