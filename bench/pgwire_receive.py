"""A large answer received two ways on one PostgreSQL connection: as the server's bytes
(``PgWireSession.fetch``, what the query runner times) and as a libpq result (``PQexecParams``,
the way before): wall and client CPU of the receive, memory the held answer takes, and the
untimed decode into answer rows. Alternating trials on one local server, medians printed.

    .venv/bin/python bench/pgwire_receive.py [--rows 1630000] [--trials 3]

The default answer has the shape of a high-cpu-all answer at 4,000 hosts (an instant, a tag, ten
float8; 1.63 M rows). Memory held = the resident-set growth while the answer is held (glibc
trimmed before each receive), beside the session's own ``raw_size``.
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid

from answer_memory import rss_bytes  # a sibling bench: this process's resident set

from tsbench.memory import release_freed_memory
from tsbench.runtimes.local import LocalRuntime
from tsbench.targets.registry import load_target
from tsbench.workload.usecases import get_use_case


def wide_query(rows: int) -> str:
    fields = ", ".join(f"(g * 1.25 + {i})::float8 AS f{i}" for i in range(10))
    return (
        "SELECT timestamptz '2016-01-01' + g * interval '10 s' AS time, 'host_' || (g % 4000) AS hostname, "
        f"{fields} FROM generate_series(1, {rows}) AS g"
    )


def trial(session, text: str, wire: bool) -> dict[str, float]:
    release_freed_memory()
    before = rss_bytes()
    started, cpu = time.perf_counter(), time.process_time()
    raw = session.fetch(text) if wire else session._fetch_result(text)
    receive_s, receive_cpu = time.perf_counter() - started, time.process_time() - cpu
    held = (rss_bytes() - before) / 2**20
    size = session.raw_size(raw) / 2**20
    started = time.perf_counter()
    rows = sum(len(part) for part in session.decode_parts(raw))
    return {
        "receive_s": receive_s,
        "receive_cpu_s": receive_cpu,
        "held_mb": held,
        "raw_size_mb": size,
        "decode_s": time.perf_counter() - started,
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_630_000)
    parser.add_argument("--trials", type=int, default=3)
    args = parser.parse_args()
    runtime, target_type = LocalRuntime(), load_target("postgres")
    instance = f"pgwire-bench-{uuid.uuid4().hex[:6]}"
    server = runtime.provision(target_type, instance)
    try:
        target = target_type(server.endpoint(), get_use_case("cpu-only"), None)
        session, text = target.session(), wide_query(args.rows)
        trial(session, text, True), trial(session, text, False)  # warm-up, not counted
        figures: dict[str, list[dict[str, float]]] = {"bytes": [], "libpq": []}
        for _ in range(args.trials):
            figures["bytes"].append(trial(session, text, True))
            figures["libpq"].append(trial(session, text, False))
        session.close()
    finally:
        runtime.teardown(instance)
    print(f"{args.rows:,} rows × 12 columns, {args.trials} alternating trials, medians:")
    header = ("receive s", "client CPU s", "held MiB", "raw_size MiB", "decode s")
    print(f"  {'form':6} " + " ".join(f"{name:>12}" for name in header))
    for form, runs in figures.items():
        med = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        assert med["rows"] == args.rows
        keys = ("receive_s", "receive_cpu_s", "held_mb", "raw_size_mb", "decode_s")
        print(f"  {form:6} " + " ".join(f"{med[key]:12.2f}" for key in keys))
    ratio = {
        k: statistics.median(r[k] for r in figures["bytes"])
        / statistics.median(r[k] for r in figures["libpq"])
        for k in ("receive_s", "receive_cpu_s", "held_mb")
    }
    print("  bytes ÷ libpq: " + ", ".join(f"{k} ×{v:.2f}" for k, v in ratio.items()))


if __name__ == "__main__":
    main()
