"""Harness benchmark: the load driver against a do-nothing sink (client ceiling) and against each
real server, in one run, printed as rates and ratios.

    .venv/bin/python bench/load.py [--targets questdb,postgres,timescaledb,influxdb] [--scale 100]
        [--workers 2] [--batch-size 10000] [--trials 3]

Each server is provisioned fresh by the local runtime, loaded ``trials`` times (fresh schema each
time, median reported), then torn down. Reference figures measured with TSBS on this 2-core box
(2 workers, batch 10,000, 100 hosts × 1 day): QuestDB 278k rows/s, PostgreSQL plain COPY 171k,
InfluxDB 1.6.7 93k. Targets: ours ≥ TSBS's (ratio ≥ 1.0) and client ceiling ≥ 3 × the fastest server.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "plugins"))

from tsbench.measure.load import load  # noqa: E402
from tsbench.measure.sink import NullTarget  # noqa: E402
from tsbench.runtimes.local import LocalRuntime  # noqa: E402
from tsbench.spec import DatasetSpec  # noqa: E402
from tsbench.targets.registry import load_target  # noqa: E402
from tsbench.workload.dataset import ensure_dataset  # noqa: E402

TSBS_ROWS_PER_S = {"questdb": 278_000, "postgres": 171_000, "influxdb": 93_000}


def median_rate(target, dataset, args) -> float:
    rates = []
    for _ in range(args.trials):
        target.create_schema()
        rates.append(load(target, dataset, args.workers, args.batch_size).rows_per_s)
    return statistics.median(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="questdb,postgres,timescaledb,influxdb")
    parser.add_argument("--scale", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=10_000)
    parser.add_argument("--trials", type=int, default=3)
    args = parser.parse_args()
    dataset, _ = ensure_dataset(DatasetSpec.parse(scale=args.scale))
    rows = dataset.manifest["rows_total"]
    print(
        f"load harness: {rows:,} rows, {args.workers} workers, batch {args.batch_size:,}, "
        f"median of {args.trials}"
    )
    sink = NullTarget(None, dataset.use_case, dataset.tags())
    ceiling = median_rate(sink, dataset, args)
    print(f"{'client ceiling (sink)':>24}: {ceiling:>12,.0f} rows/s")
    runtime = LocalRuntime()
    rates = {}
    for name in filter(None, args.targets.split(",")):
        target_type = load_target(name)
        instance = f"bench-{name}-{uuid.uuid4().hex[:6]}"
        server = runtime.provision(target_type, instance)
        target = target_type(server.endpoint(), dataset.use_case, dataset.tags())
        try:
            rates[name] = median_rate(target, dataset, args)
        finally:
            target.close()
            runtime.teardown(instance)
        reference = TSBS_ROWS_PER_S.get(name)
        versus = f" = ×{rates[name] / reference:.2f} of TSBS's {reference:,}" if reference else ""
        print(f"{name:>24}: {rates[name]:>12,.0f} rows/s{versus}")
    fastest = max(rates.values(), default=0)
    if fastest:
        print(f"client ceiling / fastest server = ×{ceiling / fastest:.1f} (target ≥ 3)")


if __name__ == "__main__":
    main()
