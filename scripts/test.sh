#!/usr/bin/env bash
# Set up everything the tests need on a fresh Debian machine, then run lint and the whole test suite.
# Fails when pytest collects no test (exit 5), when a test is skipped, and on any failure.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup_python.sh
echo "== servers and tools (installed by the project's scripts; idempotent)"
bash scripts/install_all.sh            # the main job's servers (targets' install.sh), MinIO
bash scripts/install_report_tools.sh   # Chromium, poppler-utils, fonts (to look at reports)
bash scripts/install_test_tools.sh     # the linter of the shell scripts
# Whatever this script starts stops when it ends, passed or failed: the private Docker engine (when
# it started it) and the background builds of the targets' test preparations.
# shellcheck disable=SC2317  # run by the EXIT trap
kill_tree() {  # a process and every descendant (a build: its script, make, the compilers)
    local child
    for child in $(pgrep -P "$1"); do kill_tree "$child"; done
    kill -TERM "$1" 2>/dev/null || true
}
# shellcheck disable=SC2317  # run by the EXIT trap
descendants() {
    local child
    for child in $(pgrep -P "$1"); do echo "$child" && descendants "$child"; done
}
# shellcheck disable=SC2317  # run by the EXIT trap
stop_marked_processes() {  # marked (pytest and what it started), no longer in this script's tree
    [[ -n "${TSBENCH_TEST_SESSION:-}" ]] || return 0
    local environ pid left=() ours
    ours=" $$ $BASHPID $(descendants $$ | tr '\n' ' ') "
    for environ in /proc/[0-9]*/environ; do
        pid="${environ#/proc/}" && pid="${pid%/environ}"
        [[ "$ours" == *" $pid "* ]] && continue
        if { tr '\0' '\n' <"$environ"; } 2>/dev/null | grep -qxF "TSBENCH_TEST_SESSION=$TSBENCH_TEST_SESSION"; then
            left+=("$(cat "/proc/$pid/comm" 2>/dev/null)($pid)")
            kill -TERM "$pid" 2>/dev/null || true
        fi
    done
    if ((${#left[@]})); then echo "== stopped what the tests left running: ${left[*]}"; fi
}
# shellcheck disable=SC2317  # run by the EXIT trap
stop_what_we_started() {
    stop_marked_processes
    local pidfile="${TSBENCH_TEST_DOCKERD_STARTED:-}" pid
    if [[ -n "$pidfile" && -s "$pidfile" ]]; then
        pid="$(cat "$pidfile")"
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
        kill -KILL -- "-$pid" 2>/dev/null || true
        local containerd="${pidfile%/*}/exec/containerd/containerd.pid"  # dockerd's own containerd
        [[ -s "$containerd" ]] && kill -TERM "$(cat "$containerd")" 2>/dev/null
        echo "== stopped the private Docker engine (dockerd $pid and its containerd)"
    fi
    local job
    for job in $(jobs -p); do kill_tree "$job"; done
}
trap stop_what_we_started EXIT
# A private Docker engine (Debian's docker.io unpacked, own socket; no system service) for the
# Docker runtime's tests: exports TSBENCH_TEST_DOCKER_HOST and TSBENCH_TEST_BUSYBOX.
eval "$(bash scripts/install_test_docker_engine.sh)"
# Targets' own test preparations (e.g. a client install, or a server build in the background while
# lint and the other tests run; after the apt installs above: one dpkg at a time), sourced: they
# export what their tests read.
# shellcheck source=scripts/lib.sh
source scripts/lib.sh
for prepare in plugins/tsbench/targets/*/test_prepare.sh; do
    # shellcheck source=/dev/null
    source "$prepare"
done
py=.venv/bin/python
echo "== ruff"
.venv/bin/ruff check plugins dags tests bench infra
.venv/bin/ruff format --check plugins dags tests bench infra
echo "== docs (mkdocs build --strict)"
# The site (mkdocs.yml, docs/): a broken link or anchor, or a page left out of nav, fails the build.
# Built into a scratch folder, never the work tree. No --quiet (nor --verbose): MkDocs 1.6.1 then
# never counts the warnings and a strict build with broken links exits 0 (mkdocs/mkdocs#4126, #3991).
# NO_MKDOCS_2_WARNING: Material's end-of-life banner.
site="$(mktemp -d)"
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --site-dir "$site"
rm -rf "$site"
echo "== pytest"
# pytest-xdist: TSBENCH_TEST_WORKERS processes (default 4 on our 2 cores: much of the suite waits on
# servers, Airflow and Terraform's pollers); a module — or a folder sharing one deployment — stays
# on one worker, longest first (tests/conftest.py: pytest_xdist_make_scheduler).
# TSBENCH_TEST_WORKERS=0 runs everything in this process. A worker that dies (a crash in native
# code, e.g. an in-process JVM) fails the run at once, naming the test it ran: --max-worker-restart=0
# (with restarts, xdist re-ran the crashing test on fresh workers and once hung after the crash).
# Everything every test needs is installed above: a skipped test fails the run (-rs names why).
# Every process pytest starts carries this mark in its environment, daemons that left their parent
# included: what still runs with it when this script ends was left by a test whose worker died
# before its teardown (a timeout-killed pytest worker orphans its servers); the EXIT trap stops it.
TSBENCH_TEST_SESSION="tsbench-test-$$-$(date +%s%N)"
export TSBENCH_TEST_SESSION
set +e
TSBENCH_SKIPS_FAIL=1 $py -m pytest -p no:cacheprovider -n "${TSBENCH_TEST_WORKERS:-4}" \
    --max-worker-restart=0 --durations=40 -rs "$@"
status=$?
set -e
if [[ $status -eq 5 ]]; then
    echo "pytest collected no tests: failing" >&2
    exit 1
fi
exit $status
