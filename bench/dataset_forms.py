"""The dataset stored or streamed (``dataset_rows``), at a study's own shape: generation, the oracle's
answers and the disk each form leaves, and the answers compared byte for byte.

    PYTHONPATH=plugins .venv/bin/python bench/dataset_forms.py [--scale 100] [--duration 120d]
        [--query-types high-cpu-all,high-cpu-1,lastpoint,single-groupby-1-1-1,double-groupby-1]
        [--queries-per-type 10]

The defaults are study A's smallest paper point (100 hosts × 4 months = 103.68 M rows) and its five
query types. Per form, in this process, one after the other (stored first): the dataset made (stored:
every row written to Parquet; streamed: every row generated, the rows the queries read kept), then
the oracle's answers to the same query set. Prints each stage's wall, CPU-seconds (the process and
its children), peak RSS and the disk it leaves, the ratios streamed ÷ stored, the rows kept, and
whether both answers files are the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import tempfile
import time
from pathlib import Path

from process_sampler import ProcessSampler, Window

from tsbench.spec import RunSpec
from tsbench.timeutil import parse_duration, parse_instant
from tsbench.workload.answer_file import write_answers
from tsbench.workload.dataset import Dataset, ensure_dataset
from tsbench.workload.extract import planned_extract
from tsbench.workload.oracle import Oracle
from tsbench.workload.queries import DataRange, generate_queries
from tsbench.workload.streamed_dataset import ensure_streamed_dataset

FORMS = ("stored", "streamed")


def folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def timed(sampler: ProcessSampler, work) -> tuple[object, Window]:
    started = time.time()
    done = work()
    time.sleep(0.3)  # a last sample inside the window
    return done, sampler.window(started, time.time())


def measure_form(form: str, spec: RunSpec, root: Path, sampler: ProcessSampler) -> dict[str, object]:
    """Make the dataset in ``form``, then answer the query set; their windows and what they leave."""
    cache = root / form
    if form == "stored":
        made, generation = timed(sampler, lambda: ensure_dataset(spec.dataset, cache)[0])
    else:
        windows = planned_extract(spec)[0]
        made, generation = timed(sampler, lambda: ensure_streamed_dataset(spec.dataset, windows, cache)[0])
    assert isinstance(made, Dataset)
    types, seed = spec.resolved_query_types, spec.effective_query_seed
    queries = generate_queries(DataRange.of(made), types, spec.queries_per_type, seed)
    answers = root / f"answers-{form}.jsonl"
    oracle = Oracle(made)
    try:
        _, answering = timed(sampler, lambda: write_answers(answers, oracle.streamed_answers(queries)))
    finally:
        oracle.close()
    kept = sum(made.extract.rows.values()) if made.extract else sum(made.rows.values())
    return {
        "generation": generation,
        "oracle": answering,
        "dataset_bytes": folder_bytes(made.path),
        "answers_bytes": answers.stat().st_size,
        "answers_sha256": hashlib.sha256(answers.read_bytes()).hexdigest(),
        "rows": sum(made.rows.values()),
        "kept": kept,
    }


def show(figures: dict[str, dict[str, object]]) -> None:
    stored, streamed = figures["stored"], figures["streamed"]
    print(f"\n{'stage':<12} {'figure':<14} {'stored':>12} {'streamed':>12} {'streamed ÷ stored':>18}")
    for stage in ("generation", "oracle"):
        a, b = stored[stage], streamed[stage]
        assert isinstance(a, Window) and isinstance(b, Window)
        for name, x, y, unit in (
            ("wall", a.wall_s, b.wall_s, "s"),
            ("CPU", a.cpu_s, b.cpu_s, "s"),
            ("peak RSS", a.peak_rss_bytes / 2**20, b.peak_rss_bytes / 2**20, "MiB"),
        ):
            print(f"{stage:<12} {name + ' ' + unit:<14} {x:>12,.1f} {y:>12,.1f} {y / x if x else 0:>18.3f}")
    for name in ("dataset_bytes", "answers_bytes"):
        x, y = float(stored[name]), float(streamed[name])  # type: ignore[arg-type]
        print(f"{'disk':<12} {name[:-6] + ' MB':<14} {x / 1e6:>12,.1f} {y / 1e6:>12,.1f} {y / x:>18.3f}")
    print(f"rows {stored['rows']:,}; the streamed dataset kept {streamed['kept']:,}")
    same = stored["answers_sha256"] == streamed["answers_sha256"]
    digest = str(stored["answers_sha256"])[:16]
    print(f"answers files: {'the same bytes' if same else 'DIFFERENT'} (sha256 {digest}…)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=100)
    parser.add_argument("--duration", default="120d")
    parser.add_argument(
        "--query-types", default="high-cpu-all,high-cpu-1,lastpoint,single-groupby-1-1-1,double-groupby-1"
    )
    parser.add_argument("--queries-per-type", type=int, default=10)
    args = parser.parse_args()
    start = parse_instant("2016-01-01T00:00:00Z")
    spec = RunSpec.parse(
        targets=["questdb"],
        scale=args.scale,
        start=start,
        end=start + parse_duration(args.duration),
        query_types=args.query_types.split(","),
        queries_per_type=args.queries_per_type,
    )
    root = Path(tempfile.mkdtemp(prefix="tsbench-dataset-forms-", dir="/var/tmp"))
    sampler = ProcessSampler(root).start()
    try:
        figures = {form: measure_form(form, spec, root, sampler) for form in FORMS}
    finally:
        sampler.stop()
        shutil.rmtree(root, ignore_errors=True)
    types = len(spec.resolved_query_types)
    print(f"{args.scale:,} hosts × {args.duration}, {types} query types × {args.queries_per_type}")
    show(figures)


if __name__ == "__main__":
    main()
