"""The rollup trade-off (study E's materialized views): the targets that build rollups (default
TimescaleDB's full edition — a continuous aggregate —, QuestDB — a materialized view — and InfluxDB —
a continuous query's rollup) at one
scale, one after the other; every query type on the raw data (cold + hot passes), then a 1-minute
rollup of cpu built (timed) and the types it answers run on it as many passes as the hot ones;
every answer, raw or rolled up, checked against the oracle.

    .venv/bin/python bench/rollups.py [--targets timescaledb_tsl,questdb,influxdb] [--scale 100]
        [--duration 1d] [--queries-per-type 10] [--hot-runs 3] [--compress]

Prints the build time, rows and bytes of the rollup beside the raw data's, per type the hot
queries/s on the raw data and on the rollup with their ratio, and the rollup's refresh after an
hour of rows is appended. One local server; nothing else runs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from study_a_local import print_rollups

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="timescaledb_tsl,questdb,influxdb")
    parser.add_argument("--scale", type=int, default=100)
    parser.add_argument("--duration", default="1d")
    parser.add_argument("--queries-per-type", type=int, default=10)
    parser.add_argument("--hot-runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--compress", action="store_true", help="compress the hypertable first")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "plugins"))  # print_rollups reads the figures with tsbench's model
    work = Path(tempfile.mkdtemp(prefix="tsbench-rollups-", dir="/var/tmp"))
    work.chmod(0o755)  # PostgreSQL runs as postgres
    run = ["run", "--targets", args.targets, "--scales", str(args.scale), "--duration", args.duration]
    run += ["--queries-per-type", str(args.queries_per_type), "--hot-runs", str(args.hot_runs)]
    run += ["--workers", str(args.workers), "--rollup-after-load", "--run-id", "rollups"]
    run += ["--compress-after-load"] if args.compress else []
    run += ["--results-dir", str(work / "runs"), "--cache-dir", str(work / "datasets")]
    run += ["--state-dir", str(work / "state")]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tsbench", *run], check=True, env=env)
    folder = work / "runs" / "rollups"
    comparison = json.loads((folder / "comparison.json").read_text())
    print(f"run in {(time.perf_counter() - started) / 60:.1f} min; report {folder}/report/report.html")
    for result in comparison["results"].values():
        for name, body in result["targets"].items():
            checks = body["queries"]["answer_checks"]
            agreed = f"{checks['agreed']}/{checks['checked']}"
            print(f"{name} answers: {agreed} agree with the oracle (raw and rollup)")
    print_rollups(comparison)


if __name__ == "__main__":
    main()
