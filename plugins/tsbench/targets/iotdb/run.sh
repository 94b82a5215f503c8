#!/usr/bin/env bash
# The local IoTDB server as one foreground process (the local runtime's recipe runs this, server.py):
# a ConfigNode and a DataNode, IoTDB's two processes, started side by side from the jars install.sh
# put in <lib>; the DataNode registers with the ConfigNode as soon as it answers.
#
#   run.sh <java> <lib dir> <loopback shim .so> <home> <ConfigNode options> <DataNode options>
#
# <home>/conf/iotdb-system.properties (server.py writes it) configures both; each process keeps its
# state under <home>/data. SIGTERM (or SIGINT) stops the DataNode first, then the ConfigNode, each
# through its own shutdown hook; either process exiting on its own stops the other, and this script
# exits with that process's status.
set -uo pipefail
java=$1 lib=$2 shim=$3 home=$4 confignode_options=$5 datanode_options=$6
# Options every IoTDB 2.0 process needs on Java 17 (upstream's start scripts pass the same opens).
opens=(--add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED
    --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED
    --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
    --add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
    --add-opens=java.base/jdk.internal.misc=ALL-UNNAMED -Djava.net.preferIPv4Stack=true)
export LD_PRELOAD=$shim IOTDB_HOME=$home IOTDB_CONF=$home/conf CONFIGNODE_HOME=$home CONFIGNODE_CONF=$home/conf
cd "$home" || exit 1
# shellcheck disable=SC2086 # the options are words
"$java" "${opens[@]}" $confignode_options -DCONFIGNODE_HOME="$home" -DCONFIGNODE_CONF="$home/conf" \
    -cp "$lib/*" org.apache.iotdb.confignode.service.ConfigNode -s >>"$home/confignode.out" 2>&1 &
confignode=$!
# shellcheck disable=SC2086
"$java" "${opens[@]}" $datanode_options -DIOTDB_HOME="$home" -DIOTDB_CONF="$home/conf" \
    -cp "$lib/*" org.apache.iotdb.db.service.DataNode -s >>"$home/datanode.out" 2>&1 &
datanode=$!
stop() {
    kill -TERM "$datanode" 2>/dev/null
    wait "$datanode"
    kill -TERM "$confignode" 2>/dev/null
    wait "$confignode"
    exit 0
}
trap stop TERM INT
wait -n "$confignode" "$datanode"
status=$?
echo "run.sh: an IoTDB process exited on its own (status $status); stopping the other" >&2
kill -TERM "$confignode" "$datanode" 2>/dev/null
wait
exit "$status"
