"""Generator benchmark: rows/s written to Parquet and peak RSS, measured in fresh child processes.

Cases (issue 2): cpu-only 1,000 hosts × 1 day (rows/s, peak RSS) and 100,000 hosts × 1 hour (peak
RSS, to show memory is flat in scale). Each case runs in its own process (so peak RSS is that of the
case alone) into a fresh temporary cache. Prints one line per case and the ratios to the targets.

    .venv/bin/python bench/generator.py [--cases 1000x1d,100000x1h]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_ROWS_PER_S = 1_000_000
TARGET_PEAK_RSS_GB = 1.5
CASES = {
    "1000x1d": {"scale": 1000, "end": "2016-01-02T00:00:00Z"},
    "100000x1h": {"scale": 100_000, "end": "2016-01-01T01:00:00Z"},
    "100x1d": {"scale": 100, "end": "2016-01-02T00:00:00Z"},
    "4000x3d": {"scale": 4000, "end": "2016-01-04T00:00:00Z"},
}


def child(case: str, cache: str) -> None:
    sys.path.insert(0, str(ROOT / "plugins"))
    from tsbench.spec import DatasetSpec
    from tsbench.workload.dataset import ensure_dataset

    spec = DatasetSpec.parse(**CASES[case])
    started = time.perf_counter()
    dataset, _ = ensure_dataset(spec, cache)
    seconds = time.perf_counter() - started
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    size = sum(f.bytes for f in dataset.manifest.files)
    print(json.dumps({"rows": spec.rows_total, "seconds": seconds, "peak_rss_kb": peak_kb, "bytes": size}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default="1000x1d,100000x1h")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--cache", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.cache)
        return
    print(
        f"generator benchmark on {os.cpu_count()} cores "
        f"(target ≥ {TARGET_ROWS_PER_S:,} rows/s, peak RSS ≤ {TARGET_PEAK_RSS_GB} GB)"
    )
    for case in args.cases.split(","):
        with tempfile.TemporaryDirectory() as cache:
            out = subprocess.run(
                [sys.executable, __file__, "--child", case, "--cache", cache],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        r = json.loads(out.strip().splitlines()[-1])
        rate = r["rows"] / r["seconds"]
        rss_gb = r["peak_rss_kb"] / 1e6
        print(
            f"{case:>10}: {r['rows']:>12,} rows in {r['seconds']:6.2f} s = {rate:>11,.0f} rows/s "
            f"(×{rate / TARGET_ROWS_PER_S:.2f} of target); peak RSS {rss_gb:.2f} GB "
            f"(×{rss_gb / TARGET_PEAK_RSS_GB:.2f} of limit); {r['bytes'] / r['rows']:.1f} B/row on disk"
        )


if __name__ == "__main__":
    main()
