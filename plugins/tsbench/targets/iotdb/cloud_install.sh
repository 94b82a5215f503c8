#!/usr/bin/env bash
# IoTDB's own steps on a fresh Debian 12 cloud VM. Not run as it is: runtimes/cloud_install.py
# prepends the header rendered from definition.py (IOTDB_VERSION; tsbench_settings, which prints the
# properties table; process_confignode_heap and process_datanode_heap on this VM's memory) and
# runtimes/cloud_lib.sh (log, apt_get, install_db_unit, wait_ready).
#
# Environment:
#   DATA_DIR     every directory of both processes (system, consensus, WAL, TsFiles), e.g. /data/db on
#                the data volume
#   DB_PASSWORD  root's password (required: an empty one stops the script rather than keep the stock
#                root/root; 4 to 32 characters, IoTDB's own limits)
#
# Installs openjdk-17-jre-headless and upstream's binary release of definition.py's version (the
# Apache archive's all-bin zip, checked against its .sha512: it guards against a damaged download,
# not against a compromised release; the same jars install.sh resolves from Maven Central) and runs a
# ConfigNode and a DataNode as user iotdb under the one systemd unit tsbench-db.service: the client
# RPC on all interfaces at 6667, the internal ports at IoTDB's defaults (10710, 10720, 10730-10760).
# At the first start, root's stock password is replaced by DB_PASSWORD.
set -euo pipefail

: "${DATA_DIR:?DATA_DIR (data directory on the data volume) must be set}"
: "${IOTDB_VERSION:?rendered from definition.py by runtimes/cloud_install.py}"
[[ -n "${DB_PASSWORD:-}" ]] || die "DB_PASSWORD is empty: IoTDB would keep its stock root/root login"
[[ "$DB_PASSWORD" =~ ^[A-Za-z0-9_.~-]{4,32}$ ]] || die "DB_PASSWORD must be 4-32 characters of [A-Za-z0-9_.~-]"

ARCHIVE="https://archive.apache.org/dist/iotdb/$IOTDB_VERSION"
ZIP="apache-iotdb-$IOTDB_VERSION-all-bin.zip"
HOME_DIR=/opt/iotdb

log "packages: Java 17 runtime, curl, unzip"
apt_get update
apt_get install --no-install-recommends openjdk-17-jre-headless curl unzip ca-certificates
apt-mark hold openjdk-17-jre-headless >/dev/null # no unattended upgrade (and restart) mid-benchmark

log "IoTDB $IOTDB_VERSION binary release"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
curl -fsSL --retry 5 -o "$work/$ZIP" "$ARCHIVE/$ZIP"
curl -fsSL --retry 5 -o "$work/$ZIP.sha512" "$ARCHIVE/$ZIP.sha512"
echo "$(awk '{print $1}' "$work/$ZIP.sha512")  $work/$ZIP" | sha512sum -c --quiet - || die "SHA-512 mismatch for $ZIP"
unzip -q "$work/$ZIP" -d "$work"
rm -rf "$HOME_DIR.new" && mv "$work/apache-iotdb-$IOTDB_VERSION-all-bin" "$HOME_DIR.new"
rm -rf "$HOME_DIR" && mv "$HOME_DIR.new" "$HOME_DIR"

log "user, directories, configuration"
id iotdb >/dev/null 2>&1 || useradd --system --home-dir "$HOME_DIR" --shell /usr/sbin/nologin iotdb
install -d -o iotdb -g iotdb -m 0750 "$DATA_DIR"
{
    echo "cn_internal_address=$(hostname -I | awk '{print $1}')"
    echo "dn_internal_address=$(hostname -I | awk '{print $1}')"
    echo "cn_seed_config_node=$(hostname -I | awk '{print $1}'):10710"
    echo "dn_seed_config_node=$(hostname -I | awk '{print $1}'):10710"
    echo "dn_rpc_address=0.0.0.0"
    for key in cn_system_dir cn_consensus_dir dn_system_dir dn_data_dirs dn_consensus_dir dn_wal_dirs; do
        echo "$key=$DATA_DIR/${key#*_}"
    done
    tsbench_settings | sed 's/\t/=/'
} >"$HOME_DIR/conf/iotdb-system.properties"
# The heaps: ON_HEAP_MEMORY of each process's env script (its own default is a share of the RAM).
for pair in "confignode-env.sh:$process_confignode_heap" "datanode-env.sh:$process_datanode_heap"; do
    script="$HOME_DIR/conf/${pair%%:*}"
    grep -q '^ON_HEAP_MEMORY=' "$script" || die "$script sets no ON_HEAP_MEMORY: the heap cannot be set"
    sed -i "s/^ON_HEAP_MEMORY=.*/ON_HEAP_MEMORY=\"${pair#*:}\"/" "$script"
done
chown -R iotdb:iotdb "$HOME_DIR"

log "systemd unit tsbench-db.service"
cat >"$HOME_DIR/sbin/tsbench-run.sh" <<RUN
#!/usr/bin/env bash
# The ConfigNode and the DataNode as one service: either exiting stops the other.
$HOME_DIR/sbin/start-confignode.sh & confignode=\$!
$HOME_DIR/sbin/start-datanode.sh & datanode=\$!
trap 'kill -TERM \$datanode; wait \$datanode; kill -TERM \$confignode; wait \$confignode; exit 0' TERM INT
wait -n \$confignode \$datanode
kill -TERM \$confignode \$datanode 2>/dev/null
wait
RUN
chmod 0755 "$HOME_DIR/sbin/tsbench-run.sh"
install_db_unit "IoTDB $IOTDB_VERSION" <<SERVICE
User=iotdb
Group=iotdb
ExecStart=$HOME_DIR/sbin/tsbench-run.sh
LimitNOFILE=1048576
TimeoutStopSec=300
SERVICE

cli() { "$HOME_DIR/sbin/start-cli.sh" -h 127.0.0.1 -p 6667 -u root "$@" >/dev/null 2>&1; }
iotdb_answers() { cli -pw "$DB_PASSWORD" -e "SHOW VERSION" || cli -pw root -e "SHOW VERSION"; }
wait_ready 300 "IoTDB $IOTDB_VERSION on :6667" iotdb_answers
if ! cli -pw "$DB_PASSWORD" -e "SHOW VERSION"; then
    log "root's stock password replaced"
    cli -pw root -e "ALTER USER root SET PASSWORD '$DB_PASSWORD'" || die "could not set root's password"
fi
cli -pw "$DB_PASSWORD" -e "SHOW VERSION" || die "root's password did not take"
! cli -pw root -e "SHOW VERSION" || die "the stock root/root login still works"
