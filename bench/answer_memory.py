"""Peak memory of receiving and checking large answers: a real PostgreSQL, ``--queries`` queries of
high-cpu-all's shape returning ``--rows`` rows each, run by ``run_pass`` with ``--workers`` workers
and checked against a reference answers file — the query task's own path, measured alone.

    .venv/bin/python bench/answer_memory.py [--rows 1630000] [--workers 2] [--queries 2]

1.63 M rows is the size of a high-cpu-all answer at 4,000 hosts × 1 day. The table and the
reference are generated from the same expressions (PostgreSQL and DuckDB), so every answer must
agree. Printed: the resident set before the pass, its peak while the pass ran (sampled every 20 ms
from ``/proc/self/status``) and after, with each answer's verdict.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins"))

import duckdb

from tsbench.measure.query_runner import run_pass
from tsbench.runtimes.local import LocalRuntime
from tsbench.targets.registry import load_target
from tsbench.workload.answer_file import AnswerFile, write_answers
from tsbench.workload.answers import Answer
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.usecases import CPU_FIELDS

HOSTS = 4000


def rss_bytes() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS"))


class Peak:
    """The highest resident set seen since ``reset``, sampled every 20 ms by a daemon thread."""

    def __init__(self) -> None:
        self.value = 0
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while True:
            self.value = max(self.value, rss_bytes())
            time.sleep(0.02)

    def reset(self) -> int:
        self.value = rss_bytes()
        return self.value


def _select(rows: int, double: str, source: str, hour_div: str) -> str:
    values = ", ".join(f"(((i * {k + 7}) % 997)::{double} / 10) AS {f}" for k, f in enumerate(CPU_FIELDS))
    return (
        f"SELECT to_timestamp(1451606400 + (i {hour_div} {HOSTS}) * 10) AS time, "
        f"'host_' || (i % {HOSTS}) AS hostname, {values} FROM {source}"
    )


def write_reference(path: Path, queries: list[LogicalQuery], rows: int) -> None:
    connection = duckdb.connect()
    cursor = connection.execute(_select(rows, "DOUBLE", f"range({rows}) r(i)", "//"))
    parts = iter(lambda: cursor.fetchmany(65_536), [])
    reference = Answer.adopt_parts(queries[0].query_type, parts, CPU_FIELDS)
    connection.close()
    write_answers(path, ((query, reference) for query in queries))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_630_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--queries", type=int, default=2)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tsbench-answer-memory-", dir="/var/tmp"))
    work.chmod(0o755)  # PostgreSQL runs as its own user
    queries = [LogicalQuery(f"q{n}", "high-cpu-all", CPU_FIELDS) for n in range(args.queries)]
    write_reference(work / "answers.jsonl", queries, args.rows)
    postgres = load_target("postgres")
    runtime, instance = LocalRuntime(work / "state"), f"memory-{uuid.uuid4().hex[:6]}"
    server = runtime.provision(postgres, instance)
    try:
        target = postgres(server.endpoint(), "cpu-only", ())
        session = target.session()
        source = f"generate_series(0, {args.rows - 1}) AS i"
        session.execute(f"CREATE TABLE answer_rows AS {_select(args.rows, 'float8', source, '/')}")
        session.close()
        text = f"SELECT time, hostname, {', '.join(CPU_FIELDS)} FROM answer_rows"
        peak = Peak()
        time.sleep(0.2)
        before = peak.reset()
        started = time.perf_counter()
        result = run_pass(
            "hot",
            queries,
            {q.id: text for q in queries},
            AnswerFile(work / "answers.jsonl"),
            target.session,
            args.workers,
        )
        wall = time.perf_counter() - started
        verdicts = [e.answer_ok for e in result.executions]
        shape = f"{args.queries} answers of {args.rows:,} rows, {args.workers} workers"
        print(f"{shape}: {wall:.1f} s; agree with the reference: {verdicts}")
        print(
            f"RSS before {before / 2**20:,.0f} MiB, peak {peak.value / 2**20:,.0f} MiB "
            f"(+{(peak.value - before) / 2**20:,.0f}), after {rss_bytes() / 2**20:,.0f} MiB"
        )
        target.close()
    finally:
        runtime.teardown(instance)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
