#!/usr/bin/env bash
# Create .venv (Python 3.11) with one of the hash-checked locks of pyproject.toml (scripts/lock.sh):
#
#   setup_python.sh            requirements/dev.txt: the runtime + the dev group (tests, linters, docs)
#   setup_python.sh --runtime  requirements/runtime.txt: what Airflow and its workers run, no test tool
#                              (main.sh, airflow_ui.sh, airflow_celery.sh); a venv that already holds
#                              the current dev lock (the same pins and more) is left as it is
#
# `uv pip sync`: exactly the lock's packages (others removed), every file checked against its hash.
# Idempotent: syncs only when the lock changed (a stamp keeps its name and sha256). On a fresh
# Debian 12 machine it installs python3-venv first (Debian's python3 is 3.11).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/lib.sh
source "$root/scripts/lib.sh"
case "${1:-}" in
    "") group=dev ;;
    --runtime) group=runtime ;;
    *) die "usage: setup_python.sh [--runtime]" ;;
esac
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
# uv installs the pinned lock in ~12 s where pip took 2–3 minutes (CI's fresh clone).
uv_version=0.13.9
if [[ "$("$venv/bin/uv" --version 2>/dev/null)" != "uv $uv_version"* ]]; then
    "$venv/bin/pip" install -q "uv==$uv_version"
fi
lock_stamp() { echo "$1 $(sha256sum "$root/requirements/$1.txt" | cut -d' ' -f1)"; }
want="$(lock_stamp "$group")"
stamp="$venv/.requirements.sha256"
have="$(cat "$stamp" 2>/dev/null || true)"
if [[ "$have" != "$want" && ! ("$group" == runtime && "$have" == "$(lock_stamp dev)") ]]; then
    log "uv pip sync requirements/$group.txt into $venv (hashes checked)"
    "$venv/bin/uv" pip sync -q --require-hashes --python "$venv/bin/python" "$root/requirements/$group.txt"
    echo "$want" > "$stamp"
fi
want="$(cat "$stamp")" # the lock installed (the dev one when it was kept)
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
