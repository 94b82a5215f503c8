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


def measured(comparison: dict[str, Any]) -> dict[tuple[str, str, tuple[int, int], str], float]:
    """``(metric or query type, target, (scale, batch size), ingestion)`` → median load rows/s,
    footprint bytes after load, or hot queries/s (only clean passes: no error, no wrong answer)."""
    figures: dict[tuple[str, str, tuple[int, int], str], float] = {}
    for result in comparison["results"].values():
        spec = result["spec"]
        where, ingestion = (spec["scale"], spec["batch_size"]), spec["ingestion"]
        for target, body in result["targets"].items():
            said = f"  {target} at {where[0]} hosts, batch {where[1]}, {ingestion}:"
            if body.get("status") != "ok":
                print(f"{said} {body.get('status')} {body.get('error', '')}")
                continue
            key = (target, where, ingestion)
            figures[("load_rows_per_s", *key)] = body["load"]["median_rows_per_s"]
            rates = [trial["rows_per_s"] for trial in body["load"]["trials"]]
            figures[("load_min", *key)], figures[("load_max", *key)] = min(rates), max(rates)
            cpu = [trial.get("client_cpu_s_per_million_rows") or 0 for trial in body["load"]["trials"]]
            figures[("client_cpu_s_per_m", *key)] = sorted(cpu)[len(cpu) // 2]
            figures[("footprint_bytes", *key)] = body["footprint"]["after_load"]["bytes"]
            compression = body["footprint"].get("compression")
            if compression:
                before, after = compression["bytes_before"], compression["bytes_after"]
                print(
                    f"{said} compressed {compression['units']} chunks in {compression['seconds']:.1f} s, "
                    f"{before / 1e6:.1f} MB → {after / 1e6:.1f} MB (×{before / after:.1f})"
                )
            for qtype in TYPES:
                stats = body["queries"]["hot"].get(qtype) or {}
                if stats.get("qps") and not stats.get("errors") and not stats.get("mismatches"):
                    figures[(qtype, *key)] = stats["qps"]
    return figures


def _points(figures: dict) -> list[tuple[int, int]]:
    return sorted({key[2] for key in figures})


def print_tables(figures: dict, targets: list[str]) -> None:
    """Per point (scale, batch size) and ingestion order: load, client CPU, footprint, hot qps."""
    for where in _points(figures):
        for ingestion in ("interleaved", "per-host-runs"):
            print(f"\n{where[0]} hosts, batch {where[1]}, {ingestion}")
            header = f"  {'target':<16} {'rows/s (min–max)':>26} {'CPU-s/M':>8} {'footprint MB':>13} "
            print(header + " ".join(f"{t:>21}" for t in TYPES))
            for target in targets:
                key = (target, where, ingestion)
                if ("load_rows_per_s", *key) not in figures:
                    continue
                low, high = figures[("load_min", *key)], figures[("load_max", *key)]
                load = f"{figures[('load_rows_per_s', *key)]:,.0f} ({low:,.0f}–{high:,.0f})"
                qps = " ".join(f"{figures.get((t, *key), float('nan')):>21.2f}" for t in TYPES)
                cpu, size = figures[("client_cpu_s_per_m", *key)], figures[("footprint_bytes", *key)]
                print(f"  {target:<16} {load:>26} {cpu:>8.1f} {size / 1e6:>13.1f} {qps}")


def _ratio(figures: dict, metric: str, pair: tuple[str, str], where: tuple[int, int], order: str) -> str:
    values = [figures.get((metric, target, where, order)) for target in pair]
    return f"{values[0] / values[1]:8.2f}" if all(values) else "       –"


def print_ratios(figures: dict, targets: list[str]) -> None:
    """GridDB ÷ each other database, measured (interleaved) beside published (same scale); the
    TimescaleDB editions; per-host-runs ÷ interleaved load per database (the study: ≈ +10 % for
    GridDB)."""
    published = published_ratios()
    print("\nratios, interleaved: measured here | published (study A, same scale)")
    for where in _points(figures):
        for other in (t for t in targets if t != "griddb"):
            for metric in ("load_rows_per_s", *TYPES):
                theirs = published.get((metric, f"griddb/{other}", where[0]))
                shown = f"{theirs:8.2f}" if theirs is not None else "       –"
                mine = _ratio(figures, metric, ("griddb", other), where, "interleaved")
                print(
                    f"  {where[0]:>6} hosts b{where[1]:<6} griddb/{other:<16} {metric:<22} {mine} | {shown}"
                )
    if {"timescaledb", "timescaledb_tsl"} <= set(targets):
        print("\nTimescaleDB editions: full ÷ Apache-2, interleaved")
        for where in _points(figures):
            for metric in ("load_rows_per_s", "footprint_bytes", *TYPES):
                mine = _ratio(figures, metric, ("timescaledb_tsl", "timescaledb"), where, "interleaved")
                print(f"  {where[0]:>6} hosts b{where[1]:<6} {metric:<22} {mine}")
    print("\ningestion order: per-host-runs ÷ interleaved, median load rows/s")
    for where in _points(figures):
        for target in targets:
            runs, mixed = (
                figures.get(("load_rows_per_s", target, where, o)) for o in ("per-host-runs", "interleaved")
            )
            if runs and mixed:
                print(
                    f"  {where[0]:>6} hosts b{where[1]:<6} {target:<16} {runs / mixed:6.3f}"
                    f"  ({runs:,.0f} vs {mixed:,.0f})"
                )


def print_rollups(comparison: dict[str, Any]) -> None:
    """Per point and target that built a rollup: build seconds, rows, bytes beside the raw data's
    (after settle; the rolled-up table's own, as the report sets it), and per type the hot
    queries/s on the raw data and on the rollup."""
    from tsbench.report.sections.rollups import rolled_up_table_bytes
    from tsbench.results.model import FootprintFigures

    for result in comparison["results"].values():
        spec = result["spec"]
        for target, body in result["targets"].items():
            rollup = (body.get("queries") or {}).get("rollup")
            if not rollup:
                continue
            footprint = body.get("footprint") or {}
            stored = footprint.get("after_settle") or footprint.get("after_load") or {}
            raw = rolled_up_table_bytes(FootprintFigures.model_validate(stored), rollup.get("source", ""))
            print(
                f"\nrollup {rollup['name']} of {target} at {spec['scale']} hosts, {spec['ingestion']}: "
                f"built in {rollup['seconds']:.2f} s, {rollup['rows']:,} rows, "
                f"{rollup['bytes'] / 1e6:.1f} MB "
                f"(its raw table {raw / 1e6 if raw else float('nan'):.1f} MB)"
            )
            if refresh := rollup.get("refresh"):
                print(
                    f"  refresh after an append of {refresh['rows_appended']:,} rows (written and flushed in "
                    f"{refresh['append_s']:.2f} s): {refresh['refresh_s']:.3f} s, "
                    f"{refresh['rollup_rows']:,} rollup rows for them"
                )
            hot = body["queries"]["hot"]
            for qtype, stats in rollup["on_rollup"].items():
                raw_qps = hot.get(qtype, {}).get("qps")
                ratio = f"×{stats['qps'] / raw_qps:.2f}" if raw_qps and stats.get("qps") else "–"
                print(
                    f"  {qtype:<22} raw {raw_qps or 0:8.1f} q/s  "
                    f"rollup {stats.get('qps') or 0:8.1f} q/s  {ratio}"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="griddb,questdb,timescaledb,timescaledb_tsl")
    parser.add_argument("--scales", default="100,1000")
    parser.add_argument("--duration", default="1d")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument(
        "--batch-sizes", default="1000", help="e.g. 1000,10000 (the study: 1,000; 10,000 for GridDB)"
    )
    parser.add_argument("--queries-per-type", type=int, default=5)
    parser.add_argument(
        "--compress", action="store_true", help="compress_after_load (targets that can: the full edition)"
    )
    parser.add_argument(
        "--rollup", action="store_true", help="rollup_after_load (targets that can: the full edition)"
    )
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
        "compress_after_load": args.compress,
        "rollup_after_load": args.rollup,
        "batch_size": [int(b) for b in args.batch_sizes.split(",")],
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
    print_tables(figures, targets)
    print_ratios(figures, targets)
    print_rollups(comparison)
    if args.json:
        args.json.write_text(json.dumps({" ".join(map(str, k)): v for k, v in figures.items()}, indent=1))


if __name__ == "__main__":
    main()
