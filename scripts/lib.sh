# shellcheck shell=bash
# Shared helpers for tsbench install/run scripts. Source it, do not execute it:
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# TSBENCH_OPT is a machine-level install cache (outside the work tree), so a
# fresh clone on the same machine reuses jars, builds and binaries.

if [[ -n "${_TSBENCH_LIB_SOURCED:-}" ]]; then
    return 0
fi
_TSBENCH_LIB_SOURCED=1
_TSBENCH_SOURCE_ARCHIVE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/plugins/tsbench/runtimes/source_archive.py"

TSBENCH_OPT="${TSBENCH_OPT:-${XDG_CACHE_HOME:-$HOME/.cache}/tsbench/opt}"
export TSBENCH_OPT
mkdir -p "$TSBENCH_OPT"

# Server versions are pinned in each target's plugins/tsbench/targets/<name>/definition.py
# (scripts/install.sh passes them to the target's install.sh).

# log MSG... : timestamped message on stderr, prefixed with the calling script.
log() {
    printf '[%s] [%s] %s\n' "$(date +%H:%M:%S)" "$(basename "${0:-tsbench}")" "$*" >&2
}

die() {
    log "ERROR: $*"
    exit 1
}

# as_root CMD... : run CMD as root (directly if we are root, else via sudo).
as_root() {
    if [[ "$(id -u)" -eq 0 ]]; then
        "$@"
    else
        sudo "$@"
    fi
}

# pkg_installed PKG : true if the Debian package is installed.
pkg_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

# apt_update_once : `apt-get update` once per machine (stamp file in TSBENCH_OPT).
apt_update_once() {
    local stamp="$TSBENCH_OPT/.apt-updated"
    if [[ ! -f "$stamp" ]]; then
        log "apt-get update (once per machine; stamp $stamp)"
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
        touch "$stamp"
    fi
}

# apt_install PKG[=VERSION]... : install the missing Debian packages,
# non-interactively (an already installed package is left as it is). A concurrent install (a build
# in the background) holds dpkg's lock: wait for it (up to 15 min) instead of failing.
apt_install() {
    local missing=() p
    for p in "$@"; do
        pkg_installed "${p%%=*}" || missing+=("$p")
    done
    if [[ ${#missing[@]} -eq 0 ]]; then
        return 0
    fi
    apt_update_once
    log "apt-get install ${missing[*]}"
    if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=900 \
        --no-install-recommends "${missing[@]}" >&2; then
        # The once-per-machine index may be stale (superseded versions 404): refresh once.
        log "apt-get install failed; refreshing the package index and retrying"
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
        touch "$TSBENCH_OPT/.apt-updated"
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=900 \
            --no-install-recommends "${missing[@]}" >&2
    fi
}

# verified_archive NAME TREE_SHA256 URL WORKDIR : print the path of the pinned source archive NAME, its
# content checked (the tree hash over its files, top folder stripped: the vendored copy and upstream's
# release archive both verify). Taken from $TSBENCH_VENDOR (default ../shared/vendor beside the project
# root) or, when that folder lacks it, downloaded into WORKDIR from URL (upstream's release archive).
# One tool for every pinned archive: plugins/tsbench/runtimes/source_archive.py (its docstring defines
# the hash).
verified_archive() {
    python3 -P "$_TSBENCH_SOURCE_ARCHIVE" verified "$1" "$2" "$3" "$4" ||
        die "no verified source archive $1 (above: why)"
}

# build_is_current BUILD_FILE NAME TREE_SHA256 : true when the cached build's record BUILD_FILE says it
# was made from the pinned tree (tree_sha256=…), so a changed pin rebuilds instead of hiding behind the
# cache. A record from before tree pins is adopted when the vendored NAME has its bytes and that tree.
build_is_current() {
    [[ -s "$1" ]] || return 1
    grep -qx "tree_sha256=$3" "$1" && return 0
    grep -q "^tree_sha256=" "$1" && return 1
    python3 -P "$_TSBENCH_SOURCE_ARCHIVE" built "$1" "$2" "$3"
}

# go_build_env [GOFLAG...] : export the Go caches every module build shares ($TSBENCH_OPT/go/{path,mod,
# cache}), GOFLAGS (-modcacherw -buildvcs=false and the flags given) and GOTOOLCHAIN=local (a module
# whose go.mod suggests a newer toolchain builds with this machine's Go, or fails saying so, instead of
# fetching another Go).
# shellcheck disable=SC2120  # the flags are optional
go_build_env() {
    export GOPATH="$TSBENCH_OPT/go/path" GOMODCACHE="$TSBENCH_OPT/go/mod" GOCACHE="$TSBENCH_OPT/go/cache"
    export GOTOOLCHAIN=local
    export GOFLAGS="$* -modcacherw -buildvcs=false"
    GOFLAGS="${GOFLAGS# }"
}

# build_once BINARY LOCK WHAT : end the calling script, printing BINARY, when BINARY is built (unless
# $REBUILD is set); else take the machine's lock $TSBENCH_OPT/LOCK.lock on fd 9 for the rest of the
# script (CI starts a build early and the tests start it again: the second waits for the first) and
# end the same way if the first built it meanwhile.
build_once() {
    local binary="$1" lock="$2" what="$3"
    if [[ -x "$binary" && -z "${REBUILD:-}" ]]; then
        log "$what already built: $binary"
        echo "$binary"
        exit 0
    fi
    mkdir -p "$TSBENCH_OPT"
    exec 9>"$TSBENCH_OPT/$lock.lock"
    flock 9
    if [[ -x "$binary" && -z "${REBUILD:-}" ]]; then
        log "$what built meanwhile: $binary"
        echo "$binary"
        exit 0
    fi
}

# port_open HOST PORT : true if a TCP connect to HOST:PORT succeeds now.
port_open() {
    (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

# wait_for_port HOST PORT [TIMEOUT_SECONDS=60] : wait until HOST:PORT accepts TCP.
wait_for_port() {
    local host="$1" port="$2" timeout="${3:-60}" start
    start=$(date +%s)
    until port_open "$host" "$port"; do
        if (($(date +%s) - start >= timeout)); then
            log "timeout after ${timeout}s waiting for $host:$port"
            return 1
        fi
        sleep 0.5
    done
}

# warm_execution_api BASE_URL [TIMEOUT_SECONDS=600] : once the API server answers, send one request
# into its task execution API. Airflow builds that API's versioned routes (Cadwyn) on the first
# request it gets, on the server's event loop: 5 s of CPU on an idle 2-core machine, over 45 s on a
# busy one, and nothing else is answered meanwhile. Unwarmed, the first task's start call timed out
# (workers.execution_api_timeout) and the task failed before it ran. Meant to run in the background.
warm_execution_api() {
    local base="$1" timeout="${2:-600}" start
    start=$(date +%s)
    until http_ok "$base/api/v2/monitor/health" 5; do
        (($(date +%s) - start < timeout)) || { log "API server at $base not up after ${timeout}s"; return 1; }
        sleep 1
    done
    http_ok "$base/execution/health" "$timeout" || log "warming the execution API at $base failed"
}

# http_ok URL TIMEOUT_SECONDS : true if a GET of URL answers 2xx within the timeout.
http_ok() {
    python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=float(sys.argv[2]))' \
        "$1" "$2" > /dev/null 2>&1
}

# wait_for_port_closed HOST PORT [TIMEOUT_SECONDS=30] : wait until nothing listens.
wait_for_port_closed() {
    local host="$1" port="$2" timeout="${3:-30}" start
    start=$(date +%s)
    while port_open "$host" "$port"; do
        if (($(date +%s) - start >= timeout)); then
            log "timeout after ${timeout}s waiting for $host:$port to close"
            return 1
        fi
        sleep 0.5
    done
}
