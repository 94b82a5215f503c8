# shellcheck shell=bash
# Sourced by build.sh and install_client.sh (after scripts/lib.sh): where GridDB's pinned source
# archive comes from, checked.
#
# verified_griddb_archive WORKDIR : print the path of $GRIDDB_SOURCE_ARCHIVE with its sha256 checked
# ($GRIDDB_SOURCE_SHA256; both from definition.py). Taken from $TSBENCH_VENDOR (default
# ../shared/vendor beside the project root) or, when that folder lacks it, downloaded into WORKDIR
# from $GRIDDB_SOURCE_URL (the same archive: the checksum must match).
verified_griddb_archive() {
    local workdir="$1" root vendor archive
    : "${GRIDDB_SOURCE_ARCHIVE:?from targets/griddb/definition.py: run scripts/install.sh griddb}"
    : "${GRIDDB_SOURCE_SHA256:?from targets/griddb/definition.py}"
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." && pwd)"
    vendor="${TSBENCH_VENDOR:-$root/../shared/vendor}"
    archive="$vendor/$GRIDDB_SOURCE_ARCHIVE"
    if [[ ! -s "$archive" ]]; then
        [[ -n "${GRIDDB_SOURCE_URL:-}" ]] ||
            die "no $archive, and no GRIDDB_SOURCE_URL to fetch GridDB's source from"
        archive="$workdir/$GRIDDB_SOURCE_ARCHIVE"
        log "curl $GRIDDB_SOURCE_URL"
        curl -fsSL --retry 2 --connect-timeout 15 --max-time 900 -o "$archive" "$GRIDDB_SOURCE_URL" ||
            die "cannot download $GRIDDB_SOURCE_URL (and $vendor has no $GRIDDB_SOURCE_ARCHIVE)"
    fi
    echo "$GRIDDB_SOURCE_SHA256  $archive" | sha256sum -c --quiet - >&2 ||
        die "sha256 mismatch: $archive is not GridDB's pinned source ($GRIDDB_SOURCE_SHA256)"
    echo "$archive"
}
