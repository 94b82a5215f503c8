"""tsbench command line: generate, import, export, queries, answers, run.

Every subcommand validates its parameters first (a clear message and exit code 2 on bad input),
shows a progress bar on long work, and ends with a one-line summary.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from tsbench.progress import Progress
from tsbench.spec import DatasetSpec, QuerySetSpec, SpecError
from tsbench.workload.dataset import Dataset, DatasetError, cache_dir, ensure_dataset

EXIT_BAD_INPUT = 2
EXIT_TARGET_FAILED = 3


def _summary(verb: str, count: int, unit: str, seconds: float, path: Path | str) -> str:
    rate = count / seconds if seconds > 0 else 0.0
    return f"{verb} {count:,} {unit} in {seconds:.2f} s ({rate:,.0f} {unit}/s) → {path}"


def _add_dataset_flags(parser: argparse.ArgumentParser, allow_path: bool = True) -> None:
    group = parser.add_argument_group("dataset (generated on first use, then reused from the cache)")
    if allow_path:
        group.add_argument(
            "--dataset", type=Path, help="an existing dataset folder (overrides the flags below)"
        )
    group.add_argument("--use-case", choices=["cpu-only", "devops", "iot"], default=None)
    group.add_argument("--scale", type=int, help="number of hosts (default 100)")
    group.add_argument("--start", help="first timestamp, ISO-8601 (default 2016-01-01T00:00:00Z)")
    group.add_argument("--end", help="exclusive end, ISO-8601 (default 2016-01-02T00:00:00Z)")
    group.add_argument("--interval", help="time between epochs, e.g. 10s (default 10s)")
    group.add_argument("--seed", type=int, help="data seed (default 123)")
    group.add_argument("--ingestion", choices=["interleaved", "per-host-runs"], default=None)
    group.add_argument("--run-length", type=int, help="rows per host per run, for per-host-runs (default 10)")
    group.add_argument(
        "--cache-dir", type=Path, help="dataset cache (default $TSBENCH_DATASETS or datasets/cache)"
    )


def _dataset_spec(args: argparse.Namespace) -> DatasetSpec:
    return DatasetSpec.parse(
        use_case=args.use_case,
        scale=args.scale,
        start=args.start,
        end=args.end,
        interval=args.interval,
        seed=args.seed,
        ingestion=args.ingestion,
        run_length=args.run_length,
    )


def _obtain_dataset(args: argparse.Namespace) -> tuple[Dataset, bool, float]:
    """The dataset named by --dataset, or the cached/generated one for the spec flags."""
    started = time.perf_counter()
    if getattr(args, "dataset", None):
        return Dataset.open(args.dataset), True, 0.0
    spec = _dataset_spec(args)
    with Progress("generate", total=spec.rows_total) as progress:
        dataset, reused = ensure_dataset(spec, args.cache_dir, progress)
    return dataset, reused, time.perf_counter() - started


def cmd_generate(args: argparse.Namespace) -> str:
    dataset, reused, seconds = _obtain_dataset(args)
    rows = dataset.manifest["rows_total"]
    if reused:
        return f"reused {rows:,} rows (already in the cache) → {dataset.path}"
    return _summary("generated", rows, "rows", seconds, dataset.path)


def cmd_import(args: argparse.Namespace) -> str:
    from tsbench.workload.tsbs import import_tsbs

    started = time.perf_counter()
    with Progress("import", unit="rows") as progress:
        dataset, reused = import_tsbs(
            args.file, fmt=args.format, use_case=args.use_case, cache=args.cache_dir, progress=progress
        )
    rows = dataset.manifest["rows_total"]
    if reused:
        return f"reused {rows:,} rows (this file was imported before) → {dataset.path}"
    return _summary("imported", rows, "rows", time.perf_counter() - started, dataset.path)


def cmd_export(args: argparse.Namespace) -> str:
    from tsbench.workload.tsbs import export_dataset

    dataset, _, _ = _obtain_dataset(args)
    started = time.perf_counter()
    with Progress("export", total=dataset.manifest["rows_total"]) as progress:
        rows = export_dataset(dataset, args.format, args.out, progress=progress)
    return _summary("exported", rows, "rows", time.perf_counter() - started, args.out)


def _query_set_spec(args: argparse.Namespace, dataset: Dataset) -> QuerySetSpec:
    """Validate the query options against the dataset (through the one set of checks in spec.py)."""
    return QuerySetSpec.parse(
        **dataset.spec_fields(),
        query_types=args.types.split(",") if args.types else None,
        queries_per_type=args.per_type,
        query_seed=args.query_seed,
    )


def cmd_queries(args: argparse.Namespace) -> str:
    from tsbench.workload.queries import DataRange, generate_queries, write_query_set

    dataset, _, _ = _obtain_dataset(args)
    spec = _query_set_spec(args, dataset)
    started = time.perf_counter()
    queries = generate_queries(
        DataRange.of(dataset), spec.resolved_query_types, spec.queries_per_type, spec.effective_query_seed
    )
    out = write_query_set(args.out, queries)
    return _summary("wrote", len(queries), "queries", time.perf_counter() - started, out)


def cmd_answers(args: argparse.Namespace) -> str:
    from tsbench.workload.oracle import Oracle, write_answers
    from tsbench.workload.queries import read_query_set

    dataset, _, _ = _obtain_dataset(args)
    queries = read_query_set(args.queries)
    started = time.perf_counter()
    oracle = Oracle(dataset)
    try:
        with Progress("answers", total=len(queries), unit="queries") as progress:
            out = write_answers(args.out, oracle.answers(queries, progress))
    finally:
        oracle.close()
    return _summary("answered", len(queries), "queries", time.perf_counter() - started, out)


def cmd_run(args: argparse.Namespace) -> str:
    from tsbench.comparison import parse_comparison
    from tsbench.results.tables import all_tables
    from tsbench.runner import run_comparison
    from tsbench.runtimes.local import LocalRuntime

    dataset = {k: v for k, v in _dataset_spec(args).dataset_key().items() if k != "scale"}
    scales = [int(s) for s in args.scales.split(",")] if args.scales else [args.scale or 100]
    specs = parse_comparison(
        {
            **dataset,
            "scales": scales,
            "targets": args.targets.split(",") if args.targets else [],
            "query_types": args.types.split(",") if args.types else None,
            "queries_per_type": args.per_type,
            "query_seed": args.query_seed,
            "workers": args.workers,
            "batch_size": args.batch_size,
            "hash_workers": args.hash_workers,
            "trials": args.trials,
            "hot_runs": args.hot_runs,
            "settle_seconds": args.settle_seconds,
        }
    )
    runtime = LocalRuntime(args.state_dir) if args.state_dir else LocalRuntime()
    started = time.perf_counter()
    folder = run_comparison(specs, args.results_dir, args.run_id, args.cache_dir, runtime)
    from tsbench.results.files import read_json

    comparison = read_json(folder / "comparison.json")
    args.failed = comparison["failed_targets"]
    tables = [f"scale {scale}\n\n{all_tables(result)}" for scale, result in comparison["results"].items()]
    return "\n\n".join(tables) + f"\n\nrun finished in {time.perf_counter() - started:.1f} s → {folder}"


def cmd_lease(args: argparse.Namespace) -> str:
    from datetime import UTC, datetime

    from tsbench.lease import MachineLease

    lease = MachineLease()
    holder = lease.force_release() if args.release else lease.holder()
    if holder is None:
        return f"machine lease {lease.path}: free"
    since = datetime.fromtimestamp(holder["since"], UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    verb = "released (was held by" if args.release else "held by"
    return f"machine lease {lease.path}: {verb} {holder['owner']} since {since}" + (
        ")" if args.release else ""
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tsbench", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress lines too")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    generate = sub.add_parser("generate", help="generate a dataset (or reuse the cached one)")
    _add_dataset_flags(generate, allow_path=False)
    generate.set_defaults(run=cmd_generate)

    importer = sub.add_parser("import", help="import a file made by tsbs_generate_data")
    importer.add_argument(
        "file", type=Path, help="TSBS data file (influx or timescaledb format; .gz allowed)"
    )
    importer.add_argument("--format", choices=["influx", "timescaledb"], help="default: detected")
    importer.add_argument("--use-case", choices=["cpu-only", "devops", "iot"], help="default: inferred")
    importer.add_argument("--cache-dir", type=Path)
    importer.set_defaults(run=cmd_import)

    exporter = sub.add_parser("export", help="write a dataset in a TSBS format")
    _add_dataset_flags(exporter)
    exporter.add_argument("--format", choices=["influx", "timescaledb"], required=True)
    exporter.add_argument("--out", type=Path, required=True, help="output file (.gz compresses)")
    exporter.set_defaults(run=cmd_export)

    queries = sub.add_parser("queries", help="generate a logical query set (JSON lines)")
    _add_dataset_flags(queries)
    queries.add_argument("--types", help="comma-separated query types (default: all that fit the data)")
    queries.add_argument("--per-type", type=int, default=10, help="queries per type (default 10)")
    queries.add_argument("--query-seed", type=int, help="default: the data seed")
    queries.add_argument("--out", type=Path, required=True)
    queries.set_defaults(run=cmd_queries)

    answers = sub.add_parser("answers", help="compute reference answers for a query set")
    _add_dataset_flags(answers)
    answers.add_argument("--queries", type=Path, required=True, help="queries.jsonl from `queries`")
    answers.add_argument("--out", type=Path, required=True)
    answers.set_defaults(run=cmd_answers)

    run = sub.add_parser("run", help="run a comparison on local servers and print the study tables")
    _add_dataset_flags(run, allow_path=False)
    run.add_argument("--scales", help="comma-separated scales, one comparison each (default: --scale)")
    run.add_argument(
        "--targets", required=True, help="comma-separated, e.g. questdb,timescaledb,postgres,influxdb"
    )
    run.add_argument("--types", help="comma-separated query types (default: all that fit the data)")
    run.add_argument("--per-type", type=int, default=None, help="queries per type (default 10)")
    run.add_argument("--query-seed", type=int)
    run.add_argument("--workers", type=int, help="load and query workers (default 2)")
    run.add_argument("--batch-size", type=int, help="rows per write batch (default 10000)")
    run.add_argument("--hash-workers", action="store_true", help="a host always goes to the same worker")
    run.add_argument("--trials", type=int, help="loads per target; the median is reported (default 1)")
    run.add_argument("--hot-runs", type=int, help="hot passes after the cold one (default 3)")
    run.add_argument("--settle-seconds", type=float, help="wait before the second footprint (default 0)")
    run.add_argument("--results-dir", type=Path, default=Path("reports/out/runs"))
    run.add_argument("--run-id", help="default: UTC time + random suffix")
    run.add_argument(
        "--state-dir", type=Path, help="server state root (default $TSBENCH_STATE or /var/tmp/tsbench)"
    )
    run.set_defaults(run=cmd_run)

    lease = sub.add_parser("lease", help="show (or --release) the machine lease benchmark branches take")
    lease.add_argument("--release", action="store_true", help="remove it whoever holds it (after a crash)")
    lease.set_defaults(run=cmd_lease)
    return parser


def main(argv: Sequence[str] | None = None, out: Callable[[str], None] = print) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(message)s")
    if getattr(args, "cache_dir", None) is None and hasattr(args, "cache_dir"):
        args.cache_dir = cache_dir()
    try:
        out(args.run(args))
    except (SpecError, DatasetError, ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if getattr(args, "failed", None):
        print(
            f"error: target(s) failed: {', '.join(args.failed)} (details in the run folder)", file=sys.stderr
        )
        return EXIT_TARGET_FAILED
    return 0
