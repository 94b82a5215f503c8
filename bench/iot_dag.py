"""iot through the comparison DAG (``dag.test()``, every task in this process): TSBS's trucks at one
scale loaded into every local target, then TSBS's 12 iot query types, every answer checked against
the oracle (issue 15 pt 4).

    .venv/bin/python bench/iot_dag.py [--targets questdb,timescaledb,timescaledb_tsl,postgres,influxdb,griddb]
        [--scale 100] [--duration 1d] [--queries-per-type 10]

Prints per target: rows loaded (what its data model keeps) and rows/s, the answers checked and
agreed, the types it declares unsupported; per query type the hot queries/s of every target and
their ratio to the best. One DAG run; the targets are measured one after the other.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from orchestration import comparison_dag, measured_work, print_shares

LOCAL = "questdb,timescaledb,timescaledb_tsl,postgres,influxdb,griddb"


def print_targets(point: dict[str, Any]) -> None:
    print(
        f"{'target':<16} {'status':<7} {'rows kept':>10} {'rows/s':>10}  "
        "answers agreed / checked  unsupported"
    )
    for name, body in point["targets"].items():
        load, queries = body.get("load") or {}, body.get("queries") or {}
        checks = queries.get("answer_checks") or {}
        trials = load.get("trials") or [{}]
        rows = sum((trials[0].get("row_counts") or {}).values())
        unsupported = ", ".join(queries.get("unsupported") or {}) or "none"
        print(
            f"{name:<16} {body['status']:<7} {rows:>10,} {load.get('median_rows_per_s', 0):>10,.0f}  "
            f"{checks.get('agreed', 0):>6} / {checks.get('checked', 0):<6}            {unsupported}"
        )


def print_query_rates(point: dict[str, Any]) -> None:
    targets = list(point["targets"])
    hot = {name: (body.get("queries") or {}).get("hot") or {} for name, body in point["targets"].items()}
    types = list(dict.fromkeys(qtype for per in hot.values() for qtype in per))
    print(f"{'hot queries/s':<34}" + "".join(f"{name:>16}" for name in targets))
    for qtype in types:
        rates = {name: hot[name][qtype]["qps"] for name in targets if qtype in hot[name]}
        best = max(rates.values())
        cells = [
            f"{rates[name]:>9.1f} ({rates[name] / best:.2f})" if name in rates else f"{'—':>16}"
            for name in targets
        ]
        print(f"{qtype:<34}" + "".join(f"{cell:>16}" for cell in cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default=LOCAL)
    parser.add_argument("--scale", type=int, default=100)
    parser.add_argument("--duration", default="1d")
    parser.add_argument("--queries-per-type", type=int, default=10)
    parser.add_argument("--json", type=Path, help="also write the comparison here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tsbench-iot-"))
    dag = comparison_dag(work, TSBENCH_STATE=str(Path("/var/tmp/tsbench-iot") / work.name))
    from tsbench.airflow.params import DEFAULTS

    conf = {
        **DEFAULTS,
        "use_case": "iot",
        "scales": [args.scale],
        "duration": args.duration,
        "targets": args.targets.split(","),
        "queries_per_type": args.queries_per_type,
    }
    started = time.perf_counter()
    run = dag.test(run_conf=conf)
    wall = time.perf_counter() - started
    folder = next(p for p in (work / "out" / "runs").iterdir() if p.is_dir())
    comparison = json.loads((folder / "comparison.json").read_text())
    point = comparison["results"][str(args.scale)]
    print(
        f"DAG run {run.state}: iot, {args.scale} trucks × {args.duration}, "
        f"failed: {comparison['failed_targets']}"
    )
    print_targets(point)
    print_query_rates(point)
    print_shares(wall, measured_work(folder, args.scale))
    print(f"report: {folder / 'report' / 'report.html'}")
    if args.json:
        args.json.write_text(json.dumps(comparison))


if __name__ == "__main__":
    main()
