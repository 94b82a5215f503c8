"""QuestDB's load at one worker over its two line-protocol transports, the same wire bodies:
ILP over HTTP ``/write`` (tsbench's loader: each body answered after its commit) and ILP over TCP
(TSBS's loader: bodies streamed unanswered, the connection closed at the end). Each trial loads
into a fresh schema and ends when every row is visible (row count, WAL applied); alternating
trials after a warm-up of each, medians printed.

    .venv/bin/python bench/questdb_ilp_protocols.py [--scale 100] [--trials 5]

Tells whether the transport is what separates tsbench's 1-worker QuestDB load from TSBS's.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from tsbench.runtimes.local import LocalRuntime
from tsbench.spec import DatasetSpec
from tsbench.targets.registry import load_target
from tsbench.workload.dataset import ensure_dataset

DATASETS = Path("/var/tmp/tsbench-bench-datasets")
VISIBLE_WAIT_S = 120.0


def loaders(target, bodies: list, total: int) -> dict[str, Callable[[], None]]:
    """The two ways to load ``bodies`` (``total`` rows) into ``target``, each until visible."""
    endpoint = target.endpoint

    def over_http() -> None:
        writer = target.writer()
        for payload in bodies:
            writer.send("cpu", payload.data)
        writer.close()
        target.flush()

    def over_tcp() -> None:
        with socket.create_connection((endpoint.host, endpoint.port("ilp"))) as connection:
            for payload in bodies:
                connection.sendall(payload.data)
        deadline = time.monotonic() + VISIBLE_WAIT_S
        while target.row_count("cpu") < total:  # TCP has no answer: visible is the only end
            if time.monotonic() > deadline:
                raise RuntimeError(f"ILP/TCP: {target.row_count('cpu')} of {total} rows visible")
            time.sleep(0.002)
        target.flush()

    return {"http": over_http, "tcp": over_tcp}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=100)
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args()
    spec = DatasetSpec.parse(use_case="cpu-only", scale=args.scale, seed=123, end="2016-01-02T00:00:00Z")
    dataset, _ = ensure_dataset(spec, DATASETS)
    runtime, target_type = LocalRuntime(), load_target("questdb")
    instance = f"ilp-bench-{uuid.uuid4().hex[:6]}"
    server = runtime.provision(target_type, instance)
    try:
        target = target_type(server.endpoint(), dataset.use_case, dataset.tags())
        wire = target.line_format()
        bodies = [p for batch in dataset.iter_batches("cpu", 10_000) for p in wire.encode("cpu", batch)]
        total = sum(payload.rows for payload in bodies)
        rates: dict[str, list[float]] = {"http": [], "tcp": []}
        for trial in range(args.trials + 1):  # trial 0 warms both up
            for name, load in loaders(target, bodies, total).items():
                target.create_schema()
                started = time.perf_counter()
                load()
                wall = time.perf_counter() - started
                assert target.row_count("cpu") == total, (name, target.row_count("cpu"), total)
                if trial:
                    rates[name].append(total / wall)
    finally:
        runtime.teardown(instance)
    print(f"QuestDB, 1 worker, {total:,} rows in {len(bodies)} bodies, {args.trials} alternating trials:")
    for name, values in rates.items():
        spread = f"{min(values):,.0f}–{max(values):,.0f}"
        print(f"  ILP/{name.upper():4} median {statistics.median(values):,.0f} rows/s ({spread})")
    print(f"  TCP ÷ HTTP ×{statistics.median(rates['tcp']) / statistics.median(rates['http']):.2f}")


if __name__ == "__main__":
    main()
