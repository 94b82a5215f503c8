"""TimescaleDB as a container: the official image ``timescale/timescaledb`` — the full edition.

Unlike the local runtime (the Apache-2 edition built from source), the non-``-oss`` image carries the
TSL ("Community") edition, with native compression and continuous aggregates. Server tuning is the
local recipe's (``TimescaleRecipe``: PostgreSQL's plus the preload library and TimescaleDB settings) as
``-c`` arguments; ``NO_TS_TUNE`` stops the image from rewriting memory settings with timescaledb-tune.
The image's init script creates the extension in the benchmark database.
"""

from __future__ import annotations

from tsbench.runtimes.container_spec import ContainerSpec
from tsbench.targets.postgres.container import postgres_spec
from tsbench.targets.timescaledb.server import TimescaleRecipe

TIMESCALEDB_VERSION = "2.19.3"

CONTAINERS: dict[str, ContainerSpec] = {
    "2.19-pg15": postgres_spec(
        f"timescale/timescaledb:{TIMESCALEDB_VERSION}-pg15",
        TimescaleRecipe,
        environment={"NO_TS_TUNE": "true", "TIMESCALEDB_TELEMETRY": "off"},
        note=(
            f"official image timescale/timescaledb:{TIMESCALEDB_VERSION}-pg15 (Alpine): the TSL/Community "
            "edition with native compression and continuous aggregates — the local runtime builds the "
            "Apache-2 edition, which has neither; PostgreSQL 15 minor as shipped in that image; tuning "
            "as the local recipe's"
        ),
    ),
}
