"""InfluxDB 1.x's server definition: version, ``[data]`` tuning table, Go GC settings and install
recipe for every runtime.

``tuning`` is the ``[data]`` table of the one configuration (``config.py``): the local recipe
(``server.py``) writes it to ``influxdb.conf``, the default container (``container.py``, flavour 1.8)
passes it as ``INFLUXDB_*`` variables and the cloud host writes the file rendered here
(``cloud_files``, printed by ``influxdb_conf`` in ``cloud_install.sh``). Reasons for each value in
README.md ("Configuration").
"""

from __future__ import annotations

from tsbench.runtimes.definition import Scaled, ServerDefinition, TuningValue
from tsbench.targets.influxdb.config import CLOUD, cloud_value, influxdb_config, toml_text

# GOMEMLIMIT: half the RAM, in MiB.
HALF_THE_RAM = Scaled("memory_mib", 1, 2, suffix="MiB")

# The [data] table (config.py writes it there in every form).
DATA_TABLE: dict[str, TuningValue] = {
    # inmem: the series index lives in the Go heap (rebuilt from the TSM files at start-up).
    # Faster writes and queries than tsi1 at the cardinalities we run; tsi1 only pays off when the
    # index no longer fits in memory.
    "index-version": "inmem",
    # Writes are refused once the in-memory cache reaches cache-max-memory-size (default 1g): 4g
    # leaves headroom for two writers while a snapshot is written. Snapshots to TSM files start at
    # cache-snapshot-memory-size; the default (25m) keeps data moving into compressed TSM files.
    "cache-max-memory-size": "4g",
    "cache-snapshot-memory-size": "25m",
    # 0: fsync the WAL on every write before answering 204 (durable per request).
    "wal-fsync-delay": "0s",
    # 0 = unlimited: high-cardinality scales (100k+ hosts × measurements × extra tags) must load.
    "max-series-per-database": "0",
    "max-values-per-tag": "0",
    # 0 = default (half the cores).
    "max-concurrent-compactions": "0",
}

# Other 1.x releases install.sh builds beside the pin into $TSBENCH_OPT/influxdb/<version>/, so a run's
# ``versions`` compares them (target instances influxdb@<version>, local processes): the newest 1.x the
# Go module proxy serves, whose Flux needs its Rust library (flux_build.sh). Each was built and started
# here with config.py's configuration (tests/integration/test_influxdb_releases.py).
RELEASES = ("1.13.2",)

DEFINITION = ServerDefinition(
    name="influxdb",
    # InfluxData's package (cloud) and image influxdb:<version>; the local runtime builds the same
    # version from its Go module (install.sh): InfluxData's downloads are not reachable from our machines.
    version="1.8.10",
    tuning=DATA_TABLE,
    process={
        # Go GC target: with Go's default (100) the write path spends about a quarter of its CPU in
        # GC. The live heap is small next to the RAM, so let it grow 10x between collections, capped
        # by a soft memory limit at half the RAM (GOMEMLIMIT, Go >= 1.19; near the cap the GC simply
        # runs more often). Server CPU per 864k cpu rows: GOGC 100 → 10.7 s, 400 → 9.7 s, 1000 → 8.9 s.
        "gogc": "1000",
        "gomemlimit": HALF_THE_RAM,
    },
    cloud_files={
        "influxdb_conf": toml_text(influxdb_config(CLOUD, {k: cloud_value(v) for k, v in DATA_TABLE.items()}))
    },
    main_job=4,
    releases=RELEASES,
    # Docker (image tag) and aws (InfluxData's package) derive their version from the pin alone.
    release_runtimes=("local",),
)
