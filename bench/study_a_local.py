"""Study A (Fixstars 2023: GridDB, QuestDB, TimescaleDB on TSBS cpu-only) on this machine's local
servers through the study's DAG (``dag.test()``): load rows/s in both ingestion orders, footprint,
the five query types, and the ratios between the databases beside the study's published ratios.

    .venv/bin/python bench/study_a_local.py [--scales 100,1000] [--duration 1d] [--trials 3]

Every point is measured alone on the machine (the pipeline's host lease); every answer is checked
against the oracle. Absolute figures are not comparable with the study's (an 8-core Azure VM, 4
months of data per host, 8-10 workers, GridDB 4.6): ratios between databases and between the two
ingestion orders are what this prints beside the published ones.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from orchestration import comparison_dag

ROOT = Path(__file__).resolve().parents[1]
STUDY = ROOT / "studies" / "a_fixstars_2023.yaml"
TYPES = ("high-cpu-all", "high-cpu-1", "lastpoint", "single-groupby-1-1-1", "double-groupby-1")


def published_ratios() -> dict[tuple[str, str, int], float]:
    """``(metric or query type, "griddb/<other>", scale)`` → the study's ratio (its own figures)."""
    from tsbench.studies import load_study

    figures: dict[tuple[str, str, int], float] = {}
    for figure in load_study(STUDY).published.figures:
        figures[(figure.query_type or figure.metric, figure.target, int(figure.at["scale"]))] = figure.value
    ratios = {}
    for (metric, target, scale), value in figures.items():
        if target == "griddb":
            continue
        griddb = figures.get((metric, "griddb", scale))
        if griddb is not None and value:
            ratios[(metric, f"griddb/{target}", scale)] = griddb / value
    return ratios


def measured(comparison: dict[str, Any]) -> dict[tuple[str, str, int, str], float]:
    """``(metric or query type, target, scale, ingestion)`` → median load rows/s, footprint bytes
    after load, or hot queries/s (only clean passes: no error, no wrong answer)."""
    figures: dict[tuple[str, str, int, str], float] = {}
    for result in comparison["results"].values():
        scale, ingestion = result["spec"]["scale"], result["spec"]["ingestion"]
        for target, body in result["targets"].items():
            if body.get("status") != "ok":
                print(
                    f"  {target} at {scale} hosts, {ingestion}: {body.get('status')} {body.get('error', '')}"
                )
                continue
            key = (target, scale, ingestion)
            figures[("load_rows_per_s", *key)] = body["load"]["median_rows_per_s"]
            rates = [trial["rows_per_s"] for trial in body["load"]["trials"]]
            figures[("load_min", *key)], figures[("load_max", *key)] = min(rates), max(rates)
            figures[("footprint_bytes", *key)] = body["footprint"]["after_load"]["bytes"]
            figures[("disk_bytes", *key)] = body["footprint"]["after_load"]["disk_bytes"]
            for qtype in TYPES:
                stats = body["queries"]["hot"].get(qtype) or {}
                if stats.get("qps") and not stats.get("errors") and not stats.get("mismatches"):
                    figures[(qtype, *key)] = stats["qps"]
    return figures


def print_tables(figures: dict, scales: list[int], targets: list[str]) -> None:
    """Per scale and ingestion order: load, footprint and hot qps per target."""
    for scale in scales:
        for ingestion in ("interleaved", "per-host-runs"):
            print(f"\n{scale} hosts, {ingestion}")
            print(
                f"  {'target':<12} {'rows/s (min–max)':>26} {'footprint MB':>13} "
                + " ".join(f"{t:>20}" for t in TYPES)
            )
            for target in targets:
                key = (target, scale, ingestion)
                if ("load_rows_per_s", *key) not in figures:
                    continue
                low, high = figures[("load_min", *key)], figures[("load_max", *key)]
                load = f"{figures[('load_rows_per_s', *key)]:,.0f} ({low:,.0f}–{high:,.0f})"
                qps = " ".join(f"{figures.get((t, *key), float('nan')):>20.2f}" for t in TYPES)
                print(f"  {target:<12} {load:>26} {figures[('footprint_bytes', *key)] / 1e6:>13.1f} {qps}")


def print_ratios(figures: dict, scales: list[int], targets: list[str]) -> None:
    """GridDB ÷ each other database, measured (interleaved) beside published; then per-host-runs ÷
    interleaved load per database (the study: ≈ +10 % for GridDB)."""
    published = published_ratios()
    print("\nratios, interleaved: measured here | published (study A, same scale)")
    for scale in scales:
        for other in (t for t in targets if t != "griddb"):
            for metric in ("load_rows_per_s", *TYPES):
                ours = [figures.get((metric, t, scale, "interleaved")) for t in ("griddb", other)]
                mine = f"{ours[0] / ours[1]:8.2f}" if all(ours) else "       –"
                theirs = published.get((metric, f"griddb/{other}", scale))
                shown = f"{theirs:8.2f}" if theirs is not None else "       –"
                print(f"  {scale:>6} hosts  griddb/{other:<12} {metric:<22} {mine} | {shown}")
    if {"timescaledb", "timescaledb_tsl"} <= set(targets):
        print("\nTimescaleDB editions: full ÷ Apache-2, interleaved (both uncompressed)")
        for scale in scales:
            for metric in ("load_rows_per_s", "footprint_bytes", *TYPES):
                pair = [
                    figures.get((metric, t, scale, "interleaved")) for t in ("timescaledb_tsl", "timescaledb")
                ]
                if all(pair):
                    print(f"  {scale:>6} hosts  {metric:<22} {pair[0] / pair[1]:8.3f}")
    print("\ningestion order: per-host-runs ÷ interleaved, median load rows/s")
    for scale in scales:
        for target in targets:
            runs, mixed = (
                figures.get(("load_rows_per_s", target, scale, o)) for o in ("per-host-runs", "interleaved")
            )
            if runs and mixed:
                print(
                    f"  {scale:>6} hosts  {target:<12} {runs / mixed:6.3f}"
                    f"  ({runs:,.0f} vs {mixed:,.0f} rows/s)"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="griddb,questdb,timescaledb,timescaledb_tsl")
    parser.add_argument("--scales", default="100,1000")
    parser.add_argument("--duration", default="1d")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--queries-per-type", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the measured figures here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tsbench-study-a-", dir="/var/tmp"))
    work.chmod(0o755)  # the servers run as their own users (PostgreSQL as postgres)
    dag = comparison_dag(work, dag_id="tsbench_study_a_fixstars_2023", TSBENCH_STATE=str(work / "state"))
    from tsbench.studies import load_study

    targets, scales = args.targets.split(","), [int(s) for s in args.scales.split(",")]
    conf = {
        **load_study(STUDY).params_for("small"),
        "targets": targets,
        "scales": scales,
        "duration": args.duration,
        "trials": [args.trials],
        "queries_per_type": args.queries_per_type,
    }
    started = time.perf_counter()
    run = dag.test(run_conf=conf)
    wall = time.perf_counter() - started
    folder = next(p for p in (work / "out" / "runs").iterdir() if p.is_dir())
    comparison = json.loads((folder / "comparison.json").read_text())
    print(
        f"study A DAG run {run.state} in {wall / 60:.1f} min: {targets} at {scales} hosts × {args.duration}, "
        f"{args.trials} trials, {args.queries_per_type} queries per type; report {folder}/report/report.html"
    )
    figures = measured(comparison)
    print_tables(figures, scales, targets)
    print_ratios(figures, scales, targets)
    if args.json:
        args.json.write_text(json.dumps({" ".join(map(str, k)): v for k, v in figures.items()}, indent=1))


if __name__ == "__main__":
    main()
