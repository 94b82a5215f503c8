"""TimescaleDB 2.19.3 (Apache-2 edition) as a local process: the PostgreSQL 15 recipe plus the
extension preloaded and created in the benchmark database. Tuning is the PostgreSQL recipe's, so
the two targets differ only in what TimescaleDB adds (see ``targets/postgres/README.md``)."""

from __future__ import annotations

import re
import subprocess
from typing import ClassVar

from tsbench.targets.postgres.server import PG_BIN, PostgresRecipe


class TimescaleRecipe(PostgresRecipe):
    name = "timescaledb"
    install_script = "install_timescaledb.sh"
    preload: ClassVar[tuple[str, ...]] = ("timescaledb",)
    extensions: ClassVar[tuple[str, ...]] = ("timescaledb",)
    extra_settings: ClassVar[dict[str, str]] = {
        "timescaledb.telemetry_level": "off",
        # job scheduler workers; with max_parallel_workers = 2 and the launcher this stays below
        # max_worker_processes = 16, as TimescaleDB asks
        "timescaledb.max_background_workers": "8",
    }

    def version(self) -> str:
        sharedir = subprocess.run([str(PG_BIN / "pg_config"), "--sharedir"], capture_output=True, text=True)
        control = f"{sharedir.stdout.strip()}/extension/timescaledb.control"
        try:
            with open(control) as handle:
                found = re.search(r"default_version\s*=\s*'([^']+)'", handle.read())
        except OSError:
            found = None
        extension = found.group(1) if found else "not installed"
        return f"TimescaleDB {extension} (Apache-2 edition) on {super().version()}"
