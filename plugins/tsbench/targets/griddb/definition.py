"""GridDB CE's server definition: version, ``gs_node.json`` tuning table and install recipe for
every runtime.

``tuning`` holds ``gs_node.json`` members as ``<section>.<key>`` (whole numbers are written as JSON
numbers, other values as strings). The local recipe (``server.py``) and the container
(``container.py``) put them into their ``gs_node.json``, the cloud host's ``gs_node.json`` is written
from the same table (``cloud_install.sh``). Reasons in README.md ("Local server").
"""

from __future__ import annotations

from tsbench.runtimes.definition import Scaled, ServerDefinition

DEFINITION = ServerDefinition(
    name="griddb",
    # The official release package griddb_<version>_amd64.deb (local, cloud) and the image
    # griddb/griddb:<version>-jammy built from it.
    version="5.6.0",
    tuning={
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
    },
    # The package's checksum (as in the image's Dockerfile): belongs to the pinned version.
    install_env={
        "GRIDDB_DEB_SHA512": "1b19a75c5c60cf320ae836d495c82aad4c0eb4ea81d6666ca5c9aca33dbb8ae2e87d56fd5c"
        "784fc10e50536328c02550c22c032d175c75bd5a1b858f48b0c6f5"
    },
)
