#!/usr/bin/env bash
# Create .venv (Python 3.11) with the pinned requirements. Idempotent: reinstalls only when
# requirements.txt changed (a stamp keeps its sha256). On a fresh Debian 12 machine it installs
# python3-venv first (Debian's python3 is 3.11).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/lib.sh
source "$root/scripts/lib.sh"
venv="${TSBENCH_VENV:-$root/.venv}"
python="${PYTHON:-}"
if [[ -z "$python" ]]; then
    for candidate in python3.11 python3; do
        if command -v "$candidate" >/dev/null 2>&1; then python="$candidate"; break; fi
    done
fi
[[ -n "$python" ]] || { apt_install python3 python3-venv; python=python3; }
"$python" -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' \
    || die "tsbench needs Python 3.11 (found $("$python" --version 2>&1))"
if [[ ! -x "$venv/bin/python" ]]; then
    if ! "$python" -m venv "$venv" 2>/dev/null; then
        rm -rf "$venv"
        apt_install python3-venv
        "$python" -m venv "$venv"
    fi
fi
# uv installs the pinned requirements in ~12 s where pip took 2–3 minutes (CI's fresh clone).
uv_version=0.13.9
if [[ "$("$venv/bin/uv" --version 2>/dev/null)" != "uv $uv_version"* ]]; then
    "$venv/bin/pip" install -q "uv==$uv_version"
fi
want="$(sha256sum "$root/requirements.txt" | cut -d' ' -f1)"
stamp="$venv/.requirements.sha256"
if [[ "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
    log "uv pip install -r requirements.txt into $venv"
    "$venv/bin/uv" pip install -q --python "$venv/bin/python" -r "$root/requirements.txt"
    echo "$want" > "$stamp"
fi
# Bytecode, compiled up front: uv installs none, and where PYTHONDONTWRITEBYTECODE is set (as on
# the machines this project runs on here) Python never writes any either, so every process — each
# Airflow task, the CLI, each deployment's component — compiled every module it imported from
# source (great_expectations alone: 1,900 modules, ~4 s of CPU per process). compileall skips files
# whose bytecode is current, so this is under 1 s after the first time (~17 s); the repository's
# own code is compiled too (edited files again).
compiled="$venv/.bytecode.sha256"
if [[ "$(cat "$compiled" 2>/dev/null)" != "$want" ]]; then
    log "compiling the installed packages to bytecode"
    site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    # (exit 1 when some file does not compile: a few packages ship Python 2 examples and templates)
    "$venv/bin/python" -m compileall -q -j 0 "$site" >/dev/null 2>&1 || true
    echo "$want" > "$compiled"
fi
"$venv/bin/python" -m compileall -q -j 0 "$root/plugins" "$root/dags" "$root/tests" "$root/bench" >/dev/null 2>&1 || true
log "python ready: $venv ($("$venv/bin/python" --version))"
