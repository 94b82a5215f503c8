"""What a task pays to open and close its workspace on an S3 run store (MinIO, a real S3 server):
the pull of the run folder and the push of what the task wrote, one object at a time against
``TRANSFER_THREADS`` at a time.

    .venv/bin/python bench/run_store.py [--folder RUN_FOLDER] [--rounds 20]

``--folder`` is a finished run folder (default: the newest under ``/tmp/tsbench-orch-*/out/runs``,
which ``bench/orchestration.py`` leaves: 4 targets, 100 hosts × 1 day); its reference answers are
skipped as a phase task skips them. Each round opens a workspace, rewrites one phase file (what a
phase task pushes) and closes it; the forms alternate. Printed: median seconds per round and the
ratio.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "plugins")]

from integration.minio import running_minio  # noqa: E402


def newest_run_folder() -> Path:
    folders = [Path(p) for p in glob.glob("/tmp/tsbench-orch-*/out/runs/*") if Path(p).is_dir()]
    if not folders:
        raise SystemExit("no run folder: run bench/orchestration.py first or pass --folder")
    return max(folders, key=lambda p: p.stat().st_mtime)


def one_round(url: str, threads: int) -> float:
    """Seconds to pull the run folder (answers skipped), change one file and push it back."""
    from tsbench.results import workspace as ws

    fs = ws.s3_filesystem()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        local = Path(scratch) / "run"
        pulled = ws.pull(url, local, fs, frozenset({"answers.jsonl"}), threads=threads)
        phase_file = next(local.glob("*/targets/*/load.json"))
        phase_file.write_text(phase_file.read_text() + " ")
        ws.push(local, url, pulled, fs, threads=threads)
    return time.perf_counter() - started


def main() -> None:
    from tsbench.results.workspace import TRANSFER_THREADS, push

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    folder = args.folder or newest_run_folder()
    files = [p for p in folder.rglob("*") if p.is_file() and p.name != "answers.jsonl"]
    size = sum(p.stat().st_size for p in files)
    print(f"run folder {folder.name}: {len(files)} files pulled per task, {size:,} B")
    with tempfile.TemporaryDirectory() as work, running_minio(Path(work)) as minio:
        os.environ.update(minio.aws_environment())
        url = f"s3://{minio.new_bucket('runstore')}/runs/{folder.name}"
        push(folder, url, {})
        times: dict[int, list[float]] = {1: [], TRANSFER_THREADS: []}
        one_round(url, 1)  # warm-up: connections, imports
        for index in range(args.rounds):
            for threads in (1, TRANSFER_THREADS) if index % 2 == 0 else (TRANSFER_THREADS, 1):
                times[threads].append(one_round(url, threads))
    one, many = (statistics.median(times[k]) for k in (1, TRANSFER_THREADS))
    print(f"pull + push, one object at a time: median {one * 1000:.0f} ms per task")
    print(f"pull + push, {TRANSFER_THREADS} at a time:       median {many * 1000:.0f} ms per task")
    print(f"ratio {one / many:.2f}× faster ({args.rounds} alternating rounds each)")


if __name__ == "__main__":
    main()
