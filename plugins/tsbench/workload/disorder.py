"""Late, out-of-order and repeated rows: the generated rows (in time order) as they arrive at a
database that ingests from real sources.

Per measurement, every row independently (draws from the dataset's seed, so the result is
deterministic):

- with probability ``late_fraction`` it is late: it arrives ``d`` after its time, where ``d`` is
  exponential with mean ``lateness``, at least 1 ns and at most ``max_lateness``;
- with probability ``duplicate_fraction`` it is sent again unchanged, and with ``update_fraction``
  sent again with every field halved (an integer field floor-halved; a missing field stays
  missing), each copy arriving ``d`` after the row itself, at most ``max_lateness`` after its time.
  Rows of the data's last ``update_free_tail_ns`` are never updated: the last row of an entity then
  has a single version, and the queries that read it (lastpoint, last-loc, low-fuel, high-load)
  one answer whatever a database keeps of the copies.

A row arriving at ``a`` is sent just before the first on-time row whose time (its stream's running
maximum, for iot's own late points) exceeds ``a``; rows arriving at the same instant keep their
order, and a copy always comes after its original. A copy has the original's time and entity:
what the database keeps of the two is its own documented semantics (``workload.kept``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tsbench.workload.dataset_spec import DatasetSpec
from tsbench.workload.usecases import INT, UseCase

NS_PER_HOUR = 3_600_000_000_000
STREAM_TAG = 0x0D150D  # mixed into the seed: the disorder's draws are their own stream


@dataclass(frozen=True)
class Disorder:
    """The disorder of one dataset (from its ``DatasetSpec``); durations in ns."""

    late_fraction: float
    lateness_ns: int
    max_lateness_ns: int
    duplicate_fraction: float
    update_fraction: float
    seed: int
    update_free_from_ns: int  # rows at or after this instant are never updated

    @classmethod
    def of(cls, spec: DatasetSpec) -> Disorder | None:
        """The spec's disorder, None when every row arrives once and on time."""
        if not spec.disordered:
            return None
        span = spec.end - spec.start
        return cls(
            late_fraction=spec.late_fraction,
            lateness_ns=spec.lateness,
            max_lateness_ns=spec.max_lateness,
            duplicate_fraction=spec.duplicate_fraction,
            update_fraction=spec.update_fraction,
            seed=spec.seed,
            update_free_from_ns=spec.end - update_free_tail_ns(span),
        )

    def delays(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """``count`` delays in ns: exponential with mean ``lateness_ns``, in [1, max_lateness_ns]."""
        drawn = rng.exponential(self.lateness_ns, count)
        return np.clip(drawn, 1, self.max_lateness_ns).astype(np.int64)


def update_free_tail_ns(span_ns: int) -> int:
    """How much of the data's end is never updated: an hour, or a quarter of a shorter span."""
    return min(NS_PER_HOUR, span_ns // 4)


def halved(batch: pa.RecordBatch, fields: tuple[tuple[str, pa.DataType], ...]) -> pa.RecordBatch:
    """``batch`` with every field halved (integers floor-halved; nulls stay null)."""
    columns = list(batch.columns)
    for name, kind in fields:
        index = batch.schema.get_field_index(name)
        column = batch.column(index)
        if kind == INT:
            columns[index] = pc.floor(pc.divide(column.cast(pa.float64()), 2.0)).cast(pa.int64())
        else:
            columns[index] = pc.multiply(column, 0.5)
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema)


class _Stream:
    """One measurement's rows: on-time rows pass in their order, delayed rows and copies are held
    until the stream's time passes their arrival."""

    def __init__(self, disorder: Disorder, number: int, fields: tuple[tuple[str, pa.DataType], ...]):
        self.disorder, self.number, self.fields = disorder, number, fields
        self.fed = 0
        self.clock = np.iinfo(np.int64).min  # the largest time of an on-time row passed so far
        self.held: pa.Table | None = None
        self.held_arrival = np.empty(0, dtype=np.int64)

    def feed(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """The rows sent while ``batch``'s rows arrive (some of it, and held rows, may wait)."""
        d = self.disorder
        rng = np.random.default_rng([d.seed, STREAM_TAG, self.number, self.fed])
        self.fed += 1
        times = batch.column("time").cast(pa.int64()).to_numpy()
        count = len(times)
        late = rng.random(count) < d.late_fraction
        arrival = times + np.where(late, d.delays(rng, count), 0)
        kind = rng.random(count)
        duplicate = kind < d.duplicate_fraction
        update = ~duplicate & (kind < d.duplicate_fraction + d.update_fraction)
        update &= times < d.update_free_from_ns
        copy_arrival = np.minimum(arrival + d.delays(rng, count), times + d.max_lateness_ns)
        on_time = np.flatnonzero(~late)
        clock = np.maximum.accumulate(np.concatenate([[self.clock], times[on_time]]))[1:]
        waiting, waiting_arrival, not_before = self._waiting(batch, late, duplicate, update, arrival)
        waiting_arrival = np.concatenate([waiting_arrival, copy_arrival[duplicate], copy_arrival[update]])
        slot = np.maximum(np.searchsorted(clock, waiting_arrival, side="right"), not_before)
        sent = slot < len(on_time)
        self.held = waiting.filter(pa.array(~sent))
        self.held_arrival = waiting_arrival[~sent]
        if len(on_time):
            self.clock = int(clock[-1])
        ordered = pa.concat_tables([pa.Table.from_batches([batch]).take(on_time), waiting.filter(sent)])
        keys = np.concatenate([2 * np.arange(len(on_time)) + 1, 2 * slot[sent]])
        sequence = np.arange(len(keys))
        arrival_key = np.concatenate([times[on_time], waiting_arrival[sent]])
        order = np.lexsort((sequence, arrival_key, keys))
        return _one_batch(ordered.take(order), batch.schema)

    def _waiting(
        self,
        batch: pa.RecordBatch,
        late: np.ndarray,
        duplicate: np.ndarray,
        update: np.ndarray,
        arrival: np.ndarray,
    ) -> tuple[pa.Table, np.ndarray, np.ndarray]:
        """Rows not sent in their place: the held ones, this batch's late rows and its copies, in
        that order; their arrivals (the copies' are added by the caller) and the earliest slot each
        may take: a late row and a copy never go before the on-time rows that preceded the row."""
        after = np.cumsum(~late)  # per row: the on-time rows up to it, so the slot just after them
        copies = np.concatenate([np.flatnonzero(duplicate), np.flatnonzero(update)])
        parts = [] if self.held is None else [self.held]
        parts.append(pa.Table.from_batches([batch.filter(pa.array(late))]))
        parts.append(pa.Table.from_batches([batch.filter(pa.array(duplicate))]))
        parts.append(pa.Table.from_batches([halved(batch.filter(pa.array(update)), self.fields)]))
        held = len(self.held_arrival)
        not_before = np.concatenate([np.zeros(held, dtype=np.int64), after[late], after[copies]])
        arrivals = np.concatenate([self.held_arrival, arrival[late]])
        return pa.concat_tables(parts).unify_dictionaries(), arrivals, not_before

    def drain(self) -> pa.RecordBatch | None:
        """Every held row, in order of arrival (the stream's end)."""
        if self.held is None or not self.held.num_rows:
            return None
        order = np.lexsort((np.arange(len(self.held_arrival)), self.held_arrival))
        return _one_batch(self.held.take(order), self.held.schema)


def _one_batch(table: pa.Table, schema: pa.Schema) -> pa.RecordBatch:
    combined = table.unify_dictionaries().combine_chunks()
    if not combined.num_rows:
        return pa.RecordBatch.from_pylist([], schema=schema)
    return combined.to_batches()[0]


def disordered(
    batches: Iterator[tuple[str, pa.RecordBatch]], disorder: Disorder, use_case: UseCase
) -> Iterator[tuple[str, pa.RecordBatch]]:
    """``batches`` (per measurement in time order) as they arrive: late rows moved later and copies
    added (see the module's docstring); every measurement's held rows follow at the end."""
    streams: dict[str, _Stream] = {}
    for measurement, batch in batches:
        stream = streams.get(measurement)
        if stream is None:
            fields = use_case.measurement(measurement).fields
            stream = streams[measurement] = _Stream(disorder, len(streams), fields)
        sent = stream.feed(batch)
        if sent.num_rows:
            yield measurement, sent
    for measurement, stream in streams.items():
        rest = stream.drain()
        if rest is not None:
            yield measurement, rest
