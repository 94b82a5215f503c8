# shellcheck shell=bash
# Sourced by scripts/test.sh (after scripts/lib.sh); both recipes get definition.py's variables:
# * the client side (install_client.sh: the release's Java client + tsbench's Bulk helper; ≈ 25 s the
#   first time, then instant) in the foreground: the shaping and combine tests need it at once;
# * the server (build.sh: ≈ 30 min the first time on 2 cores, then instant) in the background while
#   lint and the other tests run; tests/integration/test_griddb_server.py waits for the status file
#   and fails when the build failed.
griddb_here="$(dirname "${BASH_SOURCE[0]}")"
mapfile -t griddb_variables < <(PYTHONPATH=plugins .venv/bin/python -m tsbench.runtimes.definition griddb)
env "${griddb_variables[@]}" bash "$griddb_here/install_client.sh" >/dev/null
griddb_status="$TSBENCH_OPT/griddb-build.status"
rm -f "$griddb_status"
(
    set +e
    env "${griddb_variables[@]}" bash "$griddb_here/build.sh" >"${griddb_status%.status}.log" 2>&1
    echo $? >"$griddb_status.tmp" && mv "$griddb_status.tmp" "$griddb_status"
) &
export TSBENCH_GRIDDB_BUILD_STATUS="$griddb_status"
