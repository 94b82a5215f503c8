"""The MongoDB server as a container: the official ``mongo`` image at the definition's version
(Docker Hub tag ``<version>``: MongoDB Community Server on Ubuntu 24.04, mongod installed from
repo.mongodb.org, mongosh included).

The image's entrypoint creates the root user from ``MONGO_INITDB_ROOT_USERNAME``/``_PASSWORD`` and
then starts mongod with ``--auth`` on all interfaces. While it creates the user it runs a temporary
mongod on 127.0.0.1 only, so the health check pings the container's own hostname (in /etc/hostname,
resolved through /etc/hosts to the container's address): it passes only once the final server
listens where clients connect. ``ping`` needs no login. The configuration ``config.py`` declares
for every runtime, here only the definition's tuning table (server parameters), is passed as
``--setParameter name=value`` — diagnostic data capture is off, as in the
local recipe, so /data/db holds only the database's files.
"""

from __future__ import annotations

from tsbench.runtimes.container_spec import ContainerSpec, HealthCheck
from tsbench.targets.mongodb.config import CONTAINER, mongod_options, set_parameters
from tsbench.targets.mongodb.definition import DEFINITION
from tsbench.targets.mongodb.server import DATABASE, USER, MongoServer

VERSION = DEFINITION.version
SERIES = VERSION.rsplit(".", 1)[0]  # e.g. 8.0: the flavour's name
PASSWORD_VARIABLE = "TSBENCH_MONGODB_PASSWORD"
PING = (
    'mongosh --quiet --norc --host "$(cat /etc/hostname)" '
    '--eval "quit(db.adminCommand({ping: 1}).ok ? 0 : 1)"'
)


CONTAINERS: dict[str, ContainerSpec] = {
    SERIES: ContainerSpec(
        image=f"mongo:{VERSION}",
        ports={"mongo": 27017},
        data_paths=("/data/db",),
        healthcheck=HealthCheck(command=("sh", "-c", PING), start_period_s=10.0),
        environment={"MONGO_INITDB_ROOT_USERNAME": USER},
        secret_env={"MONGO_INITDB_ROOT_PASSWORD": PASSWORD_VARIABLE},
        command=set_parameters(mongod_options(CONTAINER, DEFINITION.settings())),
        ulimits={"nofile": (64000, 64000)},
        stop_timeout_s=MongoServer.stop_timeout_s,  # shutdown ends with a checkpoint of dirty data
        client_user=USER,
        client_database=DATABASE,
        client_extra={"auth_source": "admin"},
        client_secrets={"password": PASSWORD_VARIABLE},
        note=(
            f"official image mongo:{VERSION} (Ubuntu 24.04 base); auth on with a root user made "
            "by the image's entrypoint (the local runtime makes the same user itself); FTDC off"
        ),
    ),
}
