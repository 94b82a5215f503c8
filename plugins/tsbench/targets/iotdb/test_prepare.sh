# shellcheck shell=bash
# Sourced by scripts/test.sh and .ci/run (after scripts/lib.sh): IoTDB's jars are fetched from Maven
# Central and its loopback shim compiled (install.sh; about 15 s on a fresh machine, then instant) in
# the background while lint and the other tests run; tests/integration/test_iotdb_server.py waits for
# the status file and fails when the install failed.
iotdb_status="$TSBENCH_OPT/iotdb-build.status"
rm -f "$iotdb_status"
(
    set +e
    bash scripts/install.sh iotdb >"${iotdb_status%.status}.log" 2>&1
    echo $? >"$iotdb_status.tmp" && mv "$iotdb_status.tmp" "$iotdb_status"
) &
export TSBENCH_IOTDB_BUILD_STATUS="$iotdb_status"
