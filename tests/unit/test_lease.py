"""The machine lease on a real file system: one holder, waiting with a limit, heartbeats, takeover
of a dead holder's lease, and a holder that finds its lease taken over."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tsbench.run.lease import LeaseLost, MachineBusy, MachineLease


def test_one_holder_at_a_time_and_release_only_by_the_holder(tmp_path: Path) -> None:
    lease = MachineLease(tmp_path)
    assert lease.try_acquire("a") and lease.try_acquire("a")  # the holder may take it again
    assert not lease.try_acquire("b")
    assert not lease.release("b") and lease.holder().owner == "a"
    assert lease.release("a") and lease.holder() is None
    assert lease.try_acquire("b")


def test_many_threads_racing_get_exactly_one_lease(tmp_path: Path) -> None:
    lease, winners, start = MachineLease(tmp_path), [], threading.Event()

    def race(name: str) -> None:
        start.wait()
        if lease.try_acquire(name):
            winners.append(name)

    threads = [threading.Thread(target=race, args=(f"branch-{i}",)) for i in range(16)]
    for thread in threads:
        thread.start()
    start.set()
    for thread in threads:
        thread.join()
    assert len(winners) == 1 and lease.holder().owner == winners[0]


def test_acquire_waits_for_the_release_and_reports_the_wait(tmp_path: Path) -> None:
    lease, seen = MachineLease(tmp_path), []
    assert lease.try_acquire("holder")
    threading.Timer(0.6, lease.release, args=("holder",)).start()
    waited = lease.acquire("waiter", timeout_s=10, poll_s=0.05, on_wait=lambda h, w: seen.append(h.owner))
    assert 0.5 < waited < 5 and seen == ["holder"] and lease.holder().owner == "waiter"


def test_acquire_gives_up_after_the_limit_naming_the_holder(tmp_path: Path) -> None:
    lease = MachineLease(tmp_path)
    assert lease.try_acquire("scale-100 × questdb @ run 1")
    with pytest.raises(MachineBusy, match=r"held by scale-100 × questdb @ run 1 since .* last beat"):
        lease.acquire("waiter", timeout_s=0.3, poll_s=0.05)


def test_a_holder_that_stops_beating_is_taken_over_and_then_fails_loudly(tmp_path: Path) -> None:
    lease = MachineLease(tmp_path, stale_after_s=0.5)
    assert lease.try_acquire("dead")
    lease.beat("dead")
    assert not lease.try_acquire("next")  # beat just now: not stale
    time.sleep(0.6)
    assert lease.try_acquire("next")
    with pytest.raises(LeaseLost, match="held by next"):
        lease.beat("dead")


def test_keep_alive_beats_while_the_block_runs(tmp_path: Path) -> None:
    lease = MachineLease(tmp_path, stale_after_s=0.5)
    assert lease.try_acquire("busy")
    with lease.keep_alive("busy", every_s=0.1):
        time.sleep(1.0)  # twice the stale limit: only the beats keep it
        assert not MachineLease(tmp_path, stale_after_s=0.5).try_acquire("other")
    body = json.loads(lease.slot.path.read_text())
    assert body["owner"] == "busy" and time.time() - body["beat"] < 0.5


def test_keep_alive_fails_when_the_lease_was_taken_over_meanwhile(tmp_path: Path) -> None:
    lease = MachineLease(tmp_path)
    assert lease.try_acquire("first")
    with pytest.raises(LeaseLost), lease.keep_alive("first", every_s=0.05):
        lease.force_release()
        assert lease.try_acquire("second")
        time.sleep(0.3)
    with pytest.raises(LeaseLost), lease.keep_alive("nobody"):
        pass


def _lease_taken_in_a_child(root: Path, owner: str, exit_after: bool) -> subprocess.Popen[bytes]:
    """A real process that takes a process-bound lease and then exits or stays (until killed)."""
    code = (
        "import sys, time; from pathlib import Path; from tsbench.run.lease import MachineLease; "
        f"assert MachineLease(Path({str(root)!r}), process_bound=True).try_acquire({owner!r}); "
        "print('held', flush=True); " + ("" if exit_after else "time.sleep(60)")
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "plugins")}
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, env=env)
    assert child.stdout is not None and child.stdout.readline() == b"held\n"
    return child


def test_a_dead_process_bound_holder_frees_the_machine_at_once(tmp_path: Path) -> None:
    """A CLI run killed with SIGKILL never releases its lease; the next run takes it at once
    (not after the 15-min staleness) because the holding process is gone from this host."""
    child = _lease_taken_in_a_child(tmp_path, "killed-run", exit_after=False)
    lease = MachineLease(tmp_path, stale_after_s=3600, process_bound=True)
    assert not lease.try_acquire("next-run")  # alive: the machine stays busy
    child.kill()
    child.wait()
    assert lease.try_acquire("next-run") and lease.holder().owner == "next-run"


def test_only_a_process_bound_lease_of_this_host_is_freed_by_its_process_exit(tmp_path: Path) -> None:
    """A DAG branch's lease outlives the task process that took it (not process-bound): it waits
    to go stale. A process-bound lease of another host, or of a pid now reused by another process
    (its start time differs), is judged by what can be known."""
    lease = MachineLease(tmp_path, stale_after_s=3600)
    _lease_taken_in_a_child(tmp_path, "branch", exit_after=True).wait()
    unbound = {**lease.holder().model_dump(), "process_start": None}
    lease.slot.path.write_text(json.dumps(unbound))
    assert not lease.try_acquire("next")  # the taking process exited, the lease is the branch's
    elsewhere = {**unbound, "process_start": 1, "host": "another-host"}
    lease.slot.path.write_text(json.dumps(elsewhere))
    assert not lease.try_acquire("next")
    reused = {**unbound, "pid": os.getpid(), "process_start": 1, "host": socket.gethostname()}
    lease.slot.path.write_text(json.dumps(reused))
    assert lease.try_acquire("next")


def test_a_holder_in_this_very_process_is_told_from_one_elsewhere(tmp_path: Path) -> None:
    """Under ``dag.test()`` a waiting branch skips its pause when the holder's tasks run in its own
    process (they run next in the same loop); a holder in a child process or on another host is
    waited for."""
    from tsbench.run.lease import held_by_this_process

    lease = MachineLease(tmp_path)
    assert not held_by_this_process(lease.holder())
    assert lease.try_acquire("branch") and held_by_this_process(lease.holder())
    assert not held_by_this_process(lease.holder().model_copy(update={"host": "another-host"}))
    lease.release("branch")
    _lease_taken_in_a_child(tmp_path, "child", exit_after=True).wait()
    assert lease.holder().owner == "child" and not held_by_this_process(lease.holder())


def test_an_aws_run_measures_on_up_to_max_parallel_hosts_and_local_on_the_machine(tmp_path: Path) -> None:
    """A local run's branches share one lease, this machine's; an aws run's branches each take
    one of the run's ``max_parallel_hosts`` slots (they provision their own hosts) and the next
    branch waits for a slot."""
    from tsbench.run.lease import HostLeases, MachineBusy
    from tsbench.runtimes.select import host_lease_keys
    from tsbench.spec import RunSpec

    local = RunSpec.parse(targets=["questdb", "postgres"])
    assert host_lease_keys(local, "run-1") == [None]
    cloud = RunSpec.parse(
        targets=["questdb", "postgres", "influxdb"],
        runtime="aws",
        aws={"orchestrator_cidr": ["203.0.113.7/32"], "max_parallel_hosts": 2},
    )
    keys = host_lease_keys(cloud, "run-1")
    assert keys == ["run-1-aws-host-0", "run-1-aws-host-1"]

    leases = HostLeases.at(keys, root=tmp_path)
    first, _ = leases.acquire("questdb", timeout_s=1)
    second, _ = leases.acquire("postgres", timeout_s=1)
    assert {first.key, second.key} == set(keys)
    assert leases.try_acquire("questdb") is first  # a holder finds its own slot again
    with pytest.raises(MachineBusy, match="held by questdb"):
        leases.acquire("influxdb", timeout_s=0.3, poll_s=0.05)
    assert second.release("postgres")
    third, _ = leases.acquire("influxdb", timeout_s=1)
    assert (
        third.key == second.key and HostLeases.at(keys, root=tmp_path).leases[1].holder().owner == "influxdb"
    )
    machine = HostLeases.at(host_lease_keys(local, "run-1"), root=tmp_path)
    assert machine.try_acquire("scale-100 × questdb") is not None  # aws slots are not the machine
