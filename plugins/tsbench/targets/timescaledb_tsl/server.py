"""TimescaleDB's full edition as a local process: the timescaledb recipe on the private PostgreSQL
copy ``build_tsl.sh`` installs it into (``/opt/tsbench/timescaledb-tsl-<version>-pg<major>``, or
``$TSBENCH_SYSTEM_OPT``), with ``timescaledb.license = 'timescale'``. Both editions run side by side:
they share no file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar

from tsbench.runtimes.definition import ServerDefinition
from tsbench.targets.postgres.definition import PG_MAJOR
from tsbench.targets.postgres.server import TUNING
from tsbench.targets.timescaledb.server import TimescaleRecipe
from tsbench.targets.timescaledb_tsl.definition import DEFINITION


def tsl_prefix() -> Path:
    """Where ``build_tsl.sh`` installs the full edition with its PostgreSQL."""
    root = Path(os.environ.get("TSBENCH_SYSTEM_OPT") or "/opt/tsbench")
    return root / f"timescaledb-tsl-{DEFINITION.pinned_version()}-pg{PG_MAJOR}"


class TimescaleTslRecipe(TimescaleRecipe):
    name = "timescaledb_tsl"
    definition: ClassVar[ServerDefinition] = DEFINITION
    pg_bin: ClassVar[Path] = tsl_prefix() / f"usr/lib/postgresql/{PG_MAJOR}/bin"
    edition: ClassVar[str] = "full edition: Apache-2 core + Timescale License (TSL)"
    extra_settings: ClassVar[dict[str, str]] = {
        key: value for key, value in DEFINITION.settings().items() if key not in TUNING
    }
