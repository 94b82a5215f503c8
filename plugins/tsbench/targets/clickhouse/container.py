"""ClickHouse as a container: the official ``clickhouse/clickhouse-server`` image at the
definition's version (26.8 LTS).

The image's entry point creates the database named by ``CLICKHOUSE_DB`` and sets the password of
user ``default`` from ``CLICKHOUSE_PASSWORD`` (given through ``secret_env``, never written here).
The override of the stock configuration that ``config.py`` declares for every runtime (the
definition's tuning table; no background system log tables, no MySQL, PostgreSQL or interserver
listeners) is mounted into ``config.d``; otherwise the image's
stock configuration applies (listeners on all interfaces, 8123 HTTP / 9000 native).
"""

from __future__ import annotations

from tsbench.runtimes.container_spec import ContainerSpec, HealthCheck
from tsbench.targets.clickhouse.config import CONTAINER, config_text
from tsbench.targets.clickhouse.definition import DEFINITION
from tsbench.targets.clickhouse.server import DATABASE, USER

PASSWORD_VARIABLE = "TSBENCH_CLICKHOUSE_PASSWORD"
CLICKHOUSE_VERSION = DEFINITION.version
CONFIG_D = "/etc/clickhouse-server/config.d/tsbench.xml"
LINE = ".".join(CLICKHOUSE_VERSION.split(".")[:2])  # the release line, e.g. 26.8: the flavour's name

CONTAINERS: dict[str, ContainerSpec] = {
    LINE: ContainerSpec(
        image=f"clickhouse/clickhouse-server:{CLICKHOUSE_VERSION}",
        ports={"http": 8123, "native": 9000},
        data_paths=("/var/lib/clickhouse",),
        # /ping answers "Ok." without credentials once the server accepts queries; wget is in the image.
        healthcheck=HealthCheck(
            command=("wget", "--no-verbose", "--tries=1", "--spider", "http://127.0.0.1:8123/ping"),
            interval_s=2.0,
            timeout_s=5.0,
            retries=60,
            start_period_s=5.0,
        ),
        environment={"CLICKHOUSE_DB": DATABASE, "CLICKHOUSE_DEFAULT_ACCESS_MANAGEMENT": "1"},
        secret_env={"CLICKHOUSE_PASSWORD": PASSWORD_VARIABLE},
        files={CONFIG_D: config_text(CONTAINER, DEFINITION.settings(), "targets/clickhouse/container.py")},
        # ClickHouse keeps many part files open at once; its documentation asks for 262144.
        ulimits={"nofile": (262144, 262144)},
        client_user=USER,
        client_database=DATABASE,
        client_extra={"ingest": "HTTP, INSERT … FORMAT Arrow", "query": "HTTP (clickhouse-connect)"},
        client_secrets={"password": PASSWORD_VARIABLE},
        note=(
            f"official image clickhouse/clickhouse-server:{CLICKHOUSE_VERSION} ({LINE} LTS, Ubuntu based), "
            "stock configuration plus the definition's tuning, minus the background system log tables "
            "and unused listeners; same release as the local packages and the cloud install"
        ),
    ),
}
