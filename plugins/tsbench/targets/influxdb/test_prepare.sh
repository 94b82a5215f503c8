# shellcheck shell=bash
# Sourced by scripts/test.sh (after scripts/lib.sh): influxd 2.7 is built from its Go module
# (install_v2.sh; ≈ 8 min the first time on a fresh machine, then instant) in the background while
# lint and the other tests run; tests/integration/test_influxdb_v2.py waits for the status file.
influx2_status="$TSBENCH_OPT/influxdb2-build.status"
rm -f "$influx2_status"
(
    set +e
    bash "$(dirname "${BASH_SOURCE[0]}")/install_v2.sh" >"${influx2_status%.status}.log" 2>&1
    echo $? >"$influx2_status.tmp" && mv "$influx2_status.tmp" "$influx2_status"
) &
export TSBENCH_INFLUXD2="$TSBENCH_OPT/influxdb2/influxd" TSBENCH_INFLUXD2_BUILD_STATUS="$influx2_status"
