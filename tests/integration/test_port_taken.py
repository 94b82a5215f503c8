"""A fresh local server whose picked port another socket took before the server bound it (the
race of picking a free port in one process and binding it in another, seen in CI as QuestDB's
exit 55, "could not bind socket") is started again on new ports, with a real server; any other
start failure is raised at once."""

from __future__ import annotations

import socket
import uuid
from pathlib import Path

import pytest

from tsbench.runtimes import local
from tsbench.runtimes.local import LocalRuntime
from tsbench.runtimes.ports import free_ports
from tsbench.targets.base import TargetError
from tsbench.targets.registry import load_target

pytestmark = pytest.mark.integration


def _root() -> Path:
    root = Path("/var/tmp/tsbench-tests") / f"ports-{uuid.uuid4().hex[:8]}"
    root.mkdir(parents=True)
    return root


def test_a_port_taken_before_the_server_binds_it_means_a_start_on_new_ports(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        picks: list[list[int]] = []

        def first_pick_taken(count: int) -> list[int]:
            ports = free_ports(count)
            picks.append([taken, *ports[1:]] if not picks else ports)
            return picks[-1]

        monkeypatch.setattr(local, "free_ports", first_pick_taken)
        runtime, instance = LocalRuntime(_root()), f"ports-{uuid.uuid4().hex[:6]}"
        target_type = load_target("postgres")
        try:
            server = runtime.provision(target_type, instance)
            assert len(picks) == 2 and taken not in server.recipe.ports.values(), picks
            assert server.running() and "taken before the server bound it" in caplog.text
            target = target_type(server.endpoint(), "cpu-only", ())
            try:
                assert target.version()
            finally:
                target.close()
        finally:
            runtime.teardown(instance)


def test_any_other_start_failure_is_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    starts: list[int] = []

    def broken_start(self: local.LocalServer) -> float:
        starts.append(1)
        raise TargetError(f"{self.instance}: server exited with code 1 during start:\nFATAL: bad setting")

    monkeypatch.setattr(local.LocalServer, "start", broken_start)
    runtime, instance = LocalRuntime(_root()), f"ports-{uuid.uuid4().hex[:6]}"
    try:
        with pytest.raises(TargetError, match="bad setting"):
            runtime.provision(load_target("postgres"), instance)
        assert starts == [1]
    finally:
        runtime.teardown(instance)
