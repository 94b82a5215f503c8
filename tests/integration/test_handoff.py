"""A local server provisioned by one worker is found, used and torn down by a task on another worker
(another state root, same machine) through the record the run folder carries; a record from
another machine is refused with both names, by attach and by teardown."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import psutil
import pytest

from tsbench.runtimes.handoff import RECORD, ElsewhereError
from tsbench.runtimes.local import LocalRuntime
from tsbench.targets.registry import load_target

pytestmark = pytest.mark.integration


def _roots(tmp_path: Path) -> tuple[Path, Path]:
    roots = [Path("/var/tmp/tsbench-tests") / f"worker-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    for root in roots:
        root.mkdir(parents=True)
    return roots[0], roots[1]


def test_another_workers_task_attaches_and_tears_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """… and the server process inherits none of the task's secrets (``process_env``)."""
    for key in ("AWS_SECRET_ACCESS_KEY", "AIRFLOW__API_AUTH__JWT_SECRET", "TSBENCH_QUESTDB_PASSWORD"):
        monkeypatch.setenv(key, "not-for-the-server")
    first_root, second_root = _roots(tmp_path)
    handoff = tmp_path / "run" / "targets" / "questdb"
    target_type = load_target("questdb")
    instance = f"handoff-{uuid.uuid4().hex[:6]}"
    provisioner = LocalRuntime(first_root, handoff=handoff)
    server = provisioner.provision(target_type, instance)
    try:
        other = LocalRuntime(second_root, handoff=handoff)
        assert not (second_root / instance).exists()
        found = other.attach(instance)
        assert found.endpoint() == server.endpoint() and found.pid == server.pid and found.running()
        inherited = psutil.Process(server.pid).environ()
        assert "not-for-the-server" not in inherited.values() and "PATH" in inherited
        target = target_type(found.endpoint(), "cpu-only", ())
        try:
            assert target.version()  # the server answers through the found endpoint
        finally:
            target.close()
        with pytest.raises(Exception, match="no local server instance"):
            LocalRuntime(second_root).attach(instance)  # without the run folder's record
        other.teardown(instance)
        assert not server.running() and not server.home.exists()
    finally:
        provisioner.teardown(instance)


def test_a_record_from_another_machine_is_refused(tmp_path: Path) -> None:
    _, root = _roots(tmp_path)
    handoff = tmp_path / "handoff"
    handoff.mkdir()
    record = {"instance": "x", "home": "/nowhere", "recipe": "questdb", "ports": {}, "pid": 1}
    (handoff / RECORD).write_text(
        json.dumps({"instance": "x", "machine": "another", "host": "worker-b", "state": record})
    )
    runtime = LocalRuntime(root, handoff=handoff)
    for action in (runtime.attach, runtime.teardown):
        with pytest.raises(ElsewhereError, match="runs on worker-b"):
            action("x")
