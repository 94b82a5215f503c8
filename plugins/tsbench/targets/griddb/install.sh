#!/usr/bin/env bash
# GridDB CE server from the official release package, plus the client side (install_client.sh): the
# local runtime's install recipe, run by scripts/install.sh griddb (or the local runtime) with
# GRIDDB_VERSION and GRIDDB_DEB_SHA512 from definition.py.
#
#   package: griddb_$GRIDDB_VERSION_amd64.deb from https://github.com/griddb/griddb/releases
#            (the file the official image griddb/griddb:$GRIDDB_VERSION-jammy is built from;
#            sha512 pinned in definition.py, as in that image's Dockerfile)
#   -> gsserver, gs_* tools; user gsadm; the package's own gridstore.service is disabled
#      (tsbench runs a private node per instance: server.py)
#   -> $TSBENCH_OPT/griddb/gsserver.path  (where gsserver is)
#
# Run (what server.py does):
#   gsserver --conf <GS_HOME>/conf       (foreground; GS_HOME, GS_LOG set)
#   GET  http://127.0.0.1:<system>/node/stat   (basic auth admin) -> recovery.progressRate 1
#   POST http://127.0.0.1:<system>/node/join   clusterName=tsbench&minNodeNum=1
#
# Our machines reach package registries only, not GitHub releases: there the download fails and this
# script stops with a message saying so (GridDB then runs in Docker or on a cloud VM).
# An exported GRIDDB_VERSION overrides the pin (export GRIDDB_DEB_SHA512 with it: the checksum
# belongs to the version). Idempotent: skips when the package is installed at that version.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../../scripts/lib.sh"
: "${GRIDDB_VERSION:?from targets/griddb/definition.py: run scripts/install.sh griddb}"
DEB_SHA512="${GRIDDB_DEB_SHA512:?from targets/griddb/definition.py (the package of GRIDDB_VERSION)}"
DEB="griddb_${GRIDDB_VERSION}_amd64.deb"
URL="https://github.com/griddb/griddb/releases/download/v$GRIDDB_VERSION/$DEB"
DEST_DIR="$TSBENCH_OPT/griddb"
here="$(dirname "${BASH_SOURCE[0]}")"

bash "$here/install_client.sh" >/dev/null

installed="$(dpkg-query -W -f='${Version}' griddb 2>/dev/null || true)"
if [[ "$installed" == "$GRIDDB_VERSION"* && -s "$DEST_DIR/gsserver.path" ]]; then
    log "griddb $installed already installed: $(cat "$DEST_DIR/gsserver.path")"
    cat "$DEST_DIR/gsserver.path"
    exit 0
fi

[[ "$(dpkg --print-architecture)" == amd64 ]] || die "GridDB CE packages are built for amd64 only"
mkdir -p "$DEST_DIR"
if [[ ! -s "$DEST_DIR/$DEB" ]]; then
    log "curl $URL"
    if ! curl -fsSL --retry 1 --connect-timeout 10 --max-time 600 -o "$DEST_DIR/$DEB.part" "$URL"; then
        rm -f "$DEST_DIR/$DEB.part"
        die "cannot download GridDB $GRIDDB_VERSION ($URL): GitHub releases are unreachable from here" \
            "(this machine reaches package registries only). Run GridDB with runtime=docker" \
            "(griddb/griddb:$GRIDDB_VERSION-jammy) or runtime=aws instead."
    fi
    echo "$DEB_SHA512  $DEST_DIR/$DEB.part" | sha512sum -c --quiet - || die "sha512 mismatch for $URL"
    mv -f "$DEST_DIR/$DEB.part" "$DEST_DIR/$DEB"
fi

apt_update_once
log "apt-get install ./$DEB (with its dependencies)"
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "$DEST_DIR/$DEB" >&2
# The package registers a service for its own node in /var/lib/gridstore: tsbench never uses it.
if command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]; then
    as_root systemctl disable --now gridstore.service >/dev/null 2>&1 || true
fi

gsserver="$(command -v gsserver || true)"
if [[ -z "$gsserver" ]]; then
    gsserver="$(find /usr -maxdepth 4 -type f -name gsserver -perm -u+x 2>/dev/null | head -n 1)"
fi
[[ -x "$gsserver" ]] || die "gsserver not found after installing $DEB"
echo "$gsserver" >"$DEST_DIR/gsserver.path"
log "griddb $(dpkg-query -W -f='${Version}' griddb) installed: $gsserver"
echo "$gsserver"
