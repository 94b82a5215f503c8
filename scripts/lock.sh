#!/usr/bin/env bash
# Write the two locks from pyproject.toml: requirements/dev.txt (the runtime dependencies + the dev
# group: what the tests, linters and docs need) and requirements/runtime.txt (the runtime
# dependencies only: what an Airflow worker installs), every pin with its hashes. The runtime lock is
# resolved under the dev lock's pins, so the two agree on every package they share.
#
#   bash scripts/lock.sh                          # after editing pyproject.toml: keeps every other pin
#   bash scripts/lock.sh --upgrade-package NAME   # move one package (and what it needs) forward
#   bash scripts/lock.sh --upgrade                # move everything forward (then run the whole suite)
#
# Arguments go to the dev lock's `uv pip compile` (an existing lock's pins are its preferences).
# Python 3.11.7: the interpreter the locks are resolved for (setup_python.sh's venv).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup_python.sh >/dev/null # for uv (the pinned version)
compile=(.venv/bin/uv pip compile -q pyproject.toml --python-version 3.11.7 --generate-hashes
    --override requirements/overrides.txt
    --custom-compile-command "bash scripts/lock.sh")
"${compile[@]}" --group dev -o requirements/dev.txt "$@"
"${compile[@]}" -c requirements/dev.txt -o requirements/runtime.txt
echo "requirements/dev.txt: $(grep -c '^[A-Za-z0-9]' requirements/dev.txt) packages," \
    "requirements/runtime.txt: $(grep -c '^[A-Za-z0-9]' requirements/runtime.txt)"
