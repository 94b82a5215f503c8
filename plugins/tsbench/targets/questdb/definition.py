"""QuestDB's server definition: version, tuning table and install recipe for every runtime.

``tuning`` ends the one configuration (``config.py``): the local recipe (``server.py``) writes it to
``conf/server.conf``, the container (``container.py``) passes it as ``QDB_*`` variables and the cloud
host writes the files rendered here (``cloud_files``, printed by ``questdb_server_conf`` and
``questdb_log_conf`` in ``cloud_install.sh``); the heap comes from ``process``. Reasons for each value
in README.md ("Configuration and tuning").
"""

from __future__ import annotations

from tsbench.runtimes.definition import Scaled, ServerDefinition, TuningValue, cloud_tuning
from tsbench.targets.questdb.config import CLOUD, LOG_CONF, properties_text, server_conf

# One WAL-apply / O3-write thread per two cores (1 on our 2-core machines).
HALF_THE_CORES = Scaled("cores", 1, 2, minimum=1)

TUNING: dict[str, TuningValue] = {
    # Idle worker threads yield-spin for 7,000 empty loops by default before they nap 1 ms; on 2
    # cores the sched_yield storm takes CPU from the parsing thread and the client. 1,000 loops
    # still cover the gap between back-to-back queries (a few ms).
    "shared.worker.nap.threshold": "1000",
    # A whole ILP/HTTP request (10,000 cpu rows with tags ≈ 3.4 MB) fits the receive buffer and
    # the socket buffer: the client sends it in one go and the server parses it in one pass.
    "http.recv.buffer.size": "16m",
    "http.net.connection.rcvbuf": "16m",
    # WAL apply is light (≈2 ms per 10,000-row transaction): half the cores for apply and O3
    # writes instead of one per core, and the apply thread sleeps soon after it runs out of work.
    "wal.apply.worker.count": HALF_THE_CORES,
    "shared.write.worker.count": HALF_THE_CORES,
    "wal.apply.worker.yield.threshold": "10",
    "wal.apply.worker.nap.threshold": "20",
    "wal.apply.worker.sleep.threshold": "100",
    # Append pages of open table writers are preallocated on disk (16 MiB per column file by
    # default): smaller pages keep a just-loaded table's footprint close to its data; idle
    # writers are closed (files truncated) after 30 s instead of 10 min.
    "cairo.writer.data.append.page.size": "2m",
    "cairo.writer.data.index.value.append.page.size": "1m",
    "cairo.inactive.writer.ttl": "30s",
    "cairo.idle.check.interval": "10s",
}

# Every other 9.x release of org.questdb:questdb on Maven Central, newest first: install.sh fetches any
# of them beside the pin into $TSBENCH_OPT/questdb/questdb-<version>.jar, so a run's ``versions``
# compares them (target instances questdb@<version>, local processes). A declared list, not Central's
# listing read at run time: validation stays offline and the same on every machine; each was started
# here with config.py's configuration (its KEY_SINCE drops the keys the oldest do not read), and
# tests/integration/test_questdb_releases.py checks the list against Central's maven-metadata.xml.
RELEASES = (
    "9.3.2",
    "9.3.1",
    "9.3.0",
    "9.2.3",
    "9.2.2",
    "9.2.1",
    "9.2.0",
    "9.1.1",
    "9.1.0",
    "9.0.3",
    "9.0.2",
    "9.0.1",
)

DEFINITION = ServerDefinition(
    name="questdb",
    version="9.3.4",  # org.questdb:questdb on Maven Central; image questdb/questdb:<version>
    main_job=1,
    tuning=TUNING,
    process={
        # Table data lives off-heap (mmap); the heap only holds query/ingest state: a quarter of the
        # RAM, between 1 and 2 GiB (2 GiB on our 24 GiB machines).
        "heap_min": "1g",
        "heap_max": Scaled(
            "memory_mib", 1, 4, step=1024, minimum=1024, maximum=2048, suffix="g", scale_by=1024
        ),
    },
    releases=RELEASES,
    # Docker (image tag) and aws (cloud install) derive their version from the pin alone for now.
    release_runtimes=("local",),
    cloud_files={
        "questdb_server_conf": properties_text(server_conf(CLOUD, cloud_tuning(TUNING))),
        "questdb_log_conf": LOG_CONF,
    },
)
