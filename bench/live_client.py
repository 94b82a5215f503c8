"""How much live load the harness itself can offer (``tsbench.measure.live``): ingest and queries at
once against a do-nothing target in this process, so any shortfall is the client's. The target's
writer takes every batch at once (the batches are still made: read from the history's Parquet by
DuckDB, moved and cast, as in a real phase); its session answers every query with the reference
answer, so decoding and checking cost what they cost against a server.

Each step offers a rate of rows/s and queries/s for a few seconds and prints achieved ÷ offered and
the send lag's p99 for both. The harness is not the limit at rates where both ratios stay ≈ 1.00;
a live phase against a server must stay ≥ 3× below the highest such rate (issue 44). With
``--against <run folder>``, one more step offers 3× the highest ingest and query rate any server of
that run sustained in its live phase (ramp steps included), both at once, and prints whether the
harness kept up: every batch and query sent and answered, the send lag's p99 under 1 s.

    PYTHONPATH=plugins .venv/bin/python bench/live_client.py [--scale 100] [--seconds 4] [--against DIR]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from tsbench.measure.freshness import PROBE_TYPE
from tsbench.measure.live import LiveSettings, run_live
from tsbench.results.documents import read_result, scale_dirs
from tsbench.spec import DatasetSpec
from tsbench.targets.base import Capabilities
from tsbench.workload.answers import Answer
from tsbench.workload.dataset import Dataset, ensure_dataset
from tsbench.workload.live_queries import LiveMix
from tsbench.workload.live_rows import Frontier, LiveRows
from tsbench.workload.oracle import Oracle
from tsbench.workload.queries import DataRange, LogicalQuery, generate_queries
from tsbench.workload.usecases import UseCase

STEPS = ((50_000, 20), (200_000, 100), (500_000, 200), (1_000_000, 400), (2_000_000, 800))
KEPT_UP_LAG_MS = 1_000.0  # a send lag p99 below this: the schedule held
TYPES = ("single-groupby-1-1-1", "cpu-max-all-1", "double-groupby-1", "high-cpu-1", "groupby-orderby-limit")


class _NullWriter:
    def write(self, measurement: str, batch: pa.RecordBatch) -> int:
        return batch.num_rows

    def close(self) -> None:
        pass


class _EchoSession:
    """Answers a query (its id as the text) with the reference rows, as a server would send them."""

    def __init__(self, rows: dict[str, list[tuple[Any, ...]]]):
        self.rows = rows

    def fetch(self, text: str) -> list[tuple[Any, ...]]:
        return list(self.rows[text])

    def decode(self, raw: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        return raw

    def close(self) -> None:
        pass


class NullTarget:
    """A target that does nothing: writes vanish, queries come back with the right answer. It is
    not probed for freshness (its writes are nowhere to be read)."""

    name = "null"
    capabilities = Capabilities(durable=False, compression="", unsupported={PROBE_TYPE: "writes vanish"})

    def __init__(self, answers: dict[str, list[tuple[Any, ...]]], use_case: UseCase):
        self.answers, self.use_case = answers, use_case

    def writer(self) -> _NullWriter:
        return _NullWriter()

    def session(self) -> _EchoSession:
        return _EchoSession(self.answers)

    def render(self, query: LogicalQuery) -> str:
        return query.id

    def flush(self) -> None:
        pass


def _moved_rows(answer: Answer, shift: int) -> list[tuple[Any, ...]]:
    moving = {i for i, name in enumerate(answer.columns) if name in ("time", "bucket", "day")}
    return [tuple(c + shift if i in moving else c for i, c in enumerate(row)) for row in answer.rows]


def setup(scale: int) -> tuple[Dataset, list[LogicalQuery], dict[str, Answer]]:
    dataset, _ = ensure_dataset(DatasetSpec.parse(scale=scale), Path(tempfile.gettempdir()) / "tsbench-bench")
    queries = generate_queries(DataRange.of(dataset), TYPES, 10, seed=1)
    oracle = Oracle(dataset)
    try:
        return dataset, queries, {q.id: oracle.answer(q) for q in queries}
    finally:
        oracle.close()


def step(
    dataset: Dataset,
    queries: list[LogicalQuery],
    expected: dict[str, Answer],
    rows_s: int,
    qps: int,
    seconds: float,
) -> Any:
    rows = LiveRows(dataset, 1_000, rows_s * int(seconds) + 1)
    mix = LiveMix(queries, rows.shift_ns, cycles=max(1, rows.max_rows // sum(dataset.rows.values()) + 1))
    answers = {q.id: list(expected[q.id].rows) for q in queries}
    for twin in mix.twins():  # the echo answers a twin with the moved rows
        answers[twin.query.id] = _moved_rows(expected[twin.answer_id], twin.shift_ns)
    settings = LiveSettings(seconds, rows_s, 1_000, 2, qps, 4)
    cpu = time.process_time()
    target = NullTarget(answers, dataset.use_case)
    record = run_live(target, Frontier(rows), mix, expected, settings)  # type: ignore[arg-type]
    return record, time.process_time() - cpu


def servers_sustained(run_dir: Path) -> tuple[float, float, list[str]]:
    """The highest ingest (rows/s achieved) and query rate (q/s answered) any target of the run
    sustained in its live phase, main segment or ramp step, and where each came from."""
    rows_s, qps, sources = 0.0, 0.0, []
    for folder in scale_dirs(run_dir):
        for name, body in read_result(folder).targets.items():
            live = body.live
            if live is None:
                continue
            answered = sum(t.under_ingest.completed for t in live.queries.values()) / live.seconds
            steps = [s.achieved_queries_per_s for s in live.ramp]
            sources.append(
                f"{folder.name}/{name}: {live.ingest.achieved_rows_per_s:,.0f} rows/s, "
                f"{max([answered, *steps]):,.1f} q/s"
            )
            rows_s = max(rows_s, live.ingest.achieved_rows_per_s)
            qps = max(qps, answered, *steps)
    return rows_s, qps, sources


def _print_step(rows_s: int, qps: int, seconds: float, record: Any, cpu_s: float) -> bool:
    """One line of the table; whether the harness kept up: every batch and query offered was sent
    and answered, none left unsent, with the send lag's p99 under ``KEPT_UP_LAG_MS``."""
    ingest = record.ingest
    types = record.queries.values()
    done = sum(t.under_ingest.completed for t in types)
    failed_q = sum(t.under_ingest.errors for t in types)
    unsent_q = sum(t.under_ingest.unsent for t in types)
    lag_q = max((t.under_ingest.lag_ms.p99 for t in types), default=0.0)
    wrong = sum(t.mismatches for t in types)
    print(
        f"  {rows_s:>10,} {ingest.achieved_rows_per_s / rows_s:>6.2f} {ingest.lag_ms.p99:>10.2f} | "
        f"{qps:>5} {done / (qps * seconds):>6.2f} {lag_q:>10.2f} {sum(t.checked for t in types):>8}"
        f"{' WRONG ' + str(wrong) if wrong else ''} | {cpu_s:.1f} | "
        f"unsent {ingest.unsent} batches, {unsent_q} queries"
    )
    all_sent = not (ingest.unsent or unsent_q or ingest.errors or failed_q)
    return all_sent and max(ingest.lag_ms.p99, lag_q) < KEPT_UP_LAG_MS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--against", type=Path, help="a run folder whose live phases set the 3× step")
    args = parser.parse_args()
    dataset, queries, expected = setup(args.scale)
    print(f"live client, do-nothing target: cpu-only, {args.scale} hosts × 1 day, {args.seconds:g} s/step")
    head = f"{'rows/s':>10} {'ratio':>6} {'lag p99 ms':>10} | {'q/s':>5} {'ratio':>6} {'lag p99 ms':>10}"
    print(f"  {head} {'checked':>8} | CPU s | left unsent at the end")
    for rows_s, qps in STEPS:
        _print_step(rows_s, qps, args.seconds, *step(dataset, queries, expected, rows_s, qps, args.seconds))
    if args.against:
        server_rows, server_q, sources = servers_sustained(args.against)
        print(f"the servers' highest sustained live rates in {args.against}:")
        for line in sources:
            print(f"  {line}")
        rows_s, qps = max(1, round(3 * server_rows)), max(1, round(3 * server_q))
        print(f"3× both at once against the do-nothing target ({rows_s:,} rows/s + {qps} q/s):")
        record, cpu_s = step(dataset, queries, expected, rows_s, qps, args.seconds)
        kept_up = _print_step(rows_s, qps, args.seconds, record, cpu_s)
        verdict = "kept up" if kept_up else "did NOT keep up"
        print(f"  the harness {verdict} at 3× the servers' rates (every request sent, lag p99 < 1 s)")


if __name__ == "__main__":
    main()
