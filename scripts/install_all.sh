#!/usr/bin/env bash
# Install every server the main job runs as a local process (see scripts/README.md): each target whose
# definition.py gives it a main_job position (its own install.sh, through scripts/install.sh), and
# MinIO.
# Idempotent: a second run only checks (well under a second per piece).
# Set TSBENCH_SKIP_MINIO=1 to skip the ~5 min MinIO build.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib.sh
source "$here/lib.sh"
python="${TSBENCH_PYTHON:-${TSBENCH_VENV:-$here/../.venv}/bin/python}"

timed() {
    local name="$1" start
    shift
    start=$(date +%s)
    "$@" >/dev/null
    log "$name done in $(($(date +%s) - start))s"
}

mapfile -t targets < <(PYTHONPATH="$here/../plugins" "$python" -m tsbench.runtimes.definition --main-job)
((${#targets[@]})) || die "no targets from tsbench.runtimes.definition --main-job ($python)"
for target in "${targets[@]}"; do
    timed "$target" bash "$here/install.sh" "$target"
done
if [[ -z "${TSBENCH_SKIP_MINIO:-}" ]]; then
    timed minio "$here/install_minio.sh"
fi

if [[ -z "${TSBENCH_SKIP_MINIO:-}" ]]; then
    minio_ver="$(cat "$TSBENCH_OPT/minio/VERSION")"
else
    minio_ver="skipped"
fi
echo "tsbench servers: ${targets[*]}, minio=$minio_ver (opt=$TSBENCH_OPT)"
