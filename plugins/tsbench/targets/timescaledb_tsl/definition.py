"""TimescaleDB's full edition: the timescaledb target's definition (same pin, tuning and cloud
steps; ``server="timescaledb"``: its recipes and TIMESCALEDB_VERSION) with the Timescale License
turned on and ``build_tsl.sh`` as the local install recipe (the full edition built from the pinned
source into a PostgreSQL prefix of its own, beside the Apache-2 edition)."""

from __future__ import annotations

from dataclasses import replace

from tsbench.targets.postgres.config import cloud_files
from tsbench.targets.timescaledb.definition import DEFINITION as TIMESCALEDB

# The TSL features (native compression, continuous aggregates, policies) need the licence setting;
# the Apache-2 edition's default is 'apache'.
TUNING = {**TIMESCALEDB.tuning, "timescaledb.license": "timescale"}

DEFINITION = replace(
    TIMESCALEDB,
    name="timescaledb_tsl",
    server="timescaledb",
    install="build_tsl.sh",
    install_env={**TIMESCALEDB.install_env, "TIMESCALEDB_EDITION": "tsl"},
    tuning=TUNING,
    cloud_files=cloud_files(TUNING),  # rendered again: the inherited files lack the licence
    main_job=0,
    local_build_minutes=3,  # build_tsl.sh: ≈ 130 s on 2 cores
)
