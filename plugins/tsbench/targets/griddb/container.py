"""GridDB as a container: the official image ``griddb/griddb`` at the definition's version.

``griddb/griddb:<version>-jammy`` (GridDB CE on Ubuntu 22.04, the GridDB project's own package of the
release the local recipe builds from source; the tag follows the image's published pattern and was
not pulled here: no registry is reachable from our machines). Its entry script initialises
``/var/lib/gridstore`` on first start: ``gs_passwd admin`` with ``GRIDDB_PASSWORD``, cluster name
``GRIDDB_CLUSTER_NAME``, and with ``NOTIFICATION_MEMBER=1`` a one-member fixed list at the container's
own address (ports 10010 cluster, 10020 sync, 10040 system, 10001 transaction, 20001 sql); then
``gs_startnode`` + ``gs_joincluster``. tsbench writes ``conf/gs_node.json`` first: the package's
defaults (relative paths, default ports, no service address) plus the definition's tuning table
(``dataStore``, ``checkpoint``), as the local recipe. ``data/`` (checkpointed data files) and
``txnlog/`` (transaction log) are the volumes that count as the footprint on disk.

Clients must reach the address the node reports (the container's own): true for a client on the
Docker host (bridge addresses are routed there); a remote client needs GridDB's public-address route.
"""

from __future__ import annotations

import json

from tsbench.runtimes.container_spec import ContainerSpec, HealthCheck
from tsbench.targets.griddb.client import CLUSTER, DATABASE, USER
from tsbench.targets.griddb.definition import DEFINITION
from tsbench.targets.griddb.server import tuning_sections

GS_HOME = "/var/lib/gridstore"
PASSWORD_VARIABLE = "TSBENCH_GRIDDB_PASSWORD"
PORTS = {"transaction": 10001, "system": 10040, "cluster": 10010, "sync": 10020, "sql": 20001}
VERSION = DEFINITION.version
TUNING = tuning_sections()

NODE_CONFIG = {
    **TUNING,
    "dataStore": {
        "dbPath": "data",
        "transactionLogPath": "txnlog",
        "backupPath": "backup",
        "syncTempPath": "sync",
        **TUNING["dataStore"],
    },
    "cluster": {"servicePort": PORTS["cluster"]},
    "sync": {"servicePort": PORTS["sync"]},
    "system": {"servicePort": PORTS["system"], "eventLogPath": "log"},
    "transaction": {"servicePort": PORTS["transaction"], "connectionLimit": 5000},
    "sql": {"servicePort": PORTS["sql"], "storeSwapFilePath": "swap"},
}

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
        files={f"{GS_HOME}/conf/gs_node.json": json.dumps(NODE_CONFIG, indent=2) + "\n"},
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
