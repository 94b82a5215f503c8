# shellcheck shell=bash
# Sourced by scripts/test.sh and .ci/run (after scripts/lib.sh): victoria-metrics is built from its Go
# module (install.sh; a few minutes the first time on a fresh machine, then instant) in the background
# while lint and the other tests run; tests/integration/test_victoriametrics.py waits for the status file.
vm_status="$TSBENCH_OPT/victoriametrics-build.status"
rm -f "$vm_status"
(
    set +e
    bash scripts/install.sh victoriametrics >"${vm_status%.status}.log" 2>&1
    echo $? >"$vm_status.tmp" && mv "$vm_status.tmp" "$vm_status"
) &
export TSBENCH_VICTORIAMETRICS_BUILD_STATUS="$vm_status"
