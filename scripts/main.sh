#!/usr/bin/env bash
# The main job on a fresh Debian machine: set everything up, then run a small comparison.
# Today (workload core): dataset → logical queries → reference answers, in reports/out/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup_python.sh
out="${TSBENCH_OUT:-reports/out/main}"
mkdir -p "$out"
py=(.venv/bin/python -m tsbench)
flags=(--scale "${TSBENCH_SCALE:-100}" --start 2016-01-01T00:00:00Z --end 2016-01-02T00:00:00Z --interval 10s --seed 123)
"${py[@]}" generate "${flags[@]}"
"${py[@]}" queries "${flags[@]}" --per-type 10 --out "$out/queries.jsonl"
"${py[@]}" answers "${flags[@]}" --queries "$out/queries.jsonl" --out "$out/answers.jsonl"
