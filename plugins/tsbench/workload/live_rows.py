"""The rows a live phase ingests after the history (the loaded dataset): the history's own rows,
moved later in time by whole days and sent in time order, measurement batches merged by time. A
dataset with late rows or copies (``workload.disorder``) is sent in its files' order, the order its
rows arrive in, and a batch then bounds the rows after it by its measurement's newest time so far
less the dataset's lateness (``Dataset.lateness_ns``): the frontier waits that much longer.

Cycle ``c`` (1, 2, …) holds every history row moved by ``c × shift``, where ``shift`` is the
fewest whole days that move the history's start past its end's next UTC midnight: so every live
row lies after the history in days of its own (a target can drop them by day), the buckets of
every query type (minutes, hours, days; aligned to the epoch) stay aligned, and a
window ``[s + c·shift, e + c·shift)`` holds exactly the moved rows of the history's ``[s, e)``, whose
reference answer the oracle already computed (``tsbench.workload.live_queries``). A history of
whole days continues without a gap; a 12-hour history leaves a 12-hour gap before the live rows.

``LiveRows`` is opened before the phase's clock starts (DuckDB sorts each measurement once, in
bounded memory) and then hands out batches in order, thread-safe; ``Frontier`` says up to which
instant every row handed out has been acknowledged.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from tsbench.timeutil import NS_PER_DAY
from tsbench.workload.dataset import Dataset
from tsbench.workload.scan import bounded_connection, sql_literal

NEVER = 2**63 - 1  # the frontier once every row was acknowledged and none is left
HISTORY = 200_000  # acknowledgements remembered for closed_before(seconds_ago)
CHUNK_ROWS = 65_536  # rows read, cast and moved at once (then handed out in slices)


def live_shift_ns(dataset: Dataset) -> int:
    """How far cycle 1 moves the history: the fewest whole days that put its start at or after the
    first UTC midnight at or after its end (so the live rows are in days of their own)."""
    midnight = -(-dataset.end_ns // NS_PER_DAY) * NS_PER_DAY
    return max(1, -(-(midnight - dataset.start_ns) // NS_PER_DAY)) * NS_PER_DAY


@dataclass(frozen=True)
class LiveBatch:
    """One write of the live phase: ``index`` in send order, rows of one measurement whose times
    span ``[first_ns, last_ns]``; no row of its measurement from it on is older than ``floor_ns``."""

    index: int
    measurement: str
    batch: pa.RecordBatch
    first_ns: int
    last_ns: int
    floor_ns: int

    @property
    def rows(self) -> int:
        return self.batch.num_rows


class LiveRows:
    """The live rows of ``dataset`` in batches of ``batch_rows``, for as many cycles as needed;
    ``take()`` hands out the next batch (None when ``max_rows`` were handed out)."""

    def __init__(self, dataset: Dataset, batch_rows: int, max_rows: int):
        self.dataset, self.batch_rows, self.max_rows = dataset, batch_rows, max_rows
        self.shift_ns = live_shift_ns(dataset)
        self.in_arrival_order = dataset.copies or dataset.lateness_ns > 0
        self.start_ns = dataset.start_ns + self.shift_ns  # the first instant a live row may have
        self.handed_out = 0
        self._lock = threading.Lock()
        self._batches = self._all_batches()
        self._next: LiveBatch | None = next(self._batches, None)

    def take(self) -> LiveBatch | None:
        with self._lock:
            taken = self._next
            if taken is None or self.handed_out >= self.max_rows:
                return None
            self.handed_out += taken.rows
            self._next = next(self._batches, None)
            return taken

    def next_floor_ns(self) -> int:
        """No row the stream hands out from now on is older (``NEVER`` past its end), also once
        ``max_rows`` were handed out: the rows from there on were never written."""
        with self._lock:
            return NEVER if self._next is None else self._next.floor_ns

    def _all_batches(self) -> Iterator[LiveBatch]:
        index, cycle = 0, 1
        while True:
            streams = [self._moved(m, cycle * self.shift_ns) for m in self.dataset.measurements]
            for batch in heapq.merge(*streams, key=lambda item: item.floor_ns):
                yield LiveBatch(
                    index, batch.measurement, batch.batch, batch.first_ns, batch.last_ns, batch.floor_ns
                )
                index += 1
            cycle += 1

    def _moved(self, measurement: str, shift_ns: int) -> Iterator[LiveBatch]:
        """The measurement's history rows in time order (or arrival order), moved by
        ``shift_ns``, in the dataset's own schema (``index`` not yet set): chunks of
        ``CHUNK_ROWS`` moved at once, handed out in slices of ``batch_rows`` (zero-copy)."""
        schema = pq.read_schema(self.dataset.files(measurement)[0])
        con = bounded_connection()
        newest = floor = None  # the measurement's newest instant handed out so far; the floor
        try:
            for chunk, times in self._chunks(con, measurement, schema, shift_ns):
                for start in range(0, chunk.num_rows, self.batch_rows):
                    piece = times[start : start + self.batch_rows]
                    first, last = int(piece.min()), int(piece.max())
                    bound = first
                    if self.in_arrival_order and newest is not None:
                        bound = min(bound, newest - self.dataset.lateness_ns)
                    floor = bound if floor is None else max(floor, bound)  # both bound what follows
                    newest = last if newest is None else max(newest, last)
                    rows = chunk.slice(start, self.batch_rows)
                    yield LiveBatch(-1, measurement, rows, first, last, floor)
        finally:
            con.close()

    def _chunks(
        self, con: duckdb.DuckDBPyConnection, measurement: str, schema: pa.Schema, shift_ns: int
    ) -> Iterator[tuple[pa.RecordBatch, np.ndarray]]:
        """Moved chunks of whole ``batch_rows`` (the rest carried into the next; the last may be
        shorter), each with its times in ns."""
        carry: pa.Table | None = None
        for batch in self._reader(con, measurement, max(self.batch_rows, CHUNK_ROWS)):
            table = pa.Table.from_batches([batch])
            table = table if carry is None else pa.concat_tables([carry, table])
            whole = table.num_rows // self.batch_rows * self.batch_rows
            carry = table.slice(whole) if whole < table.num_rows else None
            if whole:
                yield self._shifted(table.slice(0, whole), schema, shift_ns)
        if carry is not None:
            yield self._shifted(carry, schema, shift_ns)

    def _reader(self, con: duckdb.DuckDBPyConnection, measurement: str, rows: int) -> pa.RecordBatchReader:
        glob = sql_literal(self.dataset.glob(measurement))
        if not self.in_arrival_order:
            text = f"SELECT * FROM read_parquet({glob}) ORDER BY time"
        else:
            numbered = f"read_parquet({glob}, filename = true, file_row_number = true)"
            text = (
                f"SELECT * EXCLUDE (filename, file_row_number) FROM {numbered} "
                "ORDER BY filename, file_row_number"
            )
        return con.sql(text).to_arrow_reader(rows)

    @staticmethod
    def _shifted(table: pa.Table, schema: pa.Schema, shift_ns: int) -> tuple[pa.RecordBatch, np.ndarray]:
        table = table.cast(schema)
        time_index = schema.get_field_index("time")
        nanos = pc.add(table.column(time_index).cast(pa.int64()), shift_ns)
        moved = table.set_column(
            time_index, schema.field(time_index), nanos.cast(schema.field(time_index).type)
        )
        return moved.combine_chunks().to_batches()[0], nanos.to_numpy()


class Frontier:
    """The live rows handed out to writers, and up to which instant they are all acknowledged:
    every row with a time before ``closed_before()`` was handed out and its write acknowledged.
    Batches are handed out in order of their floor, so that instant is the first instant of the
    oldest batch not yet acknowledged, or the floor of the next one to hand out. ``closed_before``
    can also say where that instant stood some seconds ago (a target whose writes become visible
    after their acknowledgement is read only where they have had time to).

    A target that keeps the last write of an instant (``Keeps.LAST``) must receive an update after
    its original, but concurrent writers can have them applied in either order: such a writer waits
    (``wait_for_earlier_overlaps``) until no earlier batch of its measurement whose time span meets
    its own is still being written. Batches of disjoint spans are written concurrently."""

    def __init__(self, rows: LiveRows):
        self.rows = rows
        self._lock = threading.Lock()
        self._acked = threading.Condition(self._lock)
        self._pending: dict[int, int] = {}  # batch index → first instant, handed out, not acknowledged
        self._in_flight: dict[int, LiveBatch] = {}  # handed out, neither acknowledged nor given up
        self._newest: dict[str, tuple[LiveBatch, float]] = {}  # measurement → batch, when acknowledged
        self._history: deque[tuple[float, int]] = deque(maxlen=HISTORY)  # (when, closed before)
        self._visible = rows.start_ns  # closed, and seen by a read (``confirm_visible``)
        self.acknowledged_rows = 0

    def take(self) -> LiveBatch | None:
        """The next batch to write (None when the rows are used up), counted as pending."""
        with self._lock:
            batch = self.rows.take()
            if batch is not None:
                self._pending[batch.index] = batch.first_ns
                self._in_flight[batch.index] = batch
            return batch

    def wait_for_earlier_overlaps(self, batch: LiveBatch) -> None:
        """Until no batch handed out before ``batch``, of its measurement, whose time span meets its
        own, is still being written (acknowledged or given up): then an update it holds reaches the
        database after its original."""
        with self._acked:
            while any(self._overlaps(other, batch) for other in self._in_flight.values()):
                self._acked.wait()

    def given_up(self, batch: LiveBatch) -> None:
        """``batch``'s write failed: it stays unacknowledged (the frontier never passes its rows), and
        no later batch waits for it."""
        with self._lock:
            self._in_flight.pop(batch.index, None)
            self._acked.notify_all()

    @staticmethod
    def _overlaps(earlier: LiveBatch, batch: LiveBatch) -> bool:
        return (
            earlier.index < batch.index
            and earlier.measurement == batch.measurement
            and earlier.first_ns <= batch.last_ns
            and batch.first_ns <= earlier.last_ns
        )

    def acknowledged(self, batch: LiveBatch) -> None:
        at = time.perf_counter()
        with self._lock:
            self._pending.pop(batch.index, None)
            self._in_flight.pop(batch.index, None)
            self.acknowledged_rows += batch.rows
            newest = self._newest.get(batch.measurement)
            if newest is None or newest[0].index < batch.index:
                self._newest[batch.measurement] = (batch, at)
            self._history.append((at, self._closed()))
            self._acked.notify_all()

    def acknowledged_after(
        self, measurement: str, since: float, timeout: float
    ) -> tuple[LiveBatch, float] | None:
        """The newest batch of ``measurement`` once one is acknowledged at or after ``since``
        (``perf_counter``), and when; None after ``timeout`` seconds without one."""
        deadline = time.perf_counter() + timeout
        with self._acked:
            while True:
                newest = self._newest.get(measurement)
                if newest is not None and newest[1] >= since:
                    return newest
                left = deadline - time.perf_counter()
                if left <= 0:
                    return None
                self._acked.wait(left)

    def closed_before(self, seconds_ago: float = 0.0) -> int:
        """See the class docstring; ``seconds_ago`` > 0: the value as it was then (before any
        acknowledgement: the live rows' first instant, i.e. only the history is closed)."""
        with self._lock:
            if seconds_ago <= 0:
                return self._closed()
            return self._closed_at(time.perf_counter() - seconds_ago)

    def confirm_visible(self, acknowledged_at: float) -> None:
        """A read saw the row of a batch acknowledged at ``acknowledged_at`` (``perf_counter``):
        every batch acknowledged by then is visible too, since a database makes its commits visible
        in the order it made them (a target that acknowledges before it applies, as QuestDB's WAL
        does, included)."""
        with self._lock:
            self._visible = max(self._visible, self._closed_at(acknowledged_at))

    def confirm_all_visible(self) -> None:
        """Every batch acknowledged so far is visible (the target was flushed)."""
        with self._lock:
            self._visible = max(self._visible, self._closed())

    def visible_before(self) -> int:
        """Every row before this instant was acknowledged, and a read saw it (or a later row)."""
        with self._lock:
            return self._visible

    def _closed_at(self, when: float) -> int:
        """``closed_before()`` as it was at ``when`` (``perf_counter``): the newest value recorded
        at or before it, the live rows' first instant before any acknowledgement."""
        for at, closed in reversed(self._history):
            if at <= when:
                return closed
        return self.rows.start_ns

    def _closed(self) -> int:
        oldest = min(self._pending.values(), default=NEVER)
        return min(oldest, self.rows.next_floor_ns())
