"""The machine lease: at most one benchmark branch (one database server) measures on a machine at
a time, whatever the executor does in parallel.

The lease is one small document in a ``Slot`` (``lease_slots``): the file ``machine.lease`` in the
state root, or — when ``$TSBENCH_RUN_STORE`` names a run store that workers on several machines
share — an object per benchmark host in it (S3 conditional writes). It holds the owner, the time it
was taken and the owner's last heartbeat; every change is a compare-and-swap on the version read.
``try_acquire`` is non-blocking; ``acquire`` waits (polling) up to a timeout and then raises
``MachineBusy`` naming the holder. The holder's
tasks beat while they run (``keep_alive``); a lease whose last beat is older than
``stale_after_s`` (default 15 min) is taken over — its owner died without teardown — and an owner
that finds its lease taken over fails loudly (``LeaseLost``) instead of measuring beside another
branch. ``release`` only removes the caller's own lease.

A lease taken by a ``process_bound`` owner (the CLI's run: one process holds it from acquire to
teardown) also records its process's start time (from ``/proc``); when that process is gone
from this host, its lease is free at once instead of after 15 min. A DAG branch's lease spans
several task processes, so it is never process-bound and waits to go stale. Every holder records
the taking process's pid and host.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from tsbench.run.lease_slots import Body, FileSlot, Slot, slot_for
from tsbench.runtimes.local import state_root

DEFAULT_STALE_AFTER_S = float(os.environ.get("TSBENCH_LEASE_STALE_S", 15 * 60))
BEAT_EVERY_S = 30.0
POLL_EVERY_S = 0.2  # a waiter's tries: one or two small reads each; the handover waits half of it
DEFAULT_WAIT_S = 24 * 3600.0


class Holder(BaseModel):
    """Who holds a lease: the owner (a branch), when it took the lease and last beat (s since the
    epoch), the taking process's pid and host, and — for a process-bound owner — that process's
    start time (clock ticks since boot), so a dead process frees it at once."""

    model_config = ConfigDict(frozen=True)

    owner: str
    since: float = 0.0
    beat: float = 0.0
    pid: int | None = None
    host: str = ""
    process_start: int | None = None

    @property
    def last_beat(self) -> float:
        return max(self.since, self.beat)


# Told of a wait (holder, seconds waited so far): on the first refusal, then every minute or so.
Waiting = Callable[[Holder | None, float], None]


def _holder(body: Body | None) -> Holder | None:
    return Holder.model_validate(body) if body is not None else None


class MachineBusy(TimeoutError):
    """The machine stayed leased by another branch for the whole wait."""


class LeaseLost(RuntimeError):
    """The caller's lease went stale and another branch took the machine."""


def wait_limit_s() -> float:
    """How long a branch waits for the machine (s): ``$TSBENCH_MACHINE_WAIT_S``, default 24 h."""
    return float(os.environ.get("TSBENCH_MACHINE_WAIT_S") or DEFAULT_WAIT_S)


def machine_key() -> str:
    """The benchmark host a ``local`` or ``docker`` runtime measures on: this machine."""
    return "host-" + socket.gethostname()


def host_slot(key: str | None = None, root: Path | None = None) -> Slot:
    """Where the lease of benchmark host ``key`` lives (None: this machine): in the run store when
    ``$TSBENCH_RUN_STORE`` names one (shared by workers on other machines: ``s3://…`` or a shared
    folder) and no ``root`` is given, else in the state root — ``machine.lease`` for this machine,
    ``leases/<key>.lease`` for another host."""
    store = os.environ.get("TSBENCH_RUN_STORE")
    if store and root is None:
        return slot_for(store, key or machine_key())
    folder = root or state_root()
    return FileSlot(folder / "machine.lease" if key is None else folder / "leases" / f"{key}.lease")


class MachineLease:
    """The lease of one benchmark host, in a ``Slot`` (default: ``host_slot(key, root)``)."""

    def __init__(
        self,
        root: Path | None = None,
        stale_after_s: float = DEFAULT_STALE_AFTER_S,
        process_bound: bool = False,
        slot: Slot | None = None,
        key: str | None = None,
    ):
        """``key`` names the benchmark host for the branch's records (None: this machine)."""
        self.key = key
        self.slot = slot or host_slot(key, root)
        self.where = self.slot.where
        self.stale_after_s = stale_after_s
        self.process_bound = process_bound

    def holder(self) -> Holder | None:
        return _holder(self.slot.read()[0])

    def try_acquire(self, owner: str) -> bool:
        """Take the lease for ``owner`` if it is free, stale, or already ``owner``'s. A takeover
        replaces exactly the stale document it read (compare-and-swap): of two takers, one wins."""
        body, version = self.slot.read()
        current = _holder(body)
        if current is None:
            return self.slot.create(self._new_holder(owner))
        if current.owner == owner:
            return True
        fresh = time.time() - current.last_beat < self.stale_after_s
        if fresh and not holder_process_gone(current):
            return False
        assert version is not None
        return self.slot.replace(self._new_holder(owner), version)  # stale, or its process died

    def _new_holder(self, owner: str) -> Body:
        now, pid = time.time(), os.getpid()
        started = process_start(pid) if self.process_bound else None
        holder = Holder(
            owner=owner, since=now, beat=now, pid=pid, host=socket.gethostname(), process_start=started
        )
        return holder.model_dump(exclude_none=True)

    def beat(self, owner: str, attempts: int = 3) -> None:
        """Record that ``owner`` is alive; raises ``LeaseLost`` when it no longer holds the lease.
        A beat replaces only the version it read; it reads again when another beat of the same
        owner came in between."""
        for _ in range(attempts):
            body, version = self.slot.read()
            current = _holder(body)
            if body is None or current is None or current.owner != owner:
                raise LeaseLost(f"{owner} no longer holds the machine lease: {describe(current)}")
            assert version is not None
            if self.slot.replace({**body, "beat": time.time()}, version):
                return
        raise LeaseLost(f"{owner}: the machine lease at {self.where} kept changing under its beat")

    @contextmanager
    def keep_alive(self, owner: str, every_s: float = BEAT_EVERY_S) -> Iterator[None]:
        """Beat now and every ``every_s`` while the block runs; raises ``LeaseLost`` at the start,
        or at the end when a beat found the lease taken over meanwhile."""
        self.beat(owner)
        stop, lost = threading.Event(), []

        def beating() -> None:
            while not stop.wait(every_s):
                try:
                    self.beat(owner)
                except LeaseLost as error:
                    lost.append(error)
                    return

        thread = threading.Thread(target=beating, name="machine-lease-beat", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
        if lost:
            raise lost[0]

    def acquire(
        self,
        owner: str,
        timeout_s: float,
        poll_s: float = POLL_EVERY_S,
        on_wait: Waiting | None = None,
        report_every_s: float = 60.0,
    ) -> float:
        """Wait until ``owner`` holds the lease; returns the seconds waited (see ``HostLeases``)."""
        return HostLeases([self]).acquire(owner, timeout_s, poll_s, on_wait, report_every_s)[1]

    def force_release(self) -> Holder | None:
        """Remove the lease whoever holds it (operators: after a crash); returns the old holder."""
        current, version = self.slot.read()
        if version is not None:
            self.slot.delete(version)
        return _holder(current)

    def release(self, owner: str) -> bool:
        """Give the lease back if ``owner`` holds it; returns whether it did."""
        current, version = self.slot.read()
        if current is None or current.get("owner") != owner:  # the stored form, not yet a Holder
            return False
        assert version is not None
        return self.slot.delete(version)


def lease_at(key: str | None, root: Path | None = None, **options: Any) -> MachineLease:
    """The lease of benchmark host ``key`` (None: this machine), where ``host_slot`` puts it."""
    return MachineLease(root, key=key, **options)


class HostLeases:
    """The leases a branch may take, one per benchmark host it could measure on (``runtimes.select.
    host_lease_keys``); it holds at most one, and waits while all are held."""

    def __init__(self, leases: list[MachineLease]):
        if not leases:
            raise ValueError("a branch needs at least one lease to take")
        self.leases = leases

    @classmethod
    def at(cls, keys: list[str | None], **options: Any) -> HostLeases:
        return cls([lease_at(key, **options) for key in keys])

    def try_acquire(self, owner: str) -> MachineLease | None:
        """The lease ``owner`` now holds (its own first, else the first free or stale one), or None."""
        for lease in self.leases:
            holder = lease.holder()
            if holder is not None and holder.owner == owner:
                return lease
        return next((lease for lease in self.leases if lease.try_acquire(owner)), None)

    def holders(self) -> Holder | None:
        """The first lease's holder (the one a waiter reports), or None when it is free."""
        return next((h for h in (lease.holder() for lease in self.leases) if h is not None), None)

    def acquire(
        self,
        owner: str,
        timeout_s: float,
        poll_s: float = POLL_EVERY_S,
        on_wait: Waiting | None = None,
        report_every_s: float = 60.0,
    ) -> tuple[MachineLease, float]:
        """Wait until ``owner`` holds one of the leases; returns it and the seconds waited.
        ``on_wait(holder, waited_s)`` is called on the first refusal and then every
        ``report_every_s``; after ``timeout_s`` raises ``MachineBusy`` naming a holder."""
        started = time.monotonic()
        reported_at: float | None = None
        while (held := self.try_acquire(owner)) is None:
            waited = time.monotonic() - started
            holder = self.holders()
            if waited >= timeout_s:
                raise busy(waited, timeout_s, holder)
            if on_wait and (reported_at is None or waited - reported_at >= report_every_s):
                on_wait(holder, waited)
                reported_at = waited
            time.sleep(min(poll_s, max(timeout_s - waited, 0.05)))
        return held, time.monotonic() - started


def busy(waited_s: float, limit_s: float, holder: Holder | None) -> MachineBusy:
    """The error of a branch that waited ``waited_s`` for the machine, past ``limit_s``."""
    return MachineBusy(
        f"the machine was still in use after waiting {waited_s:.0f} s "
        f"(limit {limit_s:.0f} s, TSBENCH_MACHINE_WAIT_S): {describe(holder)}"
    )


def process_start(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot, ``/proc/<pid>/stat`` field 22), or
    None when there is no such process (or no ``/proc``)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def holder_process_gone(holder: Holder) -> bool:
    """Whether ``holder`` is a process-bound lease of this host whose process no longer runs (a
    pid reused by another process counts as gone: its start time differs)."""
    if holder.process_start is None or holder.pid is None or holder.host != socket.gethostname():
        return False
    return process_start(holder.pid) != holder.process_start


def held_by_this_process(holder: Holder | None) -> bool:
    """Whether ``holder`` was taken by this very process on this host (under ``dag.test()`` every
    branch's tasks run in one process)."""
    return holder is not None and holder.pid == os.getpid() and holder.host == socket.gethostname()


def describe(holder: Holder | None) -> str:
    """``held by <owner> since <UTC time> (N s)``, or ``free``."""
    if holder is None:
        return "free"
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(holder.since))
    held, quiet = time.time() - holder.since, time.time() - holder.last_beat
    return f"held by {holder.owner} since {when} ({held:.0f} s; last beat {quiet:.0f} s ago)"
