"""The machine lease on a real file system: one holder, waiting with a limit, heartbeats, takeover
of a dead holder's lease, and a holder that finds its lease taken over."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from tsbench.lease import LeaseLost, MachineBusy, MachineLease


def test_one_holder_at_a_time_and_release_only_by_the_holder(tmp_path: Path) -> None:
    lease = MachineLease(tmp_path)
    assert lease.try_acquire("a") and lease.try_acquire("a")  # the holder may take it again
    assert not lease.try_acquire("b")
    assert not lease.release("b") and lease.holder()["owner"] == "a"
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
    assert len(winners) == 1 and lease.holder()["owner"] == winners[0]


def test_acquire_waits_for_the_release_and_reports_the_wait(tmp_path: Path) -> None:
    lease, seen = MachineLease(tmp_path), []
    assert lease.try_acquire("holder")
    threading.Timer(0.6, lease.release, args=("holder",)).start()
    waited = lease.acquire("waiter", timeout_s=10, poll_s=0.05, on_wait=lambda h, w: seen.append(h["owner"]))
    assert 0.5 < waited < 5 and seen == ["holder"] and lease.holder()["owner"] == "waiter"


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
    body = json.loads(lease.path.read_text())
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
