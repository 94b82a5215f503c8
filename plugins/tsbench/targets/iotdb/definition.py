"""Apache IoTDB's server definition: version, the one properties table and the processes' heaps.

``tuning`` holds the keys of ``conf/iotdb-system.properties`` that tsbench sets beyond each runtime's
own listeners and directories (``server.py`` writes those); ``process`` the JVM heaps of IoTDB's two
processes. Reasons for each value in README.md ("Configuration").

The version is the newest IoTDB whose server resolves from Maven Central as served here: 2.0.1-beta,
a pre-release. The 2.0.x releases' parent POM ``org.apache.iotdb:iotdb-core`` is not served for any
of them (2.0.10: 404), so their server jars cannot be resolved, and 1.3.x lacks the server jar itself.
"""

from __future__ import annotations

from tsbench.runtimes.definition import Scaled, ServerDefinition

PROPERTIES: dict[str, str] = {
    # Instants kept to the millisecond (the default, said aloud): every dataset's rows are whole
    # milliseconds (the writer refuses any other). With "ns", time_partition_interval, given in ms,
    # would have to be restated; the default week of partitions stays as upstream tests it.
    "timestamp_precision": "ms",
    # The harness's query timeout (the default 60 s cancels all-host queries at large scales).
    "query_timeout_threshold": "600000",
    # A device's series come from the load's schema template, activated by its first write (the
    # default, said aloud; without it every host's series would be created ahead, one by one).
    "enable_auto_create_schema": "true",
    # No REST or MQTT listener: the session protocol is the one client path (defaults, said aloud;
    # the metric reporters' lists are empty by default too, so no Prometheus port opens either).
    "enable_rest_service": "false",
    "enable_mqtt_service": "false",
}

DEFINITION = ServerDefinition(
    name="iotdb",
    # org.apache.iotdb:iotdb-server and iotdb-confignode on Maven Central (install.sh).
    version="2.0.1-beta",
    tuning=PROPERTIES,
    process={
        "confignode_heap": "512m",
        # Memtables, caches and query buffers live on the heap: a quarter of the RAM, 1 to 4 GiB.
        "datanode_heap": Scaled(
            "memory_mib", 1, 4, step=1024, minimum=1024, maximum=4096, suffix="g", scale_by=1024
        ),
    },
    local_build_minutes=2,
)
