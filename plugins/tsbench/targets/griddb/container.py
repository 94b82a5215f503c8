"""GridDB as a container: the official image ``griddb/griddb`` at the definition's version.

``griddb/griddb:<version>-jammy`` (GridDB CE on Ubuntu 22.04, the GridDB project's own package of the
release the local recipe builds from source; the tag follows the image's published pattern and was not
pulled here: no registry is reachable from our machines). Its entry script initialises
``/var/lib/gridstore`` on first start: ``gs_passwd admin`` with ``GRIDDB_PASSWORD``, cluster name
``GRIDDB_CLUSTER_NAME``, and with ``NOTIFICATION_MEMBER=1`` a one-member fixed list at the container's
own address (ports 10010 cluster, 10020 sync, 10040 system, 10001 transaction, 20001 sql); then
``gs_startnode`` + ``gs_joincluster``. tsbench writes ``conf/gs_node.json`` first: the one configuration
(``config.py``) with relative paths, default ports and no service address, as the local recipe.
``data/`` (checkpointed data files) and ``txnlog/`` (transaction log) are the volumes that count as the
footprint on disk.

Clients must reach the address the node reports (the container's own): true for a client on the
Docker host (bridge addresses are routed there); a remote client needs GridDB's public-address route.
"""

from __future__ import annotations

from tsbench.runtimes.container_spec import ContainerSpec, HealthCheck
from tsbench.targets.griddb.client import CLUSTER, DATABASE, USER
from tsbench.targets.griddb.config import CONTAINER, PORTS, json_text, node_config
from tsbench.targets.griddb.definition import DEFINITION
from tsbench.targets.griddb.server import tuning_json

GS_HOME = "/var/lib/gridstore"
PASSWORD_VARIABLE = "TSBENCH_GRIDDB_PASSWORD"
VERSION = DEFINITION.version
NODE_CONFIG = node_config(CONTAINER, tuning_json())

# Healthy once the node has formed the cluster (gs_stat reads /node/stat on the system port).
MASTER_CHECK = (
    f'gs_stat -u {USER}/"$GRIDDB_PASSWORD" --no-proxy 2>/dev/null | grep -Eq \'"clusterStatus": *"MASTER"\''
)

CONTAINERS: dict[str, ContainerSpec] = {
    VERSION: ContainerSpec(
        image=f"griddb/griddb:{VERSION}-jammy",
        ports=PORTS,
        data_paths=(f"{GS_HOME}/data", f"{GS_HOME}/txnlog"),
        healthcheck=HealthCheck(
            ("bash", "-c", MASTER_CHECK), interval_s=2.0, retries=90, start_period_s=10.0
        ),
        environment={
            "GRIDDB_CLUSTER_NAME": CLUSTER,
            "GRIDDB_USERNAME": USER,
            "NOTIFICATION_MEMBER": "1",
        },
        secret_env={"GRIDDB_PASSWORD": PASSWORD_VARIABLE},
        files={f"{GS_HOME}/conf/gs_node.json": json_text(NODE_CONFIG)},
        client_user=USER,
        client_database=DATABASE,
        client_extra={"cluster": CLUSTER, "ingest": "GridStore.multiPut", "query": "TQL (fetchAll)"},
        client_secrets={"password": PASSWORD_VARIABLE},
        stop_timeout_s=120.0,
        note=(
            f"official image griddb/griddb:{VERSION}-jammy (GridDB Community Edition), the definition's "
            "version and dataStore/checkpoint tuning; one-node fixed-list cluster 'tsbench'; admin password "
            "generated per instance"
        ),
    ),
}
