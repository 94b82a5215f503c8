"""ClickHouse's server definition: version, tuning table and install recipe for every runtime.

``tuning`` holds ``config.xml`` elements as dotted paths (``logger.level`` is
``<logger><level>…</level></logger>``) and ends the one configuration (``config.py``): the local
recipe (``server.py``) writes its complete ``config.xml``, the container (``container.py``) and the
cloud host (``cloud_files``, printed by ``clickhouse_config`` and ``clickhouse_users`` in
``cloud_install.sh``) the ``config.d`` override of the stock configuration. Reasons in README.md
("Configuration").
"""

from __future__ import annotations

from tsbench.runtimes.definition import ServerDefinition, TuningValue, cloud_tuning
from tsbench.targets.clickhouse.config import CLOUD, config_text, users_text

TUNING: dict[str, TuningValue] = {
    # Warnings and errors only: the stock level (trace) logs every query and merge.
    "logger.level": "warning",
    # Server time zone (function defaults, log timestamps); every column is DateTime64(9, 'UTC').
    "timezone": "UTC",
}

DEFINITION = ServerDefinition(
    name="clickhouse",
    # 26.8 is the current LTS line: apt packages clickhouse-common-static/-server/-client of
    # packages.clickhouse.com (local, cloud) and image clickhouse/clickhouse-server:<version>.
    version="26.8.19.9",
    tuning=TUNING,
    cloud_files={  # $hash: the SHA-256 of the host's password, computed by its script
        "clickhouse_config": config_text(CLOUD, cloud_tuning(TUNING), "definition.py's cloud_files"),
        "clickhouse_users": users_text(CLOUD, "$hash"),
    },
)
