"""Load bodies cached or streamed: the same rows loaded into one local server from the wire cache
(encoded before the timed window) and streamed (encoded during it by worker processes), alternating
trials on one warm server.

    PYTHONPATH=plugins .venv/bin/python bench/wire_forms.py [--targets questdb,postgres,timescaledb,influxdb]
        [--scale 1157] [--end 2016-01-02T00:00:00Z] [--trials 3] [--workers 2] [--batch-size 10000]

Per target: the cache is built first (its encode wall, CPU and stored bytes printed), a warm-up load
of each form, then ``--trials`` rounds of (cached, streamed), each into a fresh schema with its row
count checked. Prints per trial rows/s and client CPU-s (a stream's encoders included), then the
medians, streamed ÷ cached, and the time from nothing to loaded: the cache's build plus a cached
load against one streamed load. On this 2-core machine the encoders share the server's cores.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import uuid
from pathlib import Path

from tsbench.measure.load import LoadResult, load
from tsbench.measure.wire_cache import WireCache, ensure_wire_cache
from tsbench.measure.wire_stream import WireStream, wire_bodies
from tsbench.runtimes.local import LocalRuntime
from tsbench.spec import DatasetSpec
from tsbench.targets.registry import load_target
from tsbench.workload.dataset import Dataset, ensure_dataset

FORMS = ("cached", "streamed")


def timed_load(
    target, dataset: Dataset, wire: WireCache | WireStream, args: argparse.Namespace
) -> LoadResult:
    """Fresh schema, the whole dataset from ``wire``, row counts checked."""
    target.create_schema()
    result = load(target, dataset, workers=args.workers, batch_size=args.batch_size, wire=wire)
    for measurement, expected in dataset.rows.items():
        assert target.row_count(measurement) == expected, measurement
    return result


def measure_target(name: str, dataset: Dataset, args: argparse.Namespace, root: Path) -> dict[str, float]:
    """One target's two forms; returns the medians and the cache's build figures."""
    target_type = load_target(name)
    cache = ensure_wire_cache(dataset, target_type, args.batch_size)
    stream = wire_bodies(dataset, target_type, args.batch_size, 1, streamed=True)
    assert isinstance(cache, WireCache) and isinstance(stream, WireStream), f"{name} has no wire format"
    built = cache.manifest
    print(
        f"{name}: cache {'found' if cache.reused else 'built'}: {built['bytes_stored'] / 1e6:,.0f} MB stored "
        f"({built['bytes_sent'] / 1e6:,.0f} MB sent, {built['codec']}), encode {built['encode_s']:.1f} s, "
        f"{built['encode_cpu_s']:.1f} CPU-s in {built['processes']} processes",
        flush=True,
    )
    runtime, instance = LocalRuntime(root), f"{name}-wire-forms"
    server = runtime.provision(target_type, instance)
    wires = {"cached": cache, "streamed": stream}
    results: dict[str, list[LoadResult]] = {form: [] for form in FORMS}
    try:
        target = target_type(server.endpoint(), dataset.use_case, dataset.tags())
        for form in FORMS:  # warm-up, not counted
            timed_load(target, dataset, wires[form], args)
        for trial in range(args.trials):
            for form in FORMS:
                result = timed_load(target, dataset, wires[form], args)
                results[form].append(result)
                print(
                    f"  trial {trial + 1} {form:<9} {result.rows_per_s:>10,.0f} rows/s in "
                    f"{result.seconds:6.1f} s, client {result.client_cpu_s:6.1f} CPU-s",
                    flush=True,
                )
        target.close()
    finally:
        runtime.teardown(instance)
    rate = {form: statistics.median(r.rows_per_s for r in results[form]) for form in FORMS}
    seconds = {form: statistics.median(r.seconds for r in results[form]) for form in FORMS}
    cpu = {form: statistics.median(r.client_cpu_s for r in results[form]) for form in FORMS}
    return {
        "cached_rate": rate["cached"],
        "streamed_rate": rate["streamed"],
        "cached_cpu": cpu["cached"],
        "streamed_cpu": cpu["streamed"],
        "cached_total_s": built["encode_s"] + seconds["cached"],
        "streamed_total_s": seconds["streamed"],
        "stored_mb": built["bytes_stored"] / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="questdb,postgres,timescaledb,influxdb")
    parser.add_argument("--scale", type=int, default=1157)
    parser.add_argument("--end", default="2016-01-02T00:00:00Z", help="data from 2016-01-01 to this")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=10_000)
    args = parser.parse_args()
    dataset, _ = ensure_dataset(
        DatasetSpec.parse(scale=args.scale, end=args.end),
        Path(tempfile.gettempdir()) / "tsbench-bench-datasets",
    )
    rows = sum(dataset.rows.values())
    root = Path("/var/tmp/tsbench-bench") / f"wire-forms-{uuid.uuid4().hex[:6]}"
    root.mkdir(parents=True)
    root.parent.chmod(0o755)
    figures = {name: measure_target(name, dataset, args, root) for name in args.targets.split(",")}
    print(
        f"\n{rows:,} rows ({args.scale} hosts until {args.end}), {args.workers} workers, batches of "
        f"{args.batch_size:,}; medians of {args.trials} trials"
    )
    print(
        f"{'target':<12} {'cached rows/s':>14} {'streamed rows/s':>16} {'streamed ÷ cached':>18} "
        f"{'client CPU-s c/s':>17} {'build+load s':>13} {'streamed s':>11} {'stored MB':>10}"
    )
    for name, f in figures.items():
        print(
            f"{name:<12} {f['cached_rate']:>14,.0f} {f['streamed_rate']:>16,.0f} "
            f"{f['streamed_rate'] / f['cached_rate']:>18.3f} "
            f"{f['cached_cpu']:>8.1f}/{f['streamed_cpu']:<8.1f} "
            f"{f['cached_total_s']:>13.1f} {f['streamed_total_s']:>11.1f} {f['stored_mb']:>10,.0f}"
        )


if __name__ == "__main__":
    main()
