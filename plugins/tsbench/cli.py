"""tsbench command line: generate, import, export, queries, answers, run.

Every subcommand validates its parameters first (a clear message and exit code 2 on bad input),
shows a progress bar on long work, and ends with a one-line summary. The flags of the specs'
parameters are generated from their schemas (``tsbench.cli_flags``); ``run`` walks the pipeline's
steps (``tsbench.run.local``) and exits 3 when the verdict fails.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tsbench.cli_flags import add_flags, values
from tsbench.interrupt import Interrupted
from tsbench.parameters import parameters
from tsbench.progress import Progress
from tsbench.spec import DatasetSpec, QuerySetSpec, SpecError
from tsbench.workload.dataset import Dataset, DatasetError, cache_dir, ensure_dataset

if TYPE_CHECKING:  # imported where a study runs (the CLI starts without the studies' models)
    from tsbench.studies import Study

EXIT_BAD_INPUT = 2
EXIT_TARGET_FAILED = 3


def _summary(verb: str, count: int, unit: str, seconds: float, path: Path | str) -> str:
    rate = count / seconds if seconds > 0 else 0.0
    return f"{verb} {count:,} {unit} in {seconds:.2f} s ({rate:,.0f} {unit}/s) → {path}"


DATASET_PARAMETERS = parameters(DatasetSpec)
QUERY_PARAMETERS = tuple(p for p in parameters(QuerySetSpec) if p.name not in DatasetSpec.model_fields)
RUN_PARAMETERS = parameters(comparison=True)


def _add_dataset_flags(parser: argparse.ArgumentParser, allow_path: bool = True) -> None:
    group = parser.add_argument_group("dataset (generated on first use, then reused from the cache)")
    if allow_path:
        group.add_argument(
            "--dataset", type=Path, help="an existing dataset folder (overrides the flags below)"
        )
    add_flags(group, DATASET_PARAMETERS)
    _add_cache_flag(group)


def _add_cache_flag(group: Any) -> None:
    group.add_argument(
        "--cache-dir", type=Path, help="dataset cache (default $TSBENCH_DATASETS or datasets/cache)"
    )


def _dataset_spec(args: argparse.Namespace) -> DatasetSpec:
    return DatasetSpec.parse(**values(args, DATASET_PARAMETERS))


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
    rows = dataset.manifest.rows_total
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
    rows = dataset.manifest.rows_total
    if reused:
        return f"reused {rows:,} rows (this file was imported before) → {dataset.path}"
    return _summary("imported", rows, "rows", time.perf_counter() - started, dataset.path)


def cmd_export(args: argparse.Namespace) -> str:
    from tsbench.workload.tsbs import export_dataset

    dataset, _, _ = _obtain_dataset(args)
    started = time.perf_counter()
    with Progress("export", total=dataset.manifest.rows_total) as progress:
        rows = export_dataset(dataset, args.format, args.out, progress=progress)
    return _summary("exported", rows, "rows", time.perf_counter() - started, args.out)


def _query_set_spec(args: argparse.Namespace, dataset: Dataset) -> QuerySetSpec:
    """Validate the query options against the dataset (through the one set of checks in spec.py)."""
    return QuerySetSpec.parse(**dataset.spec_fields(), **values(args, QUERY_PARAMETERS))


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
    from tsbench.workload.answer_file import write_answers
    from tsbench.workload.oracle import Oracle
    from tsbench.workload.queries import read_query_set

    dataset, _, _ = _obtain_dataset(args)
    queries = read_query_set(args.queries)
    started = time.perf_counter()
    oracle = Oracle(dataset)
    try:
        with Progress("answers", total=len(queries), unit="queries") as progress:
            out = write_answers(args.out, oracle.streamed_answers(queries, progress))
    finally:
        oracle.close()
    return _summary("answered", len(queries), "queries", time.perf_counter() - started, out)


def cmd_run(args: argparse.Namespace) -> str:
    """The whole pipeline in this process (``tsbench.run.local``): the steps the DAG runs, in its
    order, ending in the report (HTML + PDF), its publication and the verdict."""
    return _run_pipeline(args, values(args, RUN_PARAMETERS))


def cmd_study(args: argparse.Namespace) -> str:
    """A study file's size (``tsbench.studies``), the run flags given overriding its values, run
    like ``run`` with the size's sweep limits."""
    from tsbench.studies import load_study

    study = load_study(args.file)
    overrides = values(args, RUN_PARAMETERS)
    if args.plan_only:
        from tsbench.sweep.plan_text import fit_lines, stage_lines
        from tsbench.verdicts.coverage import coverage_line

        plan = study.plan(args.size, overrides, fit=False)
        judged = f"; {coverage_line(study.claims_coverage(args.size, overrides))}" if study.published else ""
        table = "\n".join(["", *stage_lines(plan.estimate), "", *fit_lines(plan.estimate)])
        print(f"study {study.name} ({args.size or study.default_size}): {plan.summary()}{judged}\n{table}")
        if problems := plan.estimate.problems():
            raise SpecError([("plan", problem) for problem in problems])
        return "the plan fits its machines"
    args.latest_folder = args.latest_folder or study.latest_folder
    return _run_pipeline(args, study.params_for(args.size, overrides), study.limits(args.size), study=study)


def _run_pipeline(
    args: argparse.Namespace, params: dict[str, Any], limits: Any = None, study: Study | None = None
) -> str:
    import os

    from tsbench.interrupt import signals_unwind
    from tsbench.results.publish import check_latest_folder
    from tsbench.run.local import LocalRun
    from tsbench.run.pipeline import Publication, results_root
    from tsbench.run.point_setup import new_run_id

    check_latest_folder(args.latest_folder)  # ValueError before any work
    for variable, value in (("TSBENCH_RESULTS", args.results_dir), ("TSBENCH_STATE", args.state_dir)):
        if value:  # the pipeline's steps and the runtimes read them from the environment
            os.environ[variable] = str(value)
    started = time.perf_counter()
    folder = results_root() / (args.run_id or new_run_id())
    run = LocalRun(
        folder,
        args.cache_dir,
        publication=Publication(args.latest_folder),
        limits=limits,
        study=study,
        on_step=lambda step, label: print(f"· {step} {label}".rstrip(), file=sys.stderr, flush=True),
    )
    with signals_unwind():
        args.failed = run.run(params)
    return _run_summary(folder, run.outcomes, args.failed, time.perf_counter() - started, study)


def _run_summary(
    folder: Path, outcomes: dict[str, Any], problems: list[str], seconds: float, study: Study | None = None
) -> str:
    """The study tables of every point (a scale, or a sweep's point), the study's claims with their
    verdicts, then where the report went and the verdict."""
    from tsbench.results.documents import read_comparison
    from tsbench.results.tables import all_tables

    comparison = read_comparison(folder)
    swept = {key: r.point.label for key, r in comparison.results.items() if r.point and r.point.axes}
    tables = [
        f"{swept.get(key, f'scale {key}')}\n\n{all_tables(result)}"
        for key, result in comparison.results.items()
    ]
    if study is not None and study.published is not None:
        from tsbench.verdicts.table import claims_table

        tables.append(
            f"claims of {study.name}\n\n{claims_table(study.published, list(comparison.results.values()))}"
        )
    validation = outcomes.get("validate", {})
    published = outcomes.get("publish", {})
    lines = [
        f"validation: {'passed' if validation.get('success') else 'failed'}",
        f"report: {outcomes.get('report')} (and report.pdf)",
        f"published: {published.get('local', {}).get('index')}; S3 {published.get('s3')}",
        f"verdict: {'failed: ' + '; '.join(problems) if problems else 'passed'}",
        f"run finished in {seconds:.1f} s → {folder}",
    ]
    return "\n\n".join(tables) + "\n\n" + "\n".join(lines)


def cmd_lease(args: argparse.Namespace) -> str:
    from datetime import UTC, datetime

    from tsbench.run.lease import MachineLease

    lease = MachineLease()
    holder = lease.force_release() if args.release else lease.holder()
    if holder is None:
        return f"machine lease {lease.where}: free"
    since = datetime.fromtimestamp(holder.since, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    verb = "released (was held by" if args.release else "held by"
    return f"machine lease {lease.where}: {verb} {holder.owner} since {since}" + (")" if args.release else "")


def _data_commands(sub: Any) -> None:
    generate = sub.add_parser("generate", help="generate a dataset (or reuse the cached one)")
    _add_dataset_flags(generate, allow_path=False)
    generate.set_defaults(run=cmd_generate)

    importer = sub.add_parser("import", help="import a file made by tsbs_generate_data")
    importer.add_argument(
        "file", type=Path, help="TSBS data file (influx or timescaledb format; .gz allowed)"
    )
    importer.add_argument("--format", choices=["influx", "timescaledb"], help="default: detected")
    (use_case,) = (p for p in DATASET_PARAMETERS if p.name == "use_case")
    importer.add_argument("--use-case", choices=use_case.choices, help="default: inferred")
    _add_cache_flag(importer)
    importer.set_defaults(run=cmd_import)

    exporter = sub.add_parser("export", help="write a dataset in a TSBS format")
    _add_dataset_flags(exporter)
    exporter.add_argument("--format", choices=["influx", "timescaledb"], required=True)
    exporter.add_argument("--out", type=Path, required=True, help="output file (.gz compresses)")
    exporter.set_defaults(run=cmd_export)


def _query_commands(sub: Any) -> None:
    queries = sub.add_parser("queries", help="generate a logical query set (JSON lines)")
    _add_dataset_flags(queries)
    add_flags(queries.add_argument_group("queries"), QUERY_PARAMETERS)
    queries.add_argument("--out", type=Path, required=True)
    queries.set_defaults(run=cmd_queries)

    answers = sub.add_parser("answers", help="compute reference answers for a query set")
    _add_dataset_flags(answers)
    answers.add_argument("--queries", type=Path, required=True, help="queries.jsonl from `queries`")
    answers.add_argument("--out", type=Path, required=True)
    answers.set_defaults(run=cmd_answers)


def _where_flags(parser: Any, latest_default: str | None) -> None:
    where = parser.add_argument_group("where things go")
    _add_cache_flag(where)
    where.add_argument(
        "--results-dir", type=Path, help="run folders (default $TSBENCH_RESULTS or reports/out/runs)"
    )
    where.add_argument("--run-id", help="default: UTC time + random suffix")
    where.add_argument(
        "--latest-folder",
        default=latest_default,
        help=f"the published latest folder (default {latest_default or 'latest-study-<name>'})",
    )
    where.add_argument(
        "--state-dir", type=Path, help="server state root (default $TSBENCH_STATE or /var/tmp/tsbench)"
    )


def _run_command(sub: Any) -> None:
    run = sub.add_parser(
        "run",
        help="run a comparison: the DAG's steps in this process, ending in the validated, published report",
    )
    add_flags(run.add_argument_group("comparison (the Params form's fields)"), RUN_PARAMETERS)
    _where_flags(run, "latest-cli")
    run.set_defaults(run=cmd_run)
    study = sub.add_parser("study", help="run a study file (studies/*.yaml) at one of its sizes")
    study.add_argument("file", type=Path, help="the study's YAML file, e.g. studies/b_questdb_tsbs.yaml")
    study.add_argument("--size", help="one of the file's sizes (default: its default_size, e.g. small)")
    study.add_argument("--plan-only", action="store_true", help="validate and show the plan, run nothing")
    optional = [replace(p, default=None) if p.required else p for p in RUN_PARAMETERS]
    add_flags(study.add_argument_group("overrides of the size's parameters"), optional)
    _where_flags(study, None)
    study.set_defaults(run=cmd_study)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tsbench", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress lines too")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _data_commands(sub)
    _query_commands(sub)
    _run_command(sub)
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
    except Interrupted as stopped:
        print(
            f"error: {stopped}: the servers it started were torn down; the run is incomplete", file=sys.stderr
        )
        return stopped.code
    if getattr(args, "failed", None):
        print(f"error: comparison failed: {'; '.join(args.failed)} (see the report)", file=sys.stderr)
        return EXIT_TARGET_FAILED
    return 0
