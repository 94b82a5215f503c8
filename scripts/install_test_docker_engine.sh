#!/usr/bin/env bash
# A private Docker engine for the Docker runtime's tests: Debian 12's docker.io, containerd, runc and
# busybox-static, unpacked (dpkg -x, not installed) under $TSBENCH_OPT/docker-engine, started on its
# own socket, data root and bridge, with iptables untouched. The system gets no docker service and no
# /var/run/docker.sock. Idempotent: prints the socket when the engine already answers.
#   eval "$(bash scripts/install_test_docker_engine.sh)"   # exports TSBENCH_TEST_DOCKER_HOST/_BUSYBOX
# and, when this call started the engine, TSBENCH_TEST_DOCKERD_STARTED=<its pid file> (scripts/test.sh
# stops what it started; an engine that already answered is left as it was).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib.sh
source "$here/lib.sh"
home="$TSBENCH_OPT/docker-engine"
state="${TSBENCH_DOCKERD_STATE:-/var/tmp/tsbench-test-dockerd}"  # short: socket paths have a limit
root="$home/root"
packages=(docker.io containerd runc tini busybox-static)
if [[ ! -x "$root/usr/sbin/dockerd" || ! -x "$root/bin/busybox" ]]; then
    apt_update_once
    mkdir -p "$home/debs" "$root"
    (cd "$home/debs" && apt-get download -qq "${packages[@]}" >&2)
    for deb in "$home"/debs/*.deb; do dpkg -x "$deb" "$root"; done
fi
[[ -x "$root/usr/sbin/dockerd" ]] || die "dockerd missing after unpacking ${packages[*]}"
export PATH="$root/usr/bin:$root/usr/sbin:$root/bin:$PATH"
mkdir -p "$state"
socket="$state/docker.sock"
started=""
if ! docker -H "unix://$socket" version >/dev/null 2>&1; then
    started="$state/dockerd.pid"
    log "starting a private dockerd on $socket"
    setsid dockerd --data-root "$state/data" --exec-root "$state/exec" --pidfile "$state/dockerd.pid" \
        -H "unix://$socket" --iptables=false --ip6tables=false --bip=10.213.9.1/24 \
        --storage-driver=overlay2 >>"$state/dockerd.log" 2>&1 </dev/null &
    for _ in $(seq 1 120); do
        docker -H "unix://$socket" version >/dev/null 2>&1 && break
        sleep 0.5
    done
    docker -H "unix://$socket" version >/dev/null 2>&1 \
        || die "the private dockerd did not answer: $(tail -5 "$state/dockerd.log")"
fi
echo "export TSBENCH_TEST_DOCKER_HOST=unix://$socket TSBENCH_TEST_BUSYBOX=$root/bin/busybox TSBENCH_TEST_DOCKERD_STARTED=$started"
