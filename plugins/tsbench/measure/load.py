"""The load driver: N workers write a dataset's batches into a target, timed like TSBS.

Timing: the load window starts before the first batch is read and ends after ``target.flush()``
returned (so it includes reading the Parquet files, sending, and making the data visible/durable).
Rates: rows/s and metrics/s (a metric is one non-null field value; 10 per cpu row), logged every
``progress_s`` seconds and as a final mean. With ``hash_workers`` every entity (host) always goes
to the same worker (entity id modulo workers); otherwise workers take the next batch from a shared
queue. A failure in any worker stops the load and raises ``LoadError`` naming the worker.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tsbench.targets.base import Target
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
            "progress": self.progress,
        }


def _metric_count(batch: pa.RecordBatch, first_field: int) -> int:
    return sum(batch.num_rows - batch.column(i).null_count for i in range(first_field, batch.num_columns))


class _Counter:
    def __init__(self) -> None:
        self.rows = 0
        self.metrics = 0
        self.lock = threading.Lock()

    def add(self, rows: int, metrics: int) -> None:
        with self.lock:
            self.rows += rows
            self.metrics += metrics


def _entity_ids(batch: pa.RecordBatch, key: str, names: pa.Array) -> np.ndarray:
    column = batch.column(key)
    if isinstance(column.type, pa.DictionaryType):
        per_entry = pc.index_in(column.dictionary, value_set=names).to_numpy(zero_copy_only=False)
        return per_entry[column.indices.to_numpy(zero_copy_only=False)]
    return pc.index_in(column, value_set=names).to_numpy(zero_copy_only=False)


def load(
    target: Target,
    dataset: Dataset,
    workers: int,
    batch_size: int,
    hash_workers: bool = False,
    progress_s: float = 10.0,
    label: str = "",
) -> LoadResult:
    """Write every measurement of ``dataset`` into ``target``; see the module docstring."""
    label = label or target.name
    queues: list[queue.Queue[Any]] = [queue.Queue(maxsize=4) for _ in range(workers if hash_workers else 1)]
    counter = _Counter()
    failed = threading.Event()
    errors: list[str] = []
    key = dataset.use_case.entity_key
    names = dataset.tags().column(key).combine_chunks()
    first_field = {m.name: 2 + len(m.extra_tags) for m in dataset.use_case.measurements}

    def put(q: queue.Queue[Any], item: Any) -> bool:
        while not failed.is_set():
            try:
                q.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    def read() -> None:
        try:
            for measurement in dataset.measurements:
                for batch in dataset.iter_batches(measurement, batch_size):
                    if not hash_workers:
                        if not put(queues[0], (measurement, batch)):
                            return
                        continue
                    owner = _entity_ids(batch, key, names) % workers
                    for w in range(workers):
                        part = batch.filter(pa.array(owner == w))
                        if part.num_rows and not put(queues[w], (measurement, part)):
                            return
        except Exception as error:  # a reader failure fails the load like a worker failure
            errors.append(f"reader: {type(error).__name__}: {error}")
            failed.set()
        finally:
            for q in queues:
                for _ in range(workers if q is queues[0] and not hash_workers else 1):
                    put(q, _DONE)

    def work(index: int) -> None:
        source = queues[index if hash_workers else 0]
        try:
            writer = target.writer()
        except Exception as error:
            errors.append(f"worker {index}: cannot connect: {type(error).__name__}: {error}")
            failed.set()
            return
        try:
            while not failed.is_set():
                try:
                    item = source.get(timeout=0.2)
                except queue.Empty:
                    continue
                if item is _DONE:
                    return
                measurement, batch = item
                accepted = writer.write(measurement, batch)
                counter.add(accepted, _metric_count(batch, first_field[measurement]))
        except Exception as error:
            errors.append(f"worker {index}: {type(error).__name__}: {error}")
            failed.set()
        finally:
            try:
                writer.close()
            except Exception as error:  # closing a broken connection must not hide the first error
                log.debug("worker %d: close failed: %s", index, error)

    progress: list[dict[str, float]] = []
    started = time.perf_counter()
    threads = [threading.Thread(target=read, name="load-reader", daemon=True)]
    threads += [
        threading.Thread(target=work, args=(i,), name=f"load-worker-{i}", daemon=True) for i in range(workers)
    ]
    for thread in threads:
        thread.start()
    last_t, last_rows = started, 0
    while any(t.is_alive() for t in threads[1:]):
        threads[-1].join(timeout=min(progress_s, 0.5))
        now = time.perf_counter()
        if now - last_t >= progress_s:
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
    if errors:
        raise LoadError(f"load into {label} failed after {counter.rows:,} rows: {errors[0]}", counter.rows)
    written = time.perf_counter()
    try:
        target.flush()
    except Exception as error:
        raise LoadError(f"flush of {label} failed: {type(error).__name__}: {error}", counter.rows) from error
    finished = time.perf_counter()
    result = LoadResult(
        rows=counter.rows,
        metrics=counter.metrics,
        seconds=finished - started,
        write_seconds=written - started,
        flush_seconds=finished - written,
        workers=workers,
        batch_size=batch_size,
        hash_workers=hash_workers,
        progress=progress,
    )
    log.info(
        "load %s: done, %s rows in %.2f s = %s rows/s, %s metrics/s (flush %.2f s)",
        label,
        f"{result.rows:,}",
        result.seconds,
        f"{result.rows_per_s:,.0f}",
        f"{result.metrics_per_s:,.0f}",
        result.flush_seconds,
    )
    return result
