"""PostgreSQL's server definition: version, tuning table and install recipe for every runtime.

``tuning`` ends the one configuration (``config.py``): the local recipe (``server.py``) writes it to
``<data>/tsbench.conf``, the container (``container.py``) passes it as ``-c key=value`` arguments and
the cloud host writes the files rendered here (``cloud_files``). TimescaleDB's definition extends this
table, so both databases run with identical tuning. Every setting is explained in README.md.
"""

from __future__ import annotations

from tsbench.runtimes.definition import Scaled, ServerDefinition
from tsbench.targets.postgres.config import cloud_files

PG_MAJOR = "15"


def whole_gib(numerator: int, denominator: int) -> Scaled:
    """A share of the RAM in whole GiB (at least 1), written as ``<n>GB``."""
    return Scaled("memory_mib", numerator, denominator, step=1024, minimum=1024, suffix="GB", scale_by=1024)


# Sized to the machine (6GB, 16GB, 16, 2, 1 on the 2-core / 24 GiB benchmark box; one database server
# at a time). Durability stays fully on: fsync, full_page_writes and synchronous_commit keep their
# safe defaults.
TUNING = {
    # memory: a quarter of the RAM for shared buffers, two thirds as the planner's cache estimate
    "shared_buffers": whole_gib(1, 4),
    "effective_cache_size": whole_gib(2, 3),
    "work_mem": "64MB",
    "maintenance_work_mem": "1GB",
    "wal_buffers": "64MB",
    # WAL and checkpoints: fewer, spread-out checkpoints while loading
    "max_wal_size": "8GB",
    "checkpoint_timeout": "15min",
    "checkpoint_completion_target": "0.9",
    "wal_compression": "lz4",
    # durability (the defaults, stated so the report shows them)
    "fsync": "on",
    "synchronous_commit": "on",
    "full_page_writes": "on",
    # parallelism: every core for parallel workers, half of them per gather; planner for SSD
    "max_worker_processes": Scaled("cores", 8, 1, minimum=16),
    "max_parallel_workers": Scaled("cores"),
    "max_parallel_workers_per_gather": Scaled("cores", 1, 2),
    "random_page_cost": "1.1",
    "effective_io_concurrency": "200",
    "jit": "off",
    # statistics and visibility maps for freshly loaded tables soon after a load
    "autovacuum_naptime": "10s",
    # determinism
    "timezone": "UTC",
    "log_timezone": "UTC",
}

DEFINITION = ServerDefinition(
    name="postgres",
    version=f"{PG_MAJOR}.18",  # Debian 12's postgresql-15 (local, cloud); image postgres:<version>
    tuning=TUNING,
    install_env={"PG_MAJOR": PG_MAJOR},
    cloud_files=cloud_files(TUNING),
    main_job=3,
)
