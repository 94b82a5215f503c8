"""The machine lease where workers share no disk: an object in a real S3 server (MinIO) written with
conditional requests, and the same contract on a local file between processes. Racing takers of a
free or of a stale lease get exactly one winner; a beat or a release never overwrites a change it
did not see."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tsbench.run.lease import LeaseLost, MachineLease, host_slot
from tsbench.run.lease_slots import FileSlot, S3Slot, Slot

if TYPE_CHECKING:
    from integration.minio import MinioServer

pytest_plugins = ("integration.minio",)
pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["file", "s3"])
def new_slot(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[str], Slot]:
    """A factory of slots by key, on a local folder or in a fresh MinIO bucket."""
    if request.param == "file":
        return lambda key: FileSlot(tmp_path / f"{key}.lease")
    server: MinioServer = request.getfixturevalue("minio_server")
    client, bucket = server.client(), server.new_bucket()
    return lambda key: S3Slot(client, bucket, f"runs/leases/{key}.json")


def test_a_slot_writes_only_against_the_version_it_read(new_slot: Callable[[str], Slot]) -> None:
    slot = new_slot("host-a")
    assert slot.read() == (None, None)
    assert slot.create({"owner": "a"}) and not slot.create({"owner": "b"})
    body, first = slot.read()
    assert body == {"owner": "a"} and first
    assert slot.replace({"owner": "a", "beat": 1}, first)
    assert not slot.replace({"owner": "b"}, first), "a replace against an old version went through"
    assert not slot.delete(first), "a delete against an old version went through"
    body, second = slot.read()
    assert body == {"owner": "a", "beat": 1} and second != first
    assert slot.delete(second) and slot.read() == (None, None)


def _race(lease_of: Callable[[], MachineLease], takers: int, prefix: str) -> list[str]:
    winners, start = [], threading.Event()

    def take(name: str) -> None:
        start.wait()
        if lease_of().try_acquire(name):
            winners.append(name)

    threads = [threading.Thread(target=take, args=(f"{prefix}-{i}",)) for i in range(takers)]
    for thread in threads:
        thread.start()
    start.set()
    for thread in threads:
        thread.join()
    return winners


def test_racing_takers_of_a_free_and_of_a_stale_lease_get_one_winner(
    new_slot: Callable[[str], Slot],
) -> None:
    slot = new_slot("host-race")
    winners = _race(lambda: MachineLease(slot=slot, stale_after_s=60), 12, "first")
    assert len(winners) == 1 and MachineLease(slot=slot).holder().owner == winners[0]
    body, version = slot.read()
    assert body is not None and version is not None
    assert slot.replace({**body, "since": time.time() - 120, "beat": time.time() - 120}, version)
    takers = _race(lambda: MachineLease(slot=slot, stale_after_s=60), 12, "next")  # last beat: 2 min ago
    assert len(takers) == 1, f"a stale lease was taken over by {takers}"
    with pytest.raises(LeaseLost, match=f"held by {takers[0]}"):
        MachineLease(slot=slot).beat(winners[0])


def test_beats_keep_the_lease_and_release_is_the_holders_alone(new_slot: Callable[[str], Slot]) -> None:
    lease = MachineLease(slot=new_slot("host-beat"), stale_after_s=0.6)
    assert lease.try_acquire("busy")
    with lease.keep_alive("busy", every_s=0.1):
        time.sleep(1.2)  # twice the stale limit: only the beats keep it
        assert not MachineLease(slot=lease.slot, stale_after_s=0.6).try_acquire("other")
    assert not lease.release("other") and lease.holder().owner == "busy"
    assert lease.release("busy") and lease.holder() is None


def _take_in_a_process(env: dict[str, str], owner: str) -> bool:
    code = f"from tsbench.run.lease import MachineLease; print(MachineLease().try_acquire({owner!r}))"
    run_env = {**os.environ, **env, "PYTHONPATH": str(ROOT / "plugins")}
    done = subprocess.run([sys.executable, "-c", code], env=run_env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip() == "True"


def test_workers_with_separate_state_roots_share_the_lease_through_the_run_store(
    minio_server: MinioServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes standing for two Celery workers: own state roots, no shared folder, the same
    ``TSBENCH_RUN_STORE`` (s3://…). The second sees the first's lease on this host and waits."""
    bucket = minio_server.new_bucket()
    s3_env = {"TSBENCH_RUN_STORE": f"s3://{bucket}/team", **minio_server.aws_environment()}
    first = {**s3_env, "TSBENCH_STATE": str(tmp_path / "worker-1")}
    second = {**s3_env, "TSBENCH_STATE": str(tmp_path / "worker-2")}
    assert _take_in_a_process(first, "scale-100 × questdb")
    assert not _take_in_a_process(second, "scale-100 × postgres")
    for key, value in s3_env.items():
        monkeypatch.setenv(key, value)
    slot = host_slot()
    assert isinstance(slot, S3Slot) and slot.where.startswith(f"s3://{bucket}/team/leases/host-")
    holder: Any = MachineLease().holder()
    assert holder.owner == "scale-100 × questdb"
    assert not any((tmp_path / "worker-1").rglob("*.lease")), "the lease went to a worker's disk"
