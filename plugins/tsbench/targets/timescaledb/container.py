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
from tsbench.targets.postgres.definition import PG_MAJOR
from tsbench.targets.timescaledb.definition import DEFINITION
from tsbench.targets.timescaledb.server import TimescaleRecipe

TIMESCALEDB_VERSION = DEFINITION.version
IMAGE = f"timescale/timescaledb:{TIMESCALEDB_VERSION}-pg{PG_MAJOR}"


def timescale_containers(recipe: type[TimescaleRecipe], note: str) -> dict[str, ContainerSpec]:
    """The official image's one flavour (``<major.minor>-pg<PG major>``) tuned as ``recipe``."""
    flavour = f"{'.'.join(TIMESCALEDB_VERSION.split('.')[:2])}-pg{PG_MAJOR}"
    environment = {"NO_TS_TUNE": "true", "TIMESCALEDB_TELEMETRY": "off"}
    return {flavour: postgres_spec(IMAGE, recipe, environment=environment, note=note)}


CONTAINERS: dict[str, ContainerSpec] = timescale_containers(
    TimescaleRecipe,
    f"official image {IMAGE} (Alpine): the TSL/Community edition with native compression and continuous "
    f"aggregates — the local runtime builds the Apache-2 edition, which has neither; PostgreSQL {PG_MAJOR} "
    "minor as shipped in that image; tuning as the local recipe's",
)
