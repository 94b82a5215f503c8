#!/usr/bin/env bash
# Install targets' servers for the local runtime: scripts/install.sh TARGET[@RELEASE]...
# Each target's own recipe (plugins/tsbench/targets/<target>/install.sh) runs with the variables of
# its definition.py (the version pin as <TARGET>_VERSION, or RELEASE, one of the releases it declares;
# an exported value overrides the pin, never a release).
# Prints what each recipe prints on stdout (e.g. the installed binary's path). Idempotent.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/lib.sh
source "$root/scripts/lib.sh"
python="${TSBENCH_PYTHON:-${TSBENCH_VENV:-$root/.venv}/bin/python}"

for target in "$@"; do
    assignments="$(PYTHONPATH="$root/plugins" "$python" -m tsbench.runtimes.definition "$target")" ||
        die "$target: no definition.py (plugins/tsbench/targets/${target%@*}/), or no such release"
    (
        while IFS='=' read -r name value; do
            # a release asked for wins over an exported pin override
            [[ -n "${!name:-}" && "$target" != *@* ]] || export "$name=$value"
        done <<<"$assignments"
        bash "$root/plugins/tsbench/targets/${target%@*}/install.sh"
    )
done
