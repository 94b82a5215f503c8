"""ClickHouse's server definition: version, tuning table and install recipe for every runtime.

``tuning`` holds ``config.xml`` elements as dotted paths (``logger.level`` is
``<logger><level>…</level></logger>``). The local recipe (``server.py``) writes them into its
complete ``config.xml``; the container (``container.py``) and the cloud host (``cloud_install.sh``)
write them into the same ``config.d/tsbench.xml`` override, next to the removals of the background
system log tables and unused listeners (``server.py``). Reasons in README.md ("Configuration").
"""

from __future__ import annotations

from tsbench.runtimes.definition import ServerDefinition

DEFINITION = ServerDefinition(
    name="clickhouse",
    # 26.8 is the current LTS line: apt packages clickhouse-common-static/-server/-client of
    # packages.clickhouse.com (local, cloud) and image clickhouse/clickhouse-server:<version>.
    version="26.8.19.9",
    tuning={
        # Warnings and errors only: the stock level (trace) logs every query and merge.
        "logger.level": "warning",
        # Server time zone (function defaults, log timestamps); every column is DateTime64(9, 'UTC').
        "timezone": "UTC",
    },
)
