"""The load driver: N workers write a dataset into a target, timed like TSBS.

Two sources, one driver:

- **wire-ready bodies** (``wire``: a ``WireCache`` built before the load): workers send request
  bodies the target's wire format encoded earlier — like TSBS's loaders, which read a
  pre-generated file in the database's format. Nothing is encoded inside the timed window.
  Or a ``WireStream``: the same bodies encoded during the load by worker processes, whose
  CPU-seconds are then counted in the client CPU (``source`` "wire-streamed").
- **Arrow batches** (targets without a wire format): workers encode while they send (``write``).

Timing: the load window starts before the first body (or Parquet batch) is read and ends after
``target.flush()`` returned (so it includes reading, sending, and making the data visible/durable).
Rates: rows/s and metrics/s (a metric is one non-null field value; 10 per cpu row), logged every
``progress_s`` seconds and as a final mean. Client CPU: user + system CPU-seconds of this process
(all its threads) over the same window, and of a stream's encoding processes. With
``hash_workers`` every entity (host) always goes to the same worker (entity index modulo
workers); otherwise workers take the next item from a shared queue.
A failure in any worker stops the load and raises ``LoadError`` naming the worker.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import pyarrow as pa

from tsbench.measure.batches import entity_ids, metric_count
from tsbench.measure.stats import client_cpu
from tsbench.measure.wire_cache import Body, WireCache
from tsbench.targets.base import Target, Writer
from tsbench.workload.dataset import Dataset

log = logging.getLogger("tsbench.load")
_DONE = object()


class LoadError(RuntimeError):
    """The load failed; ``rows_written`` says how far it got."""

    def __init__(self, message: str, rows_written: int):
        super().__init__(message)
        self.rows_written = rows_written


@dataclass
class LoadResult:
    rows: int
    metrics: int
    seconds: float
    write_seconds: float  # until the last batch was accepted, before flush
    flush_seconds: float
    workers: int
    batch_size: int
    hash_workers: bool
    client_cpu_s: float = 0.0  # this process, all threads, over ``seconds``
    source: str = "arrow"  # "wire" (pre-encoded), "wire-streamed" or "arrow" (encoded while sending)
    progress: list[dict[str, float]] = field(default_factory=list)

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds if self.seconds else 0.0

    @property
    def metrics_per_s(self) -> float:
        return self.metrics / self.seconds if self.seconds else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "metrics": self.metrics,
            "seconds": self.seconds,
            "write_seconds": self.write_seconds,
            "flush_seconds": self.flush_seconds,
            "rows_per_s": self.rows_per_s,
            "metrics_per_s": self.metrics_per_s,
            "workers": self.workers,
            "batch_size": self.batch_size,
            "hash_workers": self.hash_workers,
            "source": self.source,
            **client_cpu(self.client_cpu_s, self.seconds),
            "client_cpu_s_per_million_rows": self.client_cpu_s / self.rows * 1e6 if self.rows else 0.0,
            "progress": self.progress,
        }


@dataclass(frozen=True)
class _Batch:
    """An Arrow batch the worker's writer encodes as it sends."""

    measurement: str
    batch: pa.RecordBatch
    metrics: int


class _Counter:
    def __init__(self) -> None:
        self.rows = 0
        self.metrics = 0
        self.lock = threading.Lock()

    def add(self, rows: int, metrics: int) -> None:
        with self.lock:
            self.rows += rows
            self.metrics += metrics


class _Workers:
    """The reader thread, the worker threads and their queues for one load."""

    def __init__(self, target: Target, workers: int, hash_workers: bool):
        self.target = target
        self.workers = workers
        self.hash_workers = hash_workers
        self.queues: list[queue.Queue[Any]] = [
            queue.Queue(maxsize=4) for _ in range(workers if hash_workers else 1)
        ]
        self.counter = _Counter()
        self.failed = threading.Event()
        self.errors: list[str] = []

    def put(self, index: int, item: Any) -> bool:
        while not self.failed.is_set():
            try:
                self.queues[index].put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    def read(self, items: Iterator[tuple[int, Any]]) -> None:
        """Feed ``(owner, item)`` pairs to the queues; then one end mark per worker."""
        try:
            for owner, item in items:
                if not self.put(owner if self.hash_workers else 0, item):
                    return
        except Exception as error:  # a reader failure fails the load like a worker failure
            self.errors.append(f"reader: {type(error).__name__}: {error}")
            self.failed.set()
        finally:
            for w in range(self.workers):
                self.put(w if self.hash_workers else 0, _DONE)

    def work(self, index: int) -> None:
        source = self.queues[index if self.hash_workers else 0]
        try:
            writer = self.target.writer()
        except Exception as error:
            self.errors.append(f"worker {index}: cannot connect: {type(error).__name__}: {error}")
            self.failed.set()
            return
        try:
            while not self.failed.is_set():
                try:
                    item = source.get(timeout=0.2)
                except queue.Empty:
                    continue
                if item is _DONE:
                    return
                self._deliver(writer, item)
        except Exception as error:
            self.errors.append(f"worker {index}: {type(error).__name__}: {error}")
            self.failed.set()
        finally:
            try:
                writer.close()
            except Exception as error:  # closing a broken connection must not hide the first error
                log.debug("worker %d: close failed: %s", index, error)

    def _deliver(self, writer: Writer, item: Body | _Batch) -> None:
        if isinstance(item, Body):
            writer.send(item.measurement, item.data)  # type: ignore[attr-defined]
            self.counter.add(item.rows, item.metrics)
        else:
            self.counter.add(writer.write(item.measurement, item.batch), item.metrics)

    def start(self, items: Iterator[tuple[int, Any]]) -> list[threading.Thread]:
        threads = [threading.Thread(target=self.read, args=(items,), name="load-reader", daemon=True)]
        threads += [
            threading.Thread(target=self.work, args=(i,), name=f"load-worker-{i}", daemon=True)
            for i in range(self.workers)
        ]
        for thread in threads:
            thread.start()
        return threads


def _arrow_items(
    dataset: Dataset, batch_size: int, workers: int, hash_workers: bool
) -> Iterator[tuple[int, Any]]:
    key = dataset.use_case.entity_key
    names = dataset.tags().column(key).combine_chunks()
    first_field = {m.name: 2 + len(m.extra_tags) for m in dataset.use_case.measurements}
    for measurement in dataset.measurements:
        for batch in dataset.iter_batches(measurement, batch_size):
            if not hash_workers:
                yield 0, _Batch(measurement, batch, metric_count(batch, first_field[measurement]))
                continue
            owner = entity_ids(batch, key, names) % workers
            for w in range(workers):
                part = batch.filter(pa.array(owner == w))
                if part.num_rows:
                    yield w, _Batch(measurement, part, metric_count(part, first_field[measurement]))


class WireBodies(Protocol):
    """Wire-ready bodies as the load reads them: a ``WireCache`` or a ``WireStream``."""

    @property
    def partitions(self) -> int: ...
    @property
    def encoding_cpu_s_in_window(self) -> float: ...
    def bodies(self) -> Iterator[Body]: ...


def _wire_items(wire: WireBodies, workers: int, hash_workers: bool) -> Iterator[tuple[int, Body]]:
    if hash_workers and wire.partitions != workers:
        raise ValueError(f"wire bodies have {wire.partitions} partitions, the load {workers} workers")
    for body in wire.bodies():
        yield body.owner, body


def load(
    target: Target,
    dataset: Dataset,
    workers: int,
    batch_size: int,
    hash_workers: bool = False,
    progress_s: float = 10.0,
    label: str = "",
    wire: WireBodies | None = None,
) -> LoadResult:
    """Write every measurement of ``dataset`` into ``target`` (from ``wire`` when given); see the
    module docstring."""
    label = label or target.name
    pool = _Workers(target, workers, hash_workers)
    source = "its wire bodies" if wire is not None else "Arrow batches"
    log.info("load %s: starting, %d worker(s), batches of %s, from %s", label, workers, batch_size, source)
    started, cpu_started = time.perf_counter(), time.process_time()
    if wire is not None:
        items = _wire_items(wire, workers, hash_workers)
    else:
        items = _arrow_items(dataset, batch_size, workers, hash_workers)
    progress = _watch(pool, pool.start(items), started, progress_s, label)
    if pool.errors:
        rows = pool.counter.rows
        raise LoadError(f"load into {label} failed after {rows:,} rows: {pool.errors[0]}", rows)
    written = time.perf_counter()
    try:
        target.flush()
    except Exception as error:
        raise LoadError(
            f"flush of {label} failed: {type(error).__name__}: {error}", pool.counter.rows
        ) from error
    finished = time.perf_counter()
    result = LoadResult(
        rows=pool.counter.rows,
        metrics=pool.counter.metrics,
        seconds=finished - started,
        write_seconds=written - started,
        flush_seconds=finished - written,
        workers=workers,
        batch_size=batch_size,
        hash_workers=hash_workers,
        client_cpu_s=time.process_time() - cpu_started + (wire.encoding_cpu_s_in_window if wire else 0.0),
        source=_source(wire),
        progress=progress,
    )
    log.info(
        "load %s: done, %s rows in %.2f s = %s rows/s, %s metrics/s (flush %.2f s), client %.2f CPU-s",
        label,
        f"{result.rows:,}",
        result.seconds,
        f"{result.rows_per_s:,.0f}",
        f"{result.metrics_per_s:,.0f}",
        result.flush_seconds,
        result.client_cpu_s,
    )
    return result


def _source(wire: WireBodies | None) -> str:
    if wire is None:
        return "arrow"
    return "wire" if isinstance(wire, WireCache) else "wire-streamed"


def _watch(
    pool: _Workers, threads: list[threading.Thread], started: float, progress_s: float, label: str
) -> list[dict[str, float]]:
    """Wait for the threads, logging a progress line every ``progress_s`` seconds. An
    interruption (``tsbench.interrupt``) stops the threads (up to 2 s each) before it unwinds."""
    try:
        return _progress_until_done(threads, pool.counter, started, progress_s, label)
    except BaseException:
        pool.failed.set()
        for thread in threads:
            thread.join(timeout=2.0)
        raise


def _progress_until_done(
    threads: list[threading.Thread], counter: _Counter, started: float, progress_s: float, label: str
) -> list[dict[str, float]]:
    progress: list[dict[str, float]] = []
    last_t, last_rows = started, 0
    # Wait on a worker that is still alive: joining one that has ended returns at once (a spin).
    while alive := [t for t in threads[1:] if t.is_alive()]:
        alive[0].join(timeout=min(progress_s, 0.5))
        now = time.perf_counter()
        if now - last_t < progress_s:
            continue
        rows, metrics = counter.rows, counter.metrics
        elapsed = now - started
        interval_rate = (rows - last_rows) / (now - last_t)
        progress.append({"t": elapsed, "rows": rows, "metrics": metrics, "rows_per_s": interval_rate})
        log.info(
            "load %s: %s rows, %s rows/s (last %.0f s), %s metrics/s mean, %.0f s",
            label,
            f"{rows:,}",
            f"{interval_rate:,.0f}",
            now - last_t,
            f"{metrics / elapsed:,.0f}",
            elapsed,
        )
        last_t, last_rows = now, rows
    for thread in threads:
        thread.join()
    return progress
