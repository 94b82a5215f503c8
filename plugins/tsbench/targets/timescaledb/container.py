"""TimescaleDB as a container: the official image ``timescale/timescaledb`` in the edition the local
runtime runs — its ``-oss`` tag (the Apache-2 edition) for this target; ``timescaledb_tsl`` takes the
plain tag (the full edition, with native compression and continuous aggregates).

Server tuning is the local recipe's (``TimescaleRecipe``: PostgreSQL's plus the preload library and
TimescaleDB settings) as ``-c`` arguments; ``NO_TS_TUNE`` stops the image from rewriting memory
settings with timescaledb-tune. The image's init script creates the extension in the benchmark
database. The tags follow Timescale's published scheme (``<version>-pg<major>[-oss]``); this machine
reaches no image registry, so their pull is untested here.
"""

from __future__ import annotations

from tsbench.runtimes.container_spec import ContainerSpec
from tsbench.targets.postgres.container import postgres_spec
from tsbench.targets.postgres.definition import PG_MAJOR
from tsbench.targets.timescaledb.definition import DEFINITION
from tsbench.targets.timescaledb.server import TimescaleRecipe

TIMESCALEDB_VERSION = DEFINITION.version
FULL_EDITION_IMAGE = f"timescale/timescaledb:{TIMESCALEDB_VERSION}-pg{PG_MAJOR}"
APACHE_EDITION_IMAGE = f"{FULL_EDITION_IMAGE}-oss"


def timescale_containers(recipe: type[TimescaleRecipe], image: str, note: str) -> dict[str, ContainerSpec]:
    """``image`` (one of the official image's two editions) tuned as ``recipe``, as the one flavour
    ``<major.minor>-pg<PG major>``."""
    flavour = f"{'.'.join(TIMESCALEDB_VERSION.split('.')[:2])}-pg{PG_MAJOR}"
    environment = {"NO_TS_TUNE": "true", "TIMESCALEDB_TELEMETRY": "off"}
    return {flavour: postgres_spec(image, recipe, environment=environment, note=note)}


CONTAINERS: dict[str, ContainerSpec] = timescale_containers(
    TimescaleRecipe,
    APACHE_EDITION_IMAGE,
    f"official image {APACHE_EDITION_IMAGE} (Alpine): the Apache-2 edition, as the local runtime — no "
    f"native compression, no continuous aggregates; PostgreSQL {PG_MAJOR} minor as shipped in that image; "
    "tuning as the local recipe's",
)
