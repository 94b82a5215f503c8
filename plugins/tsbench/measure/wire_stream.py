"""Wire bodies encoded on the fly: the streamed form of ``wire_cache``, for datasets whose bodies
are not worth storing (at paper sizes they would need as much disk again as the dataset, per target).

``WireStream.bodies()`` starts ``processes`` spawned worker processes; worker k encodes every k-th
batch exactly as the cache's encoders do (``wire_cache.encoded_bodies``) and hands its bodies over a
bounded queue (``QUEUED_BATCHES`` batches per worker), and the load's reader thread takes them in
ingestion order: the same bodies, in the same order, as ``WireCache.bodies()`` gives. Nothing is
stored.

What it costs: the encoding then runs inside the load's timed window. On ``local`` and ``docker``
the encoders share the server's cores, so a streamed load is slower than a cached one and its
client CPU (the encoders' CPU-seconds included, ``encoding_cpu_s_in_window``) says by how much;
``bench/wire_forms.py`` measures the two forms side by side. On a cloud runtime they run on the
orchestrator, not the database host.

The run parameter ``wire_bodies`` chooses the form (``RunSpec.streams_wire_bodies``).
"""

from __future__ import annotations

import queue
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any

from tsbench.measure.wire_cache import (
    Body,
    EncodingShare,
    WireCache,
    encoded_bodies,
    encoding_processes,
    ensure_wire_cache,
)
from tsbench.results.phase_records import WireFacts
from tsbench.targets.base import Target
from tsbench.workload.dataset import Dataset

QUEUED_BATCHES = 8  # batches a worker may have encoded ahead of the load, per worker
WAIT_S = 1.0  # how often the reader checks that a silent worker is still alive
_END, _FAILED = "end", "failed"


def stream_share(out: Any, job: EncodingShare) -> None:
    """A worker process: every body of its share, a batch at a time, onto ``out``; then its
    CPU-seconds (or the traceback of what failed)."""
    started = time.process_time()
    try:
        batch: list[Any] = []
        for body in encoded_bodies(job):
            if batch and batch[0][0] != body.sequence:
                out.put(batch)
                batch = []
            batch.append((body.sequence, body.measurement, body.owner, body.data, body.rows, body.metrics))
        if batch:
            out.put(batch)
        out.put((_END, time.process_time() - started))
    except BaseException:  # handed to the reader, which raises it
        out.put((_FAILED, traceback.format_exc()))


@dataclass
class WireStream:
    """A target's bodies of ``dataset``, encoded while they are read; ``bodies()`` may be read once
    per load trial. The figures of the last pass are kept for ``facts()``."""

    dataset: Dataset
    target_type: type[Target]
    batch_size: int
    partitions: int
    key: str
    last: WireFacts | None = None

    @property
    def processes(self) -> int:
        return encoding_processes(self.dataset)

    @property
    def encoding_cpu_s_in_window(self) -> float:
        """The encoders' CPU-seconds of the last pass: spent inside the load's timed window."""
        return float(self.last.encode_cpu_s or 0.0) if self.last else 0.0

    def bodies(self) -> Iterator[Body]:
        """Every body in ingestion order, encoded now by ``processes`` worker processes (stopped
        when the reader stops early)."""
        shares, context = self.processes, get_context("spawn")
        queues = [context.Queue(maxsize=QUEUED_BATCHES) for _ in range(shares)]
        jobs = [
            EncodingShare.of(self.dataset, self.target_type, self.batch_size, self.partitions, k, shares)
            for k in range(shares)
        ]
        workers = [
            context.Process(target=stream_share, args=(queues[k], jobs[k]), daemon=True)
            for k in range(shares)
        ]
        started, totals = time.perf_counter(), {"bodies": 0, "rows": 0, "bytes_sent": 0}
        for worker in workers:
            worker.start()
        try:
            cpu = yield from self._in_order(queues, workers, totals)
            self.last = self.facts().model_copy(
                update={**totals, "encode_s": time.perf_counter() - started, "encode_cpu_s": cpu}
            )
        finally:
            for worker in workers:
                if worker.is_alive():
                    worker.terminate()
                worker.join()

    def _in_order(self, queues: list[Any], workers: list[Any], totals: dict[str, int]) -> Iterator[Body]:
        """Batch 1 from worker 1 % n, batch 2 from worker 2 % n, …: the first worker that ends
        where the next batch was due ends the stream. Returns the workers' CPU-seconds."""
        names, ended, cpu, sequence = self.dataset.measurements, set(), 0.0, 1
        while len(ended) < len(queues):
            share = sequence % len(queues)
            message = _next_message(queues[share], workers[share]) if share not in ended else (_END, 0.0)
            if message[0] == _FAILED:
                raise RuntimeError(f"encoding {self.key} bodies failed in a worker process:\n{message[1]}")
            if message[0] == _END:
                ended.add(share)
                cpu += message[1]
                for other in set(range(len(queues))) - ended:  # no batch is due from them any more
                    last = _next_message(queues[other], workers[other])
                    if last[0] != _END:
                        raise RuntimeError(f"encoding {self.key}: a worker sent a batch after the last one")
                    ended.add(other)
                    cpu += last[1]
                break
            for _, measurement, owner, data, rows, metrics in message:
                totals["bodies"] += 1
                totals["rows"] += rows
                totals["bytes_sent"] += len(data)
                yield Body(names[measurement], owner, data, rows, metrics)
            sequence += 1
        return cpu

    def facts(self) -> WireFacts:
        """What the report shows: the last pass's figures (None before one), encoded inside the
        timed window, nothing stored."""
        if self.last is not None:
            return self.last
        return WireFacts(
            key=self.key,
            batch_size=self.batch_size,
            partitions=self.partitions,
            bytes_stored=0,
            codec="none",
            processes=self.processes,
            streamed=True,
        )


def _next_message(source: Any, worker: Any) -> Any:
    """The worker's next message; an error if it died without one."""
    while True:
        try:
            return source.get(timeout=WAIT_S)
        except queue.Empty:
            if not worker.is_alive() and source.empty():
                raise RuntimeError(
                    f"a wire encoding process ended without a word (exit {worker.exitcode})"
                ) from None


def wire_bodies(
    dataset: Dataset, target_type: type[Target], batch_size: int, partitions: int, streamed: bool
) -> WireCache | WireStream | None:
    """The target's bodies of ``dataset``: the cache (built now unless there) or, ``streamed``, a
    stream; None for a target without a wire format."""
    if not streamed:
        return ensure_wire_cache(dataset, target_type, batch_size, partitions)
    wire = target_type.wire_format(dataset.use_case, dataset.tags())
    return None if wire is None else WireStream(dataset, target_type, batch_size, partitions, wire.key)
