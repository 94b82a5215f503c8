"""TimescaleDB's server definition: PostgreSQL's (``targets/postgres/definition.py``) plus the
extension: its version, the preload library and its own settings. Tuning is PostgreSQL's table, so
the two targets differ only in what TimescaleDB adds."""

from __future__ import annotations

from tsbench.runtimes.definition import ServerDefinition, TuningValue
from tsbench.targets.postgres.config import cloud_files
from tsbench.targets.postgres.definition import PG_MAJOR, TUNING

TIMESCALEDB_TUNING: dict[str, TuningValue] = {
    **TUNING,
    "shared_preload_libraries": "timescaledb",
    "timescaledb.telemetry_level": "off",
    # job scheduler workers; with max_parallel_workers and the launcher this stays below
    # max_worker_processes, as TimescaleDB asks
    "timescaledb.max_background_workers": "8",
}

DEFINITION = ServerDefinition(
    name="timescaledb",
    version="2.19.3",  # Debian/Apache-2 build (local), packagecloud -oss packages (cloud), image -oss
    tuning=TIMESCALEDB_TUNING,
    # The full edition's source (build_tsl.sh): upstream's tag archive (with tsl/), from the vendor
    # folder (as NAME) or its URL, verified by its tree hash (runtimes/source_archive.py).
    install_env={
        "PG_MAJOR": PG_MAJOR,
        # Which edition the cloud host installs (apt: timescaledb-2-oss-… for apache, timescaledb-2-…
        # for tsl) and the container runs (image tag -oss for apache): the local runtime's edition.
        "TIMESCALEDB_EDITION": "apache",
        "TIMESCALEDB_TSL_ARCHIVE": "timescaledb-2.19.3.tar.gz",
        "TIMESCALEDB_TSL_URL": "https://github.com/timescale/timescaledb/archive/refs/tags/2.19.3.tar.gz",
        "TIMESCALEDB_TSL_TREE_SHA256": "5e388e41a4003d4317482694eba0cd903648b72796105e6aeaa6f34d9c65a5a3",
    },
    # its packages and extension as hooks, then PostgreSQL's steps
    cloud_steps=("timescaledb/cloud_install.sh", "postgres/cloud_install.sh"),
    cloud_files=cloud_files(TIMESCALEDB_TUNING),  # PostgreSQL's files (targets/postgres/config.py)
    main_job=2,
)
