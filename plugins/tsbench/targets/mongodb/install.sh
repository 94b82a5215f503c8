#!/usr/bin/env bash
# Install MongoDB Community Server (mongod only: package mongodb-org-server) pinned to
# $MONGODB_VERSION from the official apt repository repo.mongodb.org: the local runtime's install
# recipe of both MongoDB targets (mongodb_naive/install.sh links here), run by scripts/install.sh
# mongodb (or the local runtime) with MONGODB_VERSION from definition.py. The same version is the
# Docker image tag (container.py) and the cloud install (cloud_install.sh).
#
#   -> /usr/bin/mongod, path recorded in $TSBENCH_OPT/mongodb/mongod.path
#
# tsbench runs its own  mongod --config <home>/mongod.conf  (written by server.py),
# so the packaged mongod.service is disabled. Supported: Debian 12 (bookworm; repo component main)
# and Ubuntu 22.04/24.04 (jammy/noble; multiverse), amd64 and arm64.
#
# Fails fast: when the repository cannot be reached (our dev/CI machines reach only package
# registries; MongoDB is not in Debian), it stops within ~10 s with a message saying so; run the
# MongoDB targets in the Docker or cloud runtime there.
#
# Idempotent: exits at once when mongod --version already reports the pinned version.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../../scripts/lib.sh"
: "${MONGODB_VERSION:?from targets/mongodb/definition.py: run scripts/install.sh mongodb}"
SERIES="${MONGODB_VERSION%.*}" # 8.0
REPO_HOST="${MONGODB_REPO_HOST:-repo.mongodb.org}" # override: a mirror (or, in tests, a dead host)
KEY_URL="https://pgp.mongodb.com/server-${SERIES}.asc"
KEYRING="/usr/share/keyrings/mongodb-server-${SERIES}.gpg"
LIST="/etc/apt/sources.list.d/mongodb-org-${SERIES}.list"
DEST_DIR="$TSBENCH_OPT/mongodb"

installed_version() {
    local binary
    binary="$(command -v mongod || true)"
    [[ -n "$binary" ]] || return 1
    "$binary" --version 2>/dev/null | sed -n 's/^db version v//p' | head -n1
}

record() {
    local binary
    binary="$(command -v mongod)"
    mkdir -p "$DEST_DIR"
    echo "$binary" >"$DEST_DIR/mongod.path"
    log "mongodb $MONGODB_VERSION: $binary"
    echo "$binary"
}

if [[ "$(installed_version || true)" == "$MONGODB_VERSION" ]]; then
    record
    exit 0
fi

# shellcheck source=/dev/null
source /etc/os-release
case "${ID:-}" in
debian) REPO_PATH="apt/debian ${VERSION_CODENAME}/mongodb-org/${SERIES} main" ;;
ubuntu) REPO_PATH="apt/ubuntu ${VERSION_CODENAME}/mongodb-org/${SERIES} multiverse" ;;
*) die "MongoDB packages are published for Debian and Ubuntu; this is ${PRETTY_NAME:-unknown}" ;;
esac
RELEASE_URL="https://${REPO_HOST}/${REPO_PATH%% *}/dists/${VERSION_CODENAME}/mongodb-org/${SERIES}/Release"

apt_install ca-certificates curl gnupg
if ! curl -fsS --connect-timeout 5 --max-time 10 -o /dev/null "$RELEASE_URL"; then
    die "cannot reach ${REPO_HOST} (${RELEASE_URL}): MongoDB ${MONGODB_VERSION} cannot be installed" \
        "on this machine. MongoDB is not in Debian's archive; run the MongoDB targets in the Docker" \
        "runtime (image mongo:${MONGODB_VERSION}) or the cloud runtime instead."
fi

if [[ ! -s "$KEYRING" ]]; then
    log "adding MongoDB's signing key $KEY_URL"
    curl -fsSL --retry 3 --connect-timeout 5 "$KEY_URL" | as_root gpg --batch --yes --dearmor -o "$KEYRING"
fi
echo "deb [ signed-by=${KEYRING} ] https://${REPO_HOST}/${REPO_PATH}" | as_root tee "$LIST" >/dev/null

# Refresh only MongoDB's list (the machine's other sources are left alone).
as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq \
    -o Dir::Etc::sourcelist="$LIST" -o Dir::Etc::sourceparts=- -o APT::Get::List-Cleanup=0
log "apt-get install mongodb-org-server=$MONGODB_VERSION"
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    --allow-downgrades "mongodb-org-server=${MONGODB_VERSION}" >&2
as_root apt-mark hold mongodb-org-server >/dev/null

# tsbench starts its own mongod: the packaged service must not run or start at boot.
if command -v systemctl >/dev/null; then
    if [[ -d /run/systemd/system ]]; then
        as_root systemctl disable --now mongod.service >/dev/null 2>&1 || true
    else
        as_root systemctl disable mongod.service >/dev/null 2>&1 || true
    fi
fi

[[ "$(installed_version || true)" == "$MONGODB_VERSION" ]] ||
    die "mongod --version does not report $MONGODB_VERSION after installing"
record
