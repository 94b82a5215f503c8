"""IoTDB as a container: the official image ``apache/iotdb:<version>-standalone`` (a ConfigNode and a
DataNode in one container, upstream's own build of the release the local recipe assembles from Maven
Central; the tag follows upstream's published pattern and was not pulled here: no registry is
reachable from our machines).

The image writes ``iotdb-system.properties`` from variables named as its keys: the one table
(``definition.py``), each node's address (the container's own host name) and the DataNode's client
RPC on 6667. The command starts upstream's entry script, then, at the first start, replaces root's
stock password with the instance's (``IOTDB_PASSWORD``, generated per instance, never on a command
line): the health check logs in with that password only, so the container is healthy once the
stock login is gone.
"""

from __future__ import annotations

from tsbench.runtimes.container_spec import ContainerSpec, HealthCheck
from tsbench.targets.iotdb.client import USER
from tsbench.targets.iotdb.definition import DEFINITION
from tsbench.targets.iotdb.server import PORT_KEYS

VERSION = DEFINITION.version
HOST = "iotdb"
RPC_PORT = 6667
INTERNAL_PORTS = (10710, 10720, 10730, 10740, 10750, 10760)  # in server.PORT_KEYS' order after rpc
PASSWORD_VARIABLE = "TSBENCH_IOTDB_PASSWORD"
CLI = f'start-cli.sh -h 127.0.0.1 -p {RPC_PORT} -u {USER} -pw "$IOTDB_PASSWORD" -e "SHOW VERSION"'
STOCK_CLI = f"start-cli.sh -h 127.0.0.1 -p {RPC_PORT} -u {USER} -pw root -e"
START = (
    "entrypoint.sh standalone & server=$!; "
    f"until {CLI} >/dev/null 2>&1 || {STOCK_CLI} 'SHOW VERSION' >/dev/null 2>&1; do sleep 2; done; "
    f"{CLI} >/dev/null 2>&1 || {STOCK_CLI} \"ALTER USER {USER} SET PASSWORD '$IOTDB_PASSWORD'\"; "
    "wait $server"
)

CONTAINERS: dict[str, ContainerSpec] = {
    VERSION: ContainerSpec(
        image=f"apache/iotdb:{VERSION}-standalone",
        # Every role of the local recipe at IoTDB's default port; clients use rpc alone.
        ports=dict(zip(PORT_KEYS, (RPC_PORT, *INTERNAL_PORTS), strict=True)),
        data_paths=("/iotdb/data",),
        healthcheck=HealthCheck(("bash", "-c", CLI), interval_s=3.0, retries=100, start_period_s=20.0),
        environment={
            "cn_internal_address": HOST,
            "cn_seed_config_node": f"{HOST}:10710",
            "dn_internal_address": HOST,
            "dn_seed_config_node": f"{HOST}:10710",
            "dn_rpc_address": "0.0.0.0",
            "dn_rpc_port": str(RPC_PORT),
            **DEFINITION.settings(),
        },
        secret_env={"IOTDB_PASSWORD": PASSWORD_VARIABLE},
        command=("bash", "-c", START),
        client_user=USER,
        client_secrets={"password": PASSWORD_VARIABLE},
        stop_timeout_s=120.0,
        note=(
            f"official image apache/iotdb:{VERSION}-standalone (a pre-release: 2.0.1-beta, the newest IoTDB "
            "whose server resolves from Maven Central here); the same properties; root's password "
            "generated per instance"
        ),
    ),
}
