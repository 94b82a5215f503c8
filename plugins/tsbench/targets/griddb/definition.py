"""GridDB CE's server definition: version, ``gs_node.json`` tuning table and install recipe for
every runtime.

``tuning`` holds ``gs_node.json`` members as ``<section>.<key>`` (whole numbers are written as JSON
numbers, other values as strings), in the one configuration (``config.py``): the local recipe
(``server.py``) and the container (``container.py``) write it into their ``gs_node.json``, the cloud
host writes the files rendered here (``cloud_files``, printed by ``griddb_node_json`` and
``griddb_cluster_json`` in ``cloud_install.sh``). Reasons in README.md ("Local server").
"""

from __future__ import annotations

from tsbench.runtimes.definition import Scaled, ServerDefinition, TuningValue
from tsbench.targets.griddb.config import CLOUD, cloud_value, cluster_config, json_text, node_config

TUNING: dict[str, TuningValue] = {
    # The block cache holding recent rows (default 1024MB): half the RAM, at least 1 GiB, as the
    # cloud hosts always had (12288MB on the 24 GiB benchmark machine; local and docker used a
    # fixed 8192MB before the three runtimes shared this table).
    "dataStore.storeMemoryLimit": Scaled("memory_mib", 1, 2, minimum=1024, suffix="MB"),
    # Processing threads (default 4): one per core.
    "dataStore.concurrency": Scaled("cores"),
    # GridDB's defaults, stated: no compression (CE), transaction log flushed every second,
    # normal persistency, affinity groups of 4, a checkpoint every 60 s.
    "dataStore.storeCompressionMode": "NO_COMPRESSION",
    "dataStore.logWriteMode": "1",
    "dataStore.persistencyMode": "NORMAL",
    "dataStore.affinityGroupSize": "4",
    "checkpoint.checkpointInterval": "60s",
}

DEFINITION = ServerDefinition(
    name="griddb",
    # Built from the pinned upstream source (server and Java client; build.sh, install_client.sh).
    version="5.9.0",
    tuning=TUNING,
    local_build_minutes=30,  # build.sh, once per machine on 2 cores
    # The source of that release (server and Java client: build.sh, install_client.sh): upstream's tag
    # archive of commit 838eda4 = tag v5.9.0, taken from the vendor folder (as NAME) or downloaded from
    # its URL, verified by its tree hash (runtimes/source_archive.py: the vendored copy's top folder
    # and compression differ from upstream's); the same commit fetched with git on a cloud VM
    # (cloud_install.sh). All belong to the pin.
    install_env={
        "GRIDDB_SOURCE_COMMIT": "838eda47b460739291d9acf3410819b8203ac22d",
        "GRIDDB_SOURCE_ARCHIVE": "griddb-5.9.0-838eda4.tar.gz",
        "GRIDDB_SOURCE_URL": "https://github.com/griddb/griddb/archive/refs/tags/v5.9.0.tar.gz",
        "GRIDDB_SOURCE_TREE_SHA256": "49a2e2dcd08cd98d8b83e4c916dbce0a1582aeec99cfebb89a491b0a0cf3810e",
        # GridDB's JDBC driver (its SQL interface; the iot queries): not in the source archive; the
        # newest release on Maven Central (com.github.griddb:gridstore-jdbc), fetched by
        # install_client.sh with mvn and checked against this sha256.
        "GRIDDB_JDBC_VERSION": "5.6.0",
        "GRIDDB_JDBC_SHA256": "9de70e8afb78412072c2c824571e705199a9c5f2a574d48751e26756cb38f3fc",
    },
    cloud_files={
        "griddb_node_json": json_text(node_config(CLOUD, {k: cloud_value(v) for k, v in TUNING.items()})),
        "griddb_cluster_json": json_text(cluster_config(CLOUD)),
    },
)
