"""The machine lease: at most one benchmark branch (one database server) measures on a machine at
a time, whatever the executor does in parallel.

The lease is a file created atomically (``O_CREAT | O_EXCL``) in the state root, holding the owner
and the time it was taken. ``try_acquire`` is non-blocking so that a waiting branch can give its
worker slot back (an Airflow sensor in reschedule mode). A lease older than ``stale_after_s`` is
taken over (its owner crashed without teardown); ``release`` only removes the caller's own lease.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from tsbench.runtimes.local import state_root

DEFAULT_STALE_AFTER_S = float(os.environ.get("TSBENCH_LEASE_STALE_S", 12 * 3600))


class MachineLease:
    def __init__(self, root: Path | None = None, stale_after_s: float = DEFAULT_STALE_AFTER_S):
        self.path = (root or state_root()) / "machine.lease"
        self.stale_after_s = stale_after_s

    def holder(self) -> dict[str, Any] | None:
        try:
            return json.loads(self.path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None

    def try_acquire(self, owner: str) -> bool:
        """Take the lease for ``owner`` if it is free, stale, or already ``owner``'s."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        current = self.holder()
        if current is not None:
            if current.get("owner") == owner:
                return True
            if time.time() - current.get("since", 0) < self.stale_after_s:
                return False
            self.path.unlink(missing_ok=True)  # stale: its owner never released it
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w") as handle:
            json.dump({"owner": owner, "since": time.time(), "pid": os.getpid()}, handle)
        return True

    def force_release(self) -> dict[str, Any] | None:
        """Remove the lease whoever holds it (operators: after a crash); returns the old holder."""
        current = self.holder()
        self.path.unlink(missing_ok=True)
        return current

    def release(self, owner: str) -> bool:
        """Give the lease back if ``owner`` holds it; returns whether it did."""
        current = self.holder()
        if current is None or current.get("owner") != owner:
            return False
        self.path.unlink(missing_ok=True)
        return True
