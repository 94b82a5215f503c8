#!/usr/bin/env bash
# First boot of a tsbench benchmark host: run once by cloud-init (runcmd) as root; safe to run again.
#
# Reads /etc/tsbench/host.env, written by cloud-init from infra/modules/benchmark_host:
#   TSBENCH_DATA_VOLUME_ID  EBS id of the data volume (vol-...)
#   TSBENCH_DATA_DEVICE     device name it is attached as (e.g. /dev/sdf)
#   TSBENCH_DATA_MOUNT      mount point (/data)
#   TSBENCH_DB_DIR          the database's data directory on it (/data/db)
#   TSBENCH_AGENT_PORT      TCP port of the node agent
# and the root-only files /etc/tsbench/agent.token and /etc/tsbench/db_password.
#
# Steps: wait for the data volume (Terraform attaches it after the instance is running), format it
# (ext4, only when it has no file system) and mount it at /data (fstab, by UUID) -> python3 -> the node
# agent as tsbench-node-agent.service -> the database install script (/opt/tsbench/install_db.sh) with
# DATA_DIR and DB_PASSWORD, which installs and starts tsbench-db.service.
# Progress: /var/lib/tsbench/bootstrap.status ("running: <step>", "done" or "failed: <step> (exit n)");
# output: /var/log/cloud-init-output.log (and /var/log/tsbench-install.log for the install script).
set -Eeuo pipefail

# shellcheck source=/dev/null
source /etc/tsbench/host.env

STATUS_FILE=/var/lib/tsbench/bootstrap.status
DEVICE_WAIT_S=900
step="start"

set_status() {
    mkdir -p "$(dirname "$STATUS_FILE")"
    printf '%s\n' "$1" >"$STATUS_FILE"
}

begin() {
    step="$1"
    set_status "running: $step"
    echo "[tsbench-bootstrap] $step"
}

trap 'set_status "failed: $step (exit $?)"' ERR

apt_get() {
    # Waits for the dpkg lock (first-boot apt timers may hold it) instead of failing.
    DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=600 "$@"
}

# Where the data volume is: Nitro instances expose EBS volumes as NVMe devices whose serial is the
# volume id without the dash (udev: /dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_vol...); Xen
# instances (c4, m4, ...) as /dev/xvdX for a declared /dev/sdX. Prints the device; fails if absent.
find_data_device() {
    local serial="${TSBENCH_DATA_VOLUME_ID//-/}" candidate
    for candidate in "/dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_$serial" /dev/disk/by-id/*"$serial"; do
        if [[ -b "$candidate" ]]; then
            readlink -f "$candidate"
            return 0
        fi
    done
    candidate="$(lsblk -dnpo NAME,SERIAL | awk -v serial="$serial" '$2 == serial { print $1; exit }')"
    if [[ -n "$candidate" ]]; then
        echo "$candidate"
        return 0
    fi
    for candidate in "$TSBENCH_DATA_DEVICE" "${TSBENCH_DATA_DEVICE/#\/dev\/sd//dev/xvd}"; do
        if [[ -b "$candidate" ]]; then
            readlink -f "$candidate"
            return 0
        fi
    done
    return 1
}

wait_for_data_device() {
    local device deadline=$((SECONDS + DEVICE_WAIT_S))
    until device="$(find_data_device)"; do
        if ((SECONDS >= deadline)); then
            echo "data volume $TSBENCH_DATA_VOLUME_ID did not appear within ${DEVICE_WAIT_S}s" >&2
            return 1
        fi
        sleep 2
    done
    echo "$device"
}

mount_data_volume() {
    local device root_disk uuid
    if mountpoint -q "$TSBENCH_DATA_MOUNT"; then
        echo "$TSBENCH_DATA_MOUNT already mounted"
        return 0
    fi
    device="$(wait_for_data_device)"
    root_disk="$(lsblk -npo PKNAME "$(findmnt -nvo SOURCE /)" | head -n1)"
    if [[ "$device" == "$root_disk" || "$device" == "$(findmnt -nvo SOURCE /)" ]]; then
        echo "refusing to use the root disk $device as the data volume" >&2
        return 1
    fi
    echo "data volume $TSBENCH_DATA_VOLUME_ID is $device"
    if [[ -z "$(blkid -o value -s TYPE "$device" || true)" ]]; then
        # Fresh volume: format once, fully initialised now so that no background inode-table
        # zeroing (ext4lazyinit) competes with the benchmark's I/O later.
        mkfs.ext4 -q -L tsbench-data -E lazy_itable_init=0,lazy_journal_init=0 "$device"
    fi
    uuid="$(blkid -o value -s UUID "$device")"
    mkdir -p "$TSBENCH_DATA_MOUNT"
    if ! grep -q "^UUID=$uuid " /etc/fstab; then
        echo "UUID=$uuid $TSBENCH_DATA_MOUNT ext4 defaults,noatime,nofail 0 2" >>/etc/fstab
    fi
    systemctl daemon-reload
    mount "$TSBENCH_DATA_MOUNT"
}

install_python() {
    if ! command -v python3 >/dev/null; then
        apt_get update
        apt_get install --no-install-recommends python3
    fi
}

start_node_agent() {
    if [[ ! -s /etc/tsbench/agent.token ]]; then
        echo "no node agent token given: tsbench-node-agent.service not installed"
        return 0
    fi
    cat >/etc/systemd/system/tsbench-node-agent.service <<UNIT
[Unit]
Description=tsbench node agent (usage, disk, facts and cold restarts of tsbench-db.service)
After=network-online.target
Wants=network-online.target
RequiresMountsFor=$TSBENCH_DATA_MOUNT

[Service]
ExecStart=/usr/bin/python3 /opt/tsbench/node_agent.py --port $TSBENCH_AGENT_PORT --token-file /etc/tsbench/agent.token --unit tsbench-db.service --data-dir $TSBENCH_DB_DIR
Restart=always
RestartSec=2

[Install]
WantedBy=multi-user.target
UNIT
    systemctl daemon-reload
    systemctl enable tsbench-node-agent.service
    systemctl restart tsbench-node-agent.service
}

run_install_script() {
    if [[ ! -s /opt/tsbench/install_db.sh ]]; then
        echo "no database install script given: nothing installed"
        return 0
    fi
    DATA_DIR="$TSBENCH_DB_DIR" DB_PASSWORD="$(cat /etc/tsbench/db_password)" \
        bash /opt/tsbench/install_db.sh 2>&1 | tee -a /var/log/tsbench-install.log
}

begin "mount the data volume"
mount_data_volume
begin "python3"
install_python
begin "node agent"
start_node_agent
begin "database install script"
run_install_script
step="done"
set_status "done"
echo "[tsbench-bootstrap] done"
