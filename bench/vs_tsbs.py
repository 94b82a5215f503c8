"""tsbench against TSBS, side by side in one run on this machine: generator, loaders (identical
rows), queries (TSBS's runner, TSBS's texts through our runner, our own texts), a worker sweep,
and our client's ceiling into do-nothing endpoints. TSBS is built from the vendored archive.

    .venv/bin/python bench/vs_tsbs.py [--targets questdb,influxdb,postgres,timescaledb]
        [--scale 100] [--hours 24] [--workers 1,2,4] [--trials 3] [--types default|all|a,b]
        [--queries 30] [--min-run-s 3] [--query-trials 5] [--query-workers 2]
        [--sections generator,load,ceiling,queries]

``--queries`` is the least number of queries per type; a type whose run would last under
``--min-run-s`` gets more (the same number on every side), so that start-up does not weigh.
QuestDB's small types on 2 cores spread ±15 % between 1-s runs on either side; 3–4-s runs spread
about as much (±10 %), so a ratio near 1 is read against both sides' min–max, not alone.

Trials alternate sides (ABBA order after one warm-up per side); medians with min–max are
printed and written to ``reports/out/bench/vs_tsbs.json``. Nothing else should run meanwhile:
both sides share the machine's cores with the server.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import tsbs_side
import vs_common
from vs_common import ROOT, TSBS_TOOLS, fmt_k, ratio
from vs_tsbs_load import ceiling, generator, load_section
from vs_tsbs_queries import query_section

from tsbench.machine import machine_facts
from tsbench.runtimes.local import LocalRuntime
from tsbench.workload.tsbs import import_tsbs

START = datetime.fromisoformat(tsbs_side.DAY_START.replace("Z", "+00:00"))  # where the TSBS data starts

DEFAULT_TYPES = (
    "single-groupby-1-1-1,single-groupby-5-8-1,cpu-max-all-1,double-groupby-1,"
    "high-cpu-1,high-cpu-all,lastpoint,groupby-orderby-limit"
)
ALL_TYPES = (
    "single-groupby-1-1-1,single-groupby-1-1-12,single-groupby-1-8-1,single-groupby-5-1-1,"
    "single-groupby-5-1-12,single-groupby-5-8-1,cpu-max-all-1,cpu-max-all-8,double-groupby-1,"
    "double-groupby-5,double-groupby-all,high-cpu-1,high-cpu-all,lastpoint,groupby-orderby-limit"
)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="questdb,influxdb,postgres,timescaledb")
    parser.add_argument("--scale", type=int, default=100)
    parser.add_argument("--hours", type=int, default=24)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--batch-size", type=int, default=10_000)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--types", default="default")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--min-run-s", type=float, default=3.0)
    parser.add_argument("--query-trials", type=int, default=5)
    parser.add_argument("--query-workers", type=int, default=2)
    parser.add_argument("--sections", default="generator,load,ceiling,queries")
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "out" / "bench" / "vs_tsbs.json")
    args = parser.parse_args()
    args.targets = [t for t in args.targets.split(",") if t]
    unknown = [t for t in args.targets if t not in TSBS_TOOLS]
    if unknown:
        parser.error(f"--targets: no TSBS counterpart known for {unknown}; known: {sorted(TSBS_TOOLS)}")
    args.workers = [int(w) for w in args.workers.split(",")]
    named = {"default": DEFAULT_TYPES, "all": ALL_TYPES}
    args.types = named.get(args.types, args.types).split(",")
    args.sections = set(args.sections.split(","))
    return args


def _data_files(bin_dir: Path, args: argparse.Namespace, work: Path) -> dict[str, Path]:
    """One TSBS file per data format the targets need (same seed, hosts and span)."""
    end = (START + timedelta(hours=args.hours)).strftime("%Y-%m-%dT%H:%M:%SZ")
    files = {}
    for fmt in sorted({TSBS_TOOLS[t].data_format for t in args.targets} | {"influx"}):
        made = tsbs_side.generate_data(bin_dir, out=work / f"data.{fmt}", fmt=fmt, scale=args.scale, end=end)
        if not made.run.ok:
            raise SystemExit(f"tsbs_generate_data --format={fmt} failed: {made.run.error}")
        files[fmt] = made.path
        print(f"TSBS data ({fmt}): {made.rows:,} rows, {made.bytes / 1e6:,.0f} MB")
    return files


def _stop_on_sigterm(signum: int, _frame: Any) -> None:
    raise SystemExit(128 + signum)  # unwinds through every ``serving`` block: servers are stopped


def main() -> None:
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    args = _arguments()
    started = time.perf_counter()
    bin_dir = tsbs_side.build_tsbs()
    work = Path(tempfile.mkdtemp(prefix="vs-tsbs-", dir="/var/tmp"))
    work.chmod(0o755)  # the PostgreSQL server runs as user postgres and needs to reach its folder
    os.environ["TSBENCH_DATASETS"] = str(work / "datasets")  # a fresh cache: encodings are timed here
    report: dict[str, Any] = {
        "machine": machine_facts(),
        "python": platform.python_version(),
        "args": vars(args),
    }
    report["args"] = {
        k: (sorted(v) if isinstance(v, set) else v) for k, v in vars(args).items() if k != "out"
    }
    try:
        files = _data_files(bin_dir, args, work)
        dataset, _ = import_tsbs(files["influx"], cache=work / "datasets")
        print(f"imported for tsbench: {sum(dataset.rows.values()):,} rows (dataset {dataset.id})")
        runtime = LocalRuntime(work / "state")
        if "generator" in args.sections:
            report["generator"] = generator(bin_dir, args.scale, args.trials, work)
            _print_generator(report["generator"])
        for name in args.targets:
            report.setdefault("targets", {})[name] = _target(
                name, bin_dir, files, dataset, args, runtime, work
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report["seconds"] = time.perf_counter() - started
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, default=str) + "\n")
    print(f"done in {report['seconds'] / 60:.1f} min; figures in {args.out}")


def _target(
    name: str, bin_dir: Path, files: dict[str, Path], dataset: Any, args: Any, runtime: Any, work: Path
):
    out: dict[str, Any] = {}
    print(f"== {name}")
    if "load" in args.sections:
        out["load"] = load_section(name, bin_dir, files, dataset, args, runtime)
        prep = out["load"]["prepare"]
        print(
            f"  prepare (outside the load window): wire bodies encoded in {prep['encode_s']:.2f} s, "
            f"{prep['encode_cpu_s']:.2f} CPU-s, {prep['processes']} process(es), "
            f"{prep['bytes_sent'] / 1e6:,.0f} MB sent / {prep['bytes_stored'] / 1e6:,.0f} MB stored"
        )
    if "ceiling" in args.sections:
        out["ceiling"] = ceiling(name, dataset, args)
        server = out.get("load", {}).get("workers", {}).get(2, {}).get("ours", {}).get("rows_per_s", {})
        wire, encode = out["ceiling"]["wire"]["median"], out["ceiling"]["encode_and_send"]["median"]
        rate = server.get("median")
        print(
            f"  ceiling (2 workers → do-nothing {TSBS_TOOLS[name].sink} endpoint): "
            f"wire bodies {fmt_k(wire)} rows/s"
            f" (×{ratio(wire, rate) or 0:.1f} of the server), encoding while sending {fmt_k(encode)} rows/s"
            f" (×{ratio(encode, rate) or 0:.1f})"
        )
    if "queries" in args.sections:
        out["queries"] = query_section(name, bin_dir, dataset, args, runtime, work)
    return out


def _print_generator(row: dict[str, Any]) -> None:
    theirs, ours = row["tsbs"]["rows_per_s"]["median"], row["ours"]["rows_per_s"]["median"]
    print(
        f"generator: TSBS {fmt_k(theirs)} rows/s (ILP text file), "
        f"ours {fmt_k(ours)} rows/s (Parquet dataset) "
        f"= ×{ratio(ours, theirs) or 0:.2f}; client CPU-s/M rows TSBS "
        f"{row['tsbs']['client_cpu_s_per_million_rows']['median']:.2f}, ours "
        f"{row['ours']['client_cpu_s_per_million_rows']['median']:.2f}"
    )


if __name__ == "__main__":
    vs_common.ROOT  # noqa: B018 - vs_common set up the import paths above
    main()
