"""QuestDB as a container: the official image ``questdb/questdb`` at the local runtime's version.

Same server as the local recipe: the one configuration (``config.py``, on the image's default listeners)
as ``QDB_*`` variables (QuestDB reads ``QDB_<KEY WITH DOTS AS UNDERSCORES>`` over its configuration
file), the same ``log.conf`` and heap (``JVM_PREPEND``; the image's entrypoint already adds
``-XX:+UseParallelGC``). The root directory is ``/var/lib/questdb``; ``db/`` (tables, symbol maps,
indexes, WAL segments) is the volume that counts as the footprint on disk. The PostgreSQL-wire password
and the HTTP login's (REST, ILP over HTTP) are one password generated per instance (the image's default
``quest`` is refused).
"""

from __future__ import annotations

from tsbench.runtimes.container_spec import ContainerSpec, HealthCheck
from tsbench.targets.questdb.config import CONTAINER, LOG_CONF, PG_USER, qdb_variable, server_conf
from tsbench.targets.questdb.definition import DEFINITION
from tsbench.targets.questdb.server import PG_DATABASE, java_options

VERSION = DEFINITION.version

ROOT = "/var/lib/questdb"
PASSWORD_VARIABLE = "TSBENCH_QUESTDB_PASSWORD"


# The min server's /status answers 200 when QuestDB is healthy. Bash builtins only (/dev/tcp, printf,
# read): the image needs neither curl nor coreutils for it.
STATUS_CHECK = (
    "exec 3<>/dev/tcp/127.0.0.1/9003"
    " && printf 'GET /status HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n' >&3"
    " && read -r status <&3 && [[ $status == *' 200 '* ]]"
)

CONTAINERS: dict[str, ContainerSpec] = {
    VERSION: ContainerSpec(
        image=f"questdb/questdb:{VERSION}",
        ports={"http": 9000, "min": 9003, "pg": 8812, "ilp": 9009},
        data_paths=(f"{ROOT}/db",),
        healthcheck=HealthCheck(("bash", "-c", STATUS_CHECK), interval_s=2.0, retries=60),
        environment={
            "JVM_PREPEND": " ".join(o for o in java_options() if o != "-XX:+UseParallelGC"),
            **{qdb_variable(k): v for k, v in server_conf(CONTAINER, DEFINITION.settings()).items()},
        },
        secret_env={qdb_variable(key): PASSWORD_VARIABLE for key in ("pg.password", "http.password")},
        files={f"{ROOT}/conf/log.conf": LOG_CONF},
        # QuestDB maps one file per column and partition: its documentation asks for a high limit.
        ulimits={"nofile": (1048576, 1048576)},
        client_user=PG_USER,
        client_database=PG_DATABASE,
        client_extra={"ingest": "ILP over HTTP", "query": "PostgreSQL wire"},
        client_secrets={"password": PASSWORD_VARIABLE},
        stop_timeout_s=60.0,
        note=(
            f"official image questdb/questdb:{VERSION} (Apache-2.0 open source edition), the local "
            "runtime's version and tuning (server.conf keys as QDB_* variables); one password (PG wire and "
            "HTTP Basic) generated per instance"
        ),
    ),
}
