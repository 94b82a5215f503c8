"""TimescaleDB's full edition as a container: the official image ``timescale/timescaledb`` (its plain,
non-``-oss`` tag is the full edition), tuned as the local recipe (``TimescaleTslRecipe``: the
timescaledb settings plus ``timescaledb.license = 'timescale'``)."""

from __future__ import annotations

from tsbench.runtimes.container_spec import ContainerSpec
from tsbench.targets.timescaledb.container import FULL_EDITION_IMAGE, timescale_containers
from tsbench.targets.timescaledb_tsl.server import TimescaleTslRecipe

CONTAINERS: dict[str, ContainerSpec] = timescale_containers(
    TimescaleTslRecipe,
    FULL_EDITION_IMAGE,
    f"official image {FULL_EDITION_IMAGE} (Alpine): the full edition, licence 'timescale'; tuning as the "
    "local recipe's",
)
