"""TimescaleDB's full edition as a container: the official image ``timescale/timescaledb`` (the
non-``-oss`` image is the full edition), tuned as the local recipe (``TimescaleTslRecipe``: the
timescaledb settings plus ``timescaledb.license = 'timescale'``)."""

from __future__ import annotations

from tsbench.runtimes.container_spec import ContainerSpec
from tsbench.targets.postgres.container import postgres_spec
from tsbench.targets.postgres.definition import PG_MAJOR
from tsbench.targets.timescaledb_tsl.definition import DEFINITION
from tsbench.targets.timescaledb_tsl.server import TimescaleTslRecipe

VERSION = DEFINITION.version

CONTAINERS: dict[str, ContainerSpec] = {
    f"{'.'.join(VERSION.split('.')[:2])}-pg{PG_MAJOR}": postgres_spec(
        f"timescale/timescaledb:{VERSION}-pg{PG_MAJOR}",
        TimescaleTslRecipe,
        environment={"NO_TS_TUNE": "true", "TIMESCALEDB_TELEMETRY": "off"},
        note=(
            f"official image timescale/timescaledb:{VERSION}-pg{PG_MAJOR} (Alpine): the full edition, "
            "licence 'timescale'; tuning as the local recipe's"
        ),
    ),
}
