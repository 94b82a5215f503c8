"""The live phase's rows and queries: the history moved by whole days in time order, the frontier
of acknowledged rows, the twins of windowed queries and the answers moved back."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import pytest

from tsbench.spec import DatasetSpec
from tsbench.timeutil import NS_PER_DAY, NS_PER_HOUR, parse_instant
from tsbench.workload.answer_columns import ColumnRows
from tsbench.workload.answers import Answer
from tsbench.workload.dataset import Dataset, ensure_dataset
from tsbench.workload.live_queries import MOVES_WITH_WRITES, LiveMix, unshifted
from tsbench.workload.live_rows import NEVER, Frontier, LiveRows, live_shift_ns
from tsbench.workload.oracle import Oracle
from tsbench.workload.queries import DataRange, generate_queries


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    """devops (9 measurements), 2 hosts × 12 h from 06:00 at 60 s."""
    spec = DatasetSpec.parse(
        use_case="devops", scale=2, start="2016-01-01T06:00:00Z", end="2016-01-01T18:00:00Z", interval="60s"
    )
    dataset, _ = ensure_dataset(spec, tmp_path_factory.mktemp("live"))
    return dataset


class _Span:
    def __init__(self, start: str, end: str):
        self.start_ns, self.end_ns = parse_instant(start), parse_instant(end)


@pytest.mark.parametrize(
    ("start", "end", "days"),
    [
        ("2016-01-01T00:00:00Z", "2016-01-02T00:00:00Z", 1),  # whole days: no gap
        ("2016-01-01T00:00:00Z", "2016-01-01T12:00:00Z", 1),
        ("2016-01-01T06:00:00Z", "2016-01-02T05:00:00Z", 2),  # the live rows start after the next midnight
        ("2016-01-01T00:00:00Z", "2016-01-03T00:00:01Z", 3),
    ],
)
def test_the_shift_is_whole_days_past_the_next_midnight(start: str, end: str, days: int) -> None:
    span = _Span(start, end)
    shift = live_shift_ns(span)  # type: ignore[arg-type]
    assert shift == days * NS_PER_DAY
    midnight = -(-span.end_ns // NS_PER_DAY) * NS_PER_DAY
    assert span.start_ns + shift >= midnight


def test_live_rows_are_the_history_moved_in_time_order(tiny: Dataset) -> None:
    history = sum(tiny.rows.values())
    rows = LiveRows(tiny, batch_rows=97, max_rows=history + 500)  # into a second cycle
    batches = list(iter(rows.take, None))
    assert sum(b.rows for b in batches) >= history + 500
    assert [b.index for b in batches] == list(range(len(batches)))
    firsts = [b.first_ns for b in batches]
    assert firsts == sorted(firsts)
    assert {b.measurement for b in batches} == set(tiny.measurements)
    cycle_1 = [b for b in batches if b.first_ns < tiny.start_ns + 2 * rows.shift_ns]
    assert sum(b.rows for b in cycle_1) == history
    assert min(firsts) == tiny.start_ns + rows.shift_ns >= -(-tiny.end_ns // NS_PER_DAY) * NS_PER_DAY
    cpu = [b.batch for b in cycle_1 if b.measurement == "cpu"]
    moved = sorted(t.value for batch in cpu for t in batch.column("time"))
    original = sorted(t.value for t in tiny.read("cpu").column("time"))
    assert [t - rows.shift_ns for t in moved] == original
    assert cpu[0].schema == tiny.read("cpu").schema


def test_the_frontier_waits_for_the_oldest_unacknowledged_batch(tiny: Dataset) -> None:
    rows = LiveRows(tiny, batch_rows=50, max_rows=200)
    frontier = Frontier(rows)
    first, second = frontier.take(), frontier.take()
    assert first is not None and second is not None
    assert frontier.closed_before() == first.first_ns
    frontier.acknowledged(second)
    assert frontier.closed_before() == first.first_ns  # the older one is still out
    frontier.acknowledged(first)
    assert frontier.closed_before() == rows.next_floor_ns()
    while (batch := frontier.take()) is not None:
        frontier.acknowledged(batch)
    assert frontier.acknowledged_rows >= 200
    # the rows stop at max_rows: what comes after them was never written, so it is not closed
    assert frontier.closed_before() == rows.next_floor_ns() < NEVER


def test_a_batch_meeting_an_earlier_one_in_flight_waits_for_its_write(tiny: Dataset) -> None:
    """An update must reach a last-write target after its original: a batch whose span meets an
    earlier batch still being written waits until that one is acknowledged or given up."""
    frontier = Frontier(LiveRows(tiny, batch_rows=50, max_rows=400))
    first = frontier.take()
    assert first is not None
    apart = replace(first, index=first.index + 100, first_ns=first.last_ns + 1, last_ns=first.last_ns + 9)
    frontier.wait_for_earlier_overlaps(apart)  # a disjoint span: no wait
    other = replace(apart, measurement="not-" + first.measurement, first_ns=first.first_ns)
    frontier.wait_for_earlier_overlaps(other)  # another measurement: no wait

    def waiter(batch) -> threading.Event:
        done = threading.Event()
        threading.Thread(target=lambda: (frontier.wait_for_earlier_overlaps(batch), done.set())).start()
        return done

    update = waiter(replace(first, index=first.index + 100))  # same span, handed out later
    assert not update.wait(0.3)
    frontier.acknowledged(first)
    assert update.wait(5)
    second = frontier.take()
    assert second is not None
    after_failure = waiter(replace(second, index=second.index + 100))
    assert not after_failure.wait(0.3)
    frontier.given_up(second)  # a failed write releases the waiters; its rows stay unclosed
    assert after_failure.wait(5)
    assert frontier.closed_before() <= second.first_ns


def test_the_mix_sends_history_until_a_twin_is_closed_then_the_latest(tiny: Dataset) -> None:
    queries = generate_queries(DataRange.of(tiny), ["single-groupby-1-1-1", "lastpoint"], 3, seed=1)
    shift = live_shift_ns(tiny)
    mix = LiveMix(queries, shift, cycles=1)
    assert mix.types == ["single-groupby-1-1-1"]
    assert mix.excluded == {"lastpoint": MOVES_WITH_WRITES}
    early = mix.pick(0, closed_before=tiny.start_ns + shift)
    assert early.shift_ns == 0 and early.answer_id == early.query.id
    late = mix.pick(0, closed_before=NEVER)
    latest = max(q.end_ns for q in queries if q.type == "single-groupby-1-1-1")
    assert late.shift_ns == shift and late.query.end_ns == latest + shift
    assert late.answer_id != late.query.id and late.query.id.endswith("@live1")


def test_a_twin_answer_moved_back_equals_the_history_answer(tiny: Dataset) -> None:
    """The oracle over the moved rows (written as a dataset of their own) answers a twin; moved back
    it equals the history query's answer: tuples and columns alike."""
    queries = generate_queries(DataRange.of(tiny), ["single-groupby-1-1-1", "high-cpu-all"], 2, seed=4)
    shift = live_shift_ns(tiny)
    mix = LiveMix(queries, shift, cycles=1)
    oracle = Oracle(tiny)
    try:
        for qtype in mix.types:
            twin = mix.pick(mix.types.index(qtype), closed_before=NEVER)
            history = oracle.answer(next(q for q in queries if q.id == twin.answer_id))
            moved_rows = [
                tuple(
                    cell + shift if name in ("time", "bucket") else cell
                    for name, cell in zip(history.columns, row, strict=True)
                )
                for row in history.rows
            ]
            received = Answer(history.columns, moved_rows, history.key)
            assert unshifted(received, shift).rows == list(history.rows)
            held = ColumnRows(len(history.columns))
            held.extend_raw([list(r) for r in moved_rows], lambda v: v, {})
            by_columns = unshifted(Answer(history.columns, held, history.key), shift)
            assert list(by_columns.rows) == list(history.rows)
    finally:
        oracle.close()


def test_an_answer_without_instants_is_unchanged() -> None:
    answer = Answer(["max_usage_user"], [(1.5,)], [])
    assert unshifted(answer, NS_PER_HOUR).rows == [(1.5,)]


def test_a_row_seen_confirms_every_batch_acknowledged_before_it(tiny: Dataset) -> None:
    rows = LiveRows(tiny, batch_rows=50, max_rows=400)
    frontier = Frontier(rows)
    assert frontier.visible_before() == rows.start_ns  # only the history before any read
    first, second, third = frontier.take(), frontier.take(), frontier.take()
    frontier.acknowledged(first)
    frontier.acknowledged(second)
    seen_at = time.perf_counter()  # the second batch's row is seen: acknowledged before this
    closed_then = frontier.closed_before()
    frontier.acknowledged(third)
    assert frontier.visible_before() == rows.start_ns
    frontier.confirm_visible(seen_at)
    assert frontier.visible_before() == closed_then == third.first_ns
    assert frontier.visible_before() <= frontier.closed_before()  # the third is not yet seen
    frontier.confirm_visible(seen_at - 60)  # an older confirmation never moves it back
    assert frontier.visible_before() == closed_then
    frontier.confirm_all_visible()  # flushed
    assert frontier.visible_before() == frontier.closed_before()
