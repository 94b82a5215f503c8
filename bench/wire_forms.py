"""Load bodies cached or streamed, and the dataset stored or streamed: the same rows loaded into one
local server from the wire cache (encoded before the timed window), streamed (encoded during it by
worker processes from the stored dataset) and streamed from a streamed dataset (each encoder
generates the rows again: ``dataset_rows: streamed``), alternating trials on one warm server.

    PYTHONPATH=plugins .venv/bin/python bench/wire_forms.py [--targets questdb,postgres,timescaledb,influxdb]
        [--scale 1157] [--end 2016-01-02T00:00:00Z] [--trials 3] [--workers 2] [--batch-size 10000]

Per target: the cache is built first (its encode wall, CPU and stored bytes printed), a warm-up load
of each form, then ``--trials`` rounds of (cached, streamed, dataset streamed), each into a fresh
schema with its row count checked. Prints per trial rows/s and client CPU-s (a stream's encoders
included), then the medians, each form ÷ cached, and the time from nothing to loaded: the cache's
build plus a cached load against one streamed load. On this 2-core machine the encoders share the
server's cores.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from functools import partial
from pathlib import Path

from alternating_loads import alternating, checked_load, local_server

from tsbench.measure.wire_cache import WireCache, ensure_wire_cache
from tsbench.measure.wire_stream import WireStream, wire_bodies
from tsbench.spec import DatasetSpec
from tsbench.targets.registry import load_target
from tsbench.workload.dataset import Dataset, ensure_dataset
from tsbench.workload.streamed_dataset import ensure_streamed_dataset

FORMS = ("cached", "streamed", "dataset streamed")


def measure_target(
    name: str, stored: Dataset, streamed: Dataset, args: argparse.Namespace
) -> dict[str, float]:
    """One target's three forms; returns the medians and the cache's build figures."""
    target_type = load_target(name)
    cache = ensure_wire_cache(stored, target_type, args.batch_size)
    streams = [wire_bodies(d, target_type, args.batch_size, 1, streamed=True) for d in (stored, streamed)]
    assert isinstance(cache, WireCache), f"{name} has no wire format"
    assert all(isinstance(s, WireStream) for s in streams)
    built = cache.manifest
    print(
        f"{name}: cache {'found' if cache.reused else 'built'}: {built['bytes_stored'] / 1e6:,.0f} MB stored "
        f"({built['bytes_sent'] / 1e6:,.0f} MB sent, {built['codec']}), encode {built['encode_s']:.1f} s, "
        f"{built['encode_cpu_s']:.1f} CPU-s in {built['processes']} processes",
        flush=True,
    )
    options = {"workers": args.workers, "batch_size": args.batch_size}
    sources = dict(zip(FORMS, [(stored, cache), (stored, streams[0]), (streamed, streams[1])], strict=True))
    with local_server(name, "wire-forms") as client:
        target = client(stored)
        forms = {f: partial(checked_load, target, d, wire=w, **options) for f, (d, w) in sources.items()}
        results = alternating(forms, args.trials, f"{name} ")
    figures = {f"{form} rate": statistics.median(r.rows_per_s for r in results[form]) for form in FORMS}
    figures |= {f"{form} cpu": statistics.median(r.client_cpu_s for r in results[form]) for form in FORMS}
    seconds = {form: statistics.median(r.seconds for r in results[form]) for form in FORMS}
    figures["cached total s"] = built["encode_s"] + seconds["cached"]
    figures["streamed total s"] = seconds["streamed"]
    return figures | {"stored mb": built["bytes_stored"] / 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="questdb,postgres,timescaledb,influxdb")
    parser.add_argument("--scale", type=int, default=1157)
    parser.add_argument("--end", default="2016-01-02T00:00:00Z", help="data from 2016-01-01 to this")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=10_000)
    args = parser.parse_args()
    spec = DatasetSpec.parse(scale=args.scale, end=args.end)
    cache = Path(tempfile.gettempdir()) / "tsbench-bench-datasets"
    stored, _ = ensure_dataset(spec, cache)
    streamed, _ = ensure_streamed_dataset(spec, [], cache)  # no queries: nothing kept
    rows = sum(stored.rows.values())
    figures = {name: measure_target(name, stored, streamed, args) for name in args.targets.split(",")}
    print(
        f"\n{rows:,} rows ({args.scale} hosts until {args.end}), {args.workers} workers, batches of "
        f"{args.batch_size:,}; medians of {args.trials} trials; rows/s, and ÷ cached"
    )
    print(
        f"{'target':<12} {'cached':>9} {'streamed':>16} {'dataset streamed':>18} "
        f"{'client CPU-s c/s/d':>20} {'build+load s':>13} {'streamed s':>11} {'stored MB':>10}"
    )
    for name, f in figures.items():
        cached = f["cached rate"]
        cpu = "/".join(f"{f[form + ' cpu']:.1f}" for form in FORMS)
        print(
            f"{name:<12} {cached:>9,.0f} {f['streamed rate']:>9,.0f} {f['streamed rate'] / cached:>6.3f} "
            f"{f['dataset streamed rate']:>11,.0f} {f['dataset streamed rate'] / cached:>6.3f} {cpu:>20} "
            f"{f['cached total s']:>13.1f} {f['streamed total s']:>11.1f} {f['stored mb']:>10,.0f}"
        )


if __name__ == "__main__":
    main()
