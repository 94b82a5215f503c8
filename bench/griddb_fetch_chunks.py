"""GridDB's all-host queries, fetched a chunk of containers at a time against all at once.

One local GridDB server, one cpu-only dataset (default 1,157 hosts × 1 day = 9,996,480 rows, the
10 M point of ``bench/stage_costs.py``) loaded once with every row counted; then rounds over the
query types that read every host, each plan answered with ``combine.answer(plan, fetch, chunk)`` for
each chunk size (``all`` = every container in one ``fetchAll``, the client before 2026-12-03), every
answer checked against the oracle's. Prints each chunk size's median seconds per query type, the
ratio to one ``fetchAll``, and this process's peak RSS after each size (sizes run from the smallest,
so a size's growth over the one before is its own). Alone on the machine: it loads the server.

    PYTHONPATH=plugins .venv/bin/python bench/griddb_fetch_chunks.py [--hosts 1157] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time

from alternating_loads import checked_load, local_server

from tsbench.spec import DatasetSpec
from tsbench.targets.griddb import combine
from tsbench.workload.answers import Answer, compare
from tsbench.workload.dataset import ensure_dataset
from tsbench.workload.oracle import Oracle
from tsbench.workload.queries import DataRange, generate_queries

ALL_HOST_TYPES = ["double-groupby-1", "double-groupby-5", "double-groupby-all", "high-cpu-all", "lastpoint"]


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=1157)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--chunks", default="16,64,256,all")
    args = parser.parse_args()
    dataset, _ = ensure_dataset(DatasetSpec.parse(scale=args.hosts, seed=123))
    queries = generate_queries(DataRange.of(dataset), ALL_HOST_TYPES, 1, 7)
    oracle = Oracle(dataset)
    expected = {q.id: oracle.answer(q) for q in queries}
    oracle.close()
    chunks = [args.hosts if c == "all" else int(c) for c in args.chunks.split(",")]
    seconds: dict[int, dict[str, list[float]]] = {c: {q.type: [] for q in queries} for c in chunks}
    rss: dict[int, float] = {}
    with local_server("griddb", "fetch-chunks") as client:
        target = client(dataset)
        result = checked_load(target, dataset, workers=2, batch_size=10_000)
        print(f"{sum(dataset.rows.values()):,} rows loaded at {result.rows_per_s:,.0f} rows/s", flush=True)
        session = target.session()
        for round_ in range(args.rounds + 1):  # round 0 warms the server's and the JVM's caches
            for chunk in chunks:
                for query in queries:
                    plan = json.loads(target.render(query))
                    started = time.perf_counter()
                    rows = combine.answer(plan, session.fetch_steps, chunk)
                    took = time.perf_counter() - started
                    check = compare(expected[query.id], Answer.build(query.query_type, rows))
                    assert check.ok, f"{query.id} at chunk {chunk}: {check.reason}"
                    if round_:
                        seconds[chunk][query.type].append(took)
                rss.setdefault(chunk, _peak_rss_mb())
        session.close()
    _print(chunks, seconds, rss, args.hosts)


def _print(
    chunks: list[int], seconds: dict[int, dict[str, list[float]]], rss: dict[int, float], hosts: int
) -> None:
    whole = hosts
    print(f"\nmedian s per query (every answer equal to the oracle's); chunk {whole} = one fetchAll")
    print(
        f"{'type':<20}" + "".join(f"{c:>12}" for c in chunks) + "".join(f"{f'{c}÷all':>12}" for c in chunks)
    )
    for name in ALL_HOST_TYPES:
        medians = {c: statistics.median(seconds[c][name]) for c in chunks}
        line = f"{name:<20}" + "".join(f"{medians[c]:>12.2f}" for c in chunks)
        print(line + "".join(f"{medians[c] / medians[whole]:>12.2f}" for c in chunks))
    totals = {c: sum(statistics.median(v) for v in seconds[c].values()) for c in chunks}
    print(f"{'all five':<20}" + "".join(f"{totals[c]:>12.2f}" for c in chunks), end="")
    print("".join(f"{totals[c] / totals[whole]:>12.2f}" for c in chunks))
    print("peak RSS after its first round (MB): " + ", ".join(f"{c}: {rss[c]:,.0f}" for c in chunks))


if __name__ == "__main__":
    main()
