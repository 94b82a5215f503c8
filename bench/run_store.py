"""What a branch's phase task pays to open and close its workspace on an S3 run store (MinIO, a
real S3 server): the pull and the push of what the task wrote, for the whole run folder (what a
phase task pulled before: all of it but the reference answers) against only its own part of it
(``group_phases.branch_part``: its point folder without the other targets' folders).

    .venv/bin/python bench/run_store.py [--folder RUN_FOLDER] [--rounds 20]

``--folder`` is a finished run folder (default: the newest under ``/tmp/tsbench-orch-*/out/runs``,
which ``bench/orchestration.py`` or ``scripts/main.sh`` leaves: 4 targets, 100 hosts × 1 day; what
the last branch sees, the other three targets' folders written). Each round opens a workspace,
rewrites one phase file (what a phase task pushes) and closes it; the forms alternate. Printed:
files pulled and median seconds per round of each form, and their ratio.
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "plugins")]

from integration.minio import running_minio  # noqa: E402


def newest_run_folder() -> Path:
    patterns = ("/tmp/tsbench-orch-*/out/runs/*", str(ROOT / "reports" / "out" / "runs" / "*"))
    folders = [Path(p) for pattern in patterns for p in glob.glob(pattern) if Path(p).is_dir()]
    if not folders:
        raise SystemExit("no run folder: run bench/orchestration.py first or pass --folder")
    return max(folders, key=lambda p: p.stat().st_mtime)


def one_round(url: str, part: Any) -> tuple[float, int]:
    """Seconds to pull ``part`` of the run folder, change one phase file and push it back; the
    number of files pulled."""
    from tsbench.results import workspace as ws

    fs = ws.s3_filesystem()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        local = Path(scratch) / "run"
        pulled = ws.pull(url, local, fs, part)
        phase_file = next(local.glob("*/targets/questdb/load.json"))
        phase_file.write_text(phase_file.read_text() + " ")
        ws.push(local, url, pulled, fs)
    return time.perf_counter() - started, len(pulled)


def main() -> None:
    from tsbench.results.workspace import Part, push
    from tsbench.run.group import branch_part

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    folder = args.folder or newest_run_folder()
    point = next(folder.glob("*/targets/questdb")).parents[1].name
    forms = {
        "whole run folder": Part(leaves_out=lambda relative: relative.endswith("/answers.jsonl")),
        "the branch's part": branch_part([point], "questdb", "load"),
    }
    with tempfile.TemporaryDirectory() as work, running_minio(Path(work)) as minio:
        os.environ.update(minio.aws_environment())
        url = f"s3://{minio.new_bucket('runstore')}/runs/{folder.name}"
        push(folder, url, {})
        times: dict[str, list[float]] = {name: [] for name in forms}
        files = {name: one_round(url, part)[1] for name, part in forms.items()}  # warm-up
        for index in range(args.rounds):
            for name in list(forms) if index % 2 == 0 else list(forms)[::-1]:
                times[name].append(one_round(url, forms[name])[0])
    medians = {name: statistics.median(times[name]) for name in forms}
    for name, median in medians.items():
        print(f"{name:>18}: {files[name]:3d} files pulled, pull + push median {median * 1000:.0f} ms")
    whole, part = medians.values()
    print(f"ratio {whole / part:.2f}× faster ({args.rounds} alternating rounds each)")


if __name__ == "__main__":
    main()
