"""TimescaleDB (Apache-2 edition; version in ``definition.py``) as a local process: the PostgreSQL
recipe plus the extension preloaded and created in the benchmark database. Tuning is PostgreSQL's
table, so the two targets differ only in what TimescaleDB adds (see ``targets/postgres/README.md``)."""

from __future__ import annotations

import re
import subprocess
from typing import ClassVar

from tsbench.runtimes.definition import ServerDefinition
from tsbench.targets.postgres.server import TUNING, PostgresRecipe
from tsbench.targets.timescaledb.definition import DEFINITION


class TimescaleRecipe(PostgresRecipe):
    name = "timescaledb"
    definition: ClassVar[ServerDefinition] = DEFINITION
    extensions: ClassVar[tuple[str, ...]] = ("timescaledb",)
    extra_settings: ClassVar[dict[str, str]] = {
        key: value for key, value in DEFINITION.settings().items() if key not in TUNING
    }

    edition: ClassVar[str] = "Apache-2 edition"

    def version(self) -> str:
        pg_config = str(self.pg_bin / "pg_config")
        sharedir = subprocess.run([pg_config, "--sharedir"], capture_output=True, text=True)
        control = f"{sharedir.stdout.strip()}/extension/timescaledb.control"
        try:
            with open(control) as handle:
                found = re.search(r"default_version\s*=\s*'([^']+)'", handle.read())
        except OSError:
            found = None
        extension = found.group(1) if found else "not installed"
        return f"TimescaleDB {extension} ({self.edition}) on {super().version()}"
