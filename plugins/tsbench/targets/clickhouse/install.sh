#!/usr/bin/env bash
# Install the ClickHouse server from ClickHouse's official apt repository (packages.clickhouse.com):
# the local runtime's install recipe, run by scripts/install.sh clickhouse (or the local runtime) with
# CLICKHOUSE_VERSION from definition.py (the release of the Docker image and of the cloud install):
#
#   clickhouse-common-static, clickhouse-server, clickhouse-client = $CLICKHOUSE_VERSION (held)
#   -> /usr/bin/clickhouse (one multi-tool binary: `clickhouse server`, `clickhouse client`, ...)
#
# The packaged clickhouse-server service is stopped and disabled: tsbench runs its own instances
#   clickhouse server --config-file=<home>/config.xml          (server.py)
# with their own loopback ports, data directory and users.xml. Readiness: GET /ping -> "Ok.".
#
# Debian's own clickhouse packages are 18.16 (2018) and are not used. The official repository is
# checked first: where it cannot be reached (machines that reach only language and Debian package
# registries), the script exits at once with a message and changes nothing; ClickHouse then runs in
# the docker or aws runtime only (see README.md).
#
# Environment: CLICKHOUSE_VERSION (the pin), CLICKHOUSE_REPO (repository base URL, for mirrors).
# Idempotent: exits at once when /usr/bin/clickhouse already is $CLICKHOUSE_VERSION.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../../scripts/lib.sh"
: "${CLICKHOUSE_VERSION:?from targets/clickhouse/definition.py: run scripts/install.sh clickhouse}"
CLICKHOUSE_REPO="${CLICKHOUSE_REPO:-https://packages.clickhouse.com}"
KEYRING=/usr/share/keyrings/clickhouse-keyring.gpg
SOURCES=/etc/apt/sources.list.d/clickhouse.list
PACKAGES=(clickhouse-common-static clickhouse-server clickhouse-client)

installed_version() {
    if [[ -x /usr/bin/clickhouse ]]; then
        /usr/bin/clickhouse --version 2>/dev/null | grep -oE '[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+' | head -n1 || true
    fi
}

if [[ "$(installed_version)" == "$CLICKHOUSE_VERSION" ]] && pkg_installed clickhouse-server; then
    log "clickhouse $CLICKHOUSE_VERSION already installed: /usr/bin/clickhouse"
    echo /usr/bin/clickhouse
    exit 0
fi

# Fail fast, before touching anything, when the repository is out of reach.
command -v curl >/dev/null || apt_install curl ca-certificates
probe="$CLICKHOUSE_REPO/deb/dists/stable/Release"
if ! reason="$(curl -fsS --connect-timeout 5 --max-time 30 -o /dev/null "$probe" 2>&1)"; then
    die "cannot reach ClickHouse's apt repository ($probe: ${reason:-no answer}). ClickHouse" \
        "$CLICKHOUSE_VERSION is only published there (Debian's clickhouse is 18.16), so it cannot be" \
        "installed on this machine; run the clickhouse target with the docker or aws runtime" \
        "(targets/clickhouse/container.py, cloud_install.sh) instead."
fi

apt_install ca-certificates curl gnupg
log "adding $CLICKHOUSE_REPO/deb stable main (key $KEYRING)"
key="$TSBENCH_OPT/clickhouse-keyring.gpg"
curl -fsSL --retry 3 "$CLICKHOUSE_REPO/rpm/lts/repodata/repomd.xml.key" | gpg --dearmor --yes -o "$key"
as_root install -m 0644 "$key" "$KEYRING"
rm -f "$key"
echo "deb [signed-by=$KEYRING arch=$(dpkg --print-architecture)] $CLICKHOUSE_REPO/deb stable main" |
    as_root tee "$SOURCES" >/dev/null
# Refresh only this source's index (the system's other lists stay as they are).
as_root apt-get update -qq -o Dir::Etc::sourcelist="$SOURCES" -o Dir::Etc::sourceparts=- \
    -o APT::Get::List-Cleanup=0 >&2

pinned=()
for package in "${PACKAGES[@]}"; do
    pinned+=("$package=$CLICKHOUSE_VERSION")
done
log "apt-get install ${pinned[*]}"
as_root apt-mark unhold "${PACKAGES[@]}" >/dev/null 2>&1 || true
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    --allow-downgrades "${pinned[@]}" >&2
as_root apt-mark hold "${PACKAGES[@]}" >/dev/null

# The package's own service would hold 8123/9000 with the system configuration: stop and disable it.
if command -v systemctl >/dev/null; then
    if [[ -d /run/systemd/system ]]; then
        as_root systemctl disable --now clickhouse-server.service >/dev/null 2>&1 || true
    else
        as_root systemctl disable clickhouse-server.service >/dev/null 2>&1 || true
    fi
fi
if [[ -x /etc/init.d/clickhouse-server ]]; then
    as_root /etc/init.d/clickhouse-server stop >/dev/null 2>&1 || true
fi

[[ "$(installed_version)" == "$CLICKHOUSE_VERSION" ]] ||
    die "/usr/bin/clickhouse is $(installed_version) after the install, not $CLICKHOUSE_VERSION"
log "clickhouse $CLICKHOUSE_VERSION installed: /usr/bin/clickhouse"
echo /usr/bin/clickhouse
