# shellcheck shell=bash
# Sourced by scripts/test.sh (after scripts/lib.sh): influxd 2.7 (install_v2.sh), then the other 1.x
# releases definition.py declares (install.sh at each version, with Flux's Rust library), are built from
# their Go modules (≈ 8 min each the first time on a fresh machine, then instant) in the background,
# one after the other (both builds want both cores), while lint and the other tests run;
# tests/integration/test_influxdb_v2.py and test_influxdb_releases.py wait for their status files.
influx2_status="$TSBENCH_OPT/influxdb2-build.status"
influx_releases_status="$TSBENCH_OPT/influxdb-releases-build.status"
rm -f "$influx2_status" "$influx_releases_status"
(
    set +e
    here="$(dirname "${BASH_SOURCE[0]}")"
    bash "$here/install_v2.sh" >"${influx2_status%.status}.log" 2>&1
    echo $? >"$influx2_status.tmp" && mv "$influx2_status.tmp" "$influx2_status"
    root="$here/../../../.."
    releases="$(PYTHONPATH="$root/plugins" "${TSBENCH_PYTHON:-${TSBENCH_VENV:-$root/.venv}/bin/python}" \
        -m tsbench.runtimes.definition --releases influxdb)"
    code=$?
    for release in $releases; do
        bash "$root/scripts/install.sh" "influxdb@$release" || code=$?
    done >"${influx_releases_status%.status}.log" 2>&1
    echo "$code" >"$influx_releases_status.tmp" && mv "$influx_releases_status.tmp" "$influx_releases_status"
) &
export TSBENCH_INFLUXD2="$TSBENCH_OPT/influxdb2/influxd" TSBENCH_INFLUXD2_BUILD_STATUS="$influx2_status"
export TSBENCH_INFLUXDB_RELEASES_BUILD_STATUS="$influx_releases_status"
