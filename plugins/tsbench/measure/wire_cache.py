"""Wire-ready load batches: a dataset's rows encoded once per target wire format and batch size,
cached beside the dataset — what TSBS's pre-generated, per-database files are to its loaders.

The load driver's timed window then only reads these bytes and sends them; encoding (Arrow →
ILP / line protocol + gzip / binary COPY) happens before it, is timed separately (wall and
CPU-seconds, in ``manifest.json``) and shown in the report as the load's preparation, never hidden.

Layout of one cache folder, ``<dataset>/wire/<digest>/`` (digest = sha256 of the dataset id, the
wire format's key, the batch size and the number of partitions)::

    manifest.json   written last: its presence means complete (format, key, totals, timings, sha256)
    index.npy       one record per request body, in ingestion order
    part-<k>.bin    request bodies written by encoding process k, back to back

Bodies of a dataset of up to ``STORED_RAW_UP_TO_ROWS`` rows are stored as sent (≤ ~0.7 GB of line
protocol, read from the page cache). Larger datasets' bodies that the format does not compress
itself are stored LZ4-compressed and decompressed by the load's reader thread inside the timed
window (~1.8 GB/s, ahead of the workers: 0.16 CPU-s per 864,000 QuestDB rows, about half of the
client's CPU in that window, taken from the server on shared cores). With ``partitions``
> 1 (``hash_workers``) every batch is split by entity, ``owner`` = entity index modulo partitions,
as the load driver assigns entities to workers. Encoding runs in ``processes`` worker processes
(spawned: never a fork of a threaded task process) so the GIL does not serialise it; each takes
every k-th batch.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from filelock import FileLock

from tsbench.measure.batches import entity_ids, metric_count
from tsbench.results.phase_records import WireFacts
from tsbench.spec.load_options import encoding_processes_at
from tsbench.targets.base import Target
from tsbench.workload.dataset import Dataset, sha256_file

FORMAT = "tsbench-wire/2"
CODEC = "lz4"
STORED_RAW_UP_TO_ROWS = 2_000_000  # bodies of datasets this small are stored uncompressed
RECORD = np.dtype(
    [
        ("sequence", "<i8"),  # the batch's position in ingestion order
        ("measurement", "<i2"),  # index into the manifest's measurement list
        ("owner", "<i2"),  # the worker partition (0 without hash_workers)
        ("part", "<i2"),
        ("offset", "<i8"),
        ("length", "<i8"),  # stored bytes
        ("raw_length", "<i8"),  # bytes sent (differs from length when stored LZ4-compressed)
        ("rows", "<i8"),  # rows the server stores from this body
        ("metrics", "<i8"),  # non-null field values of those rows
    ]
)


@dataclass(frozen=True)
class Body:
    """One request body read back from the cache: ``data`` are the bytes to send."""

    measurement: str
    owner: int
    data: bytes
    rows: int
    metrics: int


@dataclass(frozen=True)
class WireCache:
    """A complete cache folder; ``reused`` says whether this run found it already built."""

    path: Path
    manifest: dict[str, Any]
    reused: bool = False

    @property
    def partitions(self) -> int:
        return int(self.manifest["partitions"])

    @property
    def encoding_cpu_s_in_window(self) -> float:
        """Encoding CPU spent inside the load's timed window: none, it was spent before it."""
        return 0.0

    @property
    def compressed(self) -> bool:
        return self.manifest["codec"] != "none"

    def records(self) -> np.ndarray:
        return np.load(self.path / "index.npy")

    def bodies(self) -> Iterator[Body]:
        """Every body in ingestion order, read and decompressed (the load's reader thread does
        this inside the timed window, ahead of the workers, which then only send)."""
        names = self.manifest["measurements"]
        files = [open(self.path / f"part-{k}.bin", "rb") for k in range(self.manifest["processes"])]  # noqa: SIM115
        try:
            for record in self.records():
                data = os.pread(files[record["part"]].fileno(), int(record["length"]), int(record["offset"]))
                if self.compressed:
                    data = pa.decompress(
                        data, decompressed_size=int(record["raw_length"]), codec=CODEC, asbytes=True
                    )
                yield Body(
                    names[record["measurement"]],
                    int(record["owner"]),
                    data,
                    int(record["rows"]),
                    int(record["metrics"]),
                )
        finally:
            for handle in files:
                handle.close()

    def facts(self) -> WireFacts:
        """What the report shows about the preparation (no paths of the machine)."""
        keys = ("key", "batch_size", "partitions", "bodies", "rows", "bytes_stored", "bytes_sent")
        keys += ("codec", "encode_s", "encode_cpu_s", "processes")
        return WireFacts(
            **{key: self.manifest[key] for key in keys}, digest=self.path.name, reused=self.reused
        )


def cache_key(dataset: Dataset, wire_key: str, batch_size: int, partitions: int) -> str:
    identity = {
        "format": FORMAT,
        "dataset": dataset.id,
        "wire": wire_key,
        "batch_size": batch_size,
        "partitions": partitions,
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:24]


def ensure_wire_cache(
    dataset: Dataset, target_type: type[Target], batch_size: int, partitions: int = 1
) -> WireCache | None:
    """The target's wire-ready bodies for ``dataset`` (built now unless cached), or None for a
    target without a wire format. Concurrent callers build it once (file lock)."""
    wire = target_type.wire_format(dataset.use_case, dataset.tags())
    if wire is None:
        return None
    folder = dataset.path / "wire" / cache_key(dataset, wire.key, batch_size, partitions)
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder.parent / f".{folder.name}.lock")):
        if (folder / "manifest.json").is_file():
            return WireCache(folder, json.loads((folder / "manifest.json").read_text()), reused=True)
        temporary = folder.parent / f".tmp-{folder.name}-{uuid.uuid4().hex[:8]}"
        temporary.mkdir()
        try:
            manifest = _build(dataset, target_type, wire.key, batch_size, partitions, temporary)
            (temporary / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
            shutil.rmtree(folder, ignore_errors=True)  # what an interrupted build left (no manifest)
            os.rename(temporary, folder)
        finally:
            shutil.rmtree(temporary, ignore_errors=True)
    return WireCache(folder, manifest, reused=False)


def encoding_processes(dataset: Dataset) -> int:
    """Processes that encode ``dataset``'s bodies (``load_options.encoding_processes_at`` its rows)."""
    return encoding_processes_at(sum(dataset.rows.values()))


def _build(
    dataset: Dataset, target_type: type[Target], key: str, batch_size: int, partitions: int, folder: Path
) -> dict[str, Any]:
    processes = encoding_processes(dataset)
    started = time.perf_counter()
    jobs = [
        EncodingShare.of(dataset, target_type, batch_size, partitions, k, processes) for k in range(processes)
    ]
    if processes == 1:
        outcomes = [encode_share(str(folder), jobs[0])]
    else:
        with ProcessPoolExecutor(processes, mp_context=get_context("spawn")) as pool:
            outcomes = list(pool.map(encode_share, [str(folder)] * processes, jobs))
    records = np.concatenate([np.frombuffer(blob, RECORD) for blob, _, _ in outcomes])
    records = records[np.lexsort((records["owner"], records["sequence"]))]
    np.save(folder / "index.npy", records)
    return {
        "format": FORMAT,
        "key": key,
        "dataset": dataset.id,
        "measurements": dataset.measurements,
        "batch_size": batch_size,
        "partitions": partitions,
        "processes": processes,
        "codec": outcomes[0][2],
        "bodies": len(records),
        "rows": int(records["rows"].sum()),
        "bytes_stored": int(records["length"].sum()),
        "bytes_sent": int(records["raw_length"].sum()),
        "encode_s": time.perf_counter() - started,
        "encode_cpu_s": sum(cpu for _, cpu, _ in outcomes),
        "parts_sha256": [sha256_file(folder / f"part-{k}.bin") for k in range(processes)],
    }


@dataclass(frozen=True)
class EncodedBody:
    """One request body as encoded: its batch's ``sequence``, and what ``RECORD`` keeps of it."""

    sequence: int
    measurement: int  # index into the dataset's measurements
    owner: int
    data: bytes
    rows: int
    metrics: int  # a batch's metrics count once, with its first body


@dataclass(frozen=True)
class EncodingShare:
    """What one encoding process is given (picklable): the dataset, the target class by name, the
    batch size, the partitions, and which share of the batches is its own (``share`` of ``shares``)."""

    dataset_path: str
    module: str
    class_name: str
    batch_size: int
    partitions: int
    share: int
    shares: int

    @classmethod
    def of(
        cls,
        dataset: Dataset,
        target_type: type[Target],
        batch_size: int,
        partitions: int,
        share: int,
        shares: int,
    ) -> EncodingShare:
        module, name = target_type.__module__, target_type.__name__
        return cls(str(dataset.path), module, name, batch_size, partitions, share, shares)

    def opened(self) -> tuple[Dataset, type[Target]]:
        """The dataset and the target class, in the encoding process."""
        module = __import__(self.module, fromlist=[self.class_name])
        return Dataset.open(self.dataset_path), getattr(module, self.class_name)


def encoded_bodies(job: EncodingShare) -> Iterator[EncodedBody]:
    """Every ``job.shares``-th batch of the dataset starting at ``job.share`` (sequences count from
    1), encoded in the target's wire format, in ingestion order: what one encoding process makes,
    whether it stores the bodies (``encode_share``) or streams them (``wire_stream``)."""
    dataset, target_type = job.opened()
    tags = dataset.tags()
    wire = target_type.wire_format(dataset.use_case, tags)
    names = tags.column(dataset.use_case.entity_key).combine_chunks()
    first_field = {m.name: 2 + len(m.extra_tags) for m in dataset.use_case.measurements}
    sequence = 0
    for index, measurement in enumerate(dataset.measurements):
        for batch in dataset.iter_batches(measurement, job.batch_size):
            sequence += 1
            if sequence % job.shares != job.share:
                continue
            for owner, part in _partitions(batch, job.partitions, dataset.use_case.entity_key, names):
                metrics = metric_count(part, first_field[measurement])
                for payload in wire.encode(measurement, part):
                    yield EncodedBody(sequence, index, owner, payload.data, payload.rows, metrics)
                    metrics = 0


def encode_share(folder: str, job: EncodingShare) -> tuple[bytes, float, str]:
    """Encode the job's share of the batches into ``part-<share>.bin`` (runs in a worker process).
    Returns the records (raw ``RECORD`` bytes), this process's CPU-seconds and the codec the bodies
    are stored with."""
    cpu_started = time.process_time()
    dataset, target_type = job.opened()
    precompressed = target_type.wire_format(dataset.use_case, dataset.tags()).precompressed
    small = sum(dataset.rows.values()) <= STORED_RAW_UP_TO_ROWS
    codec = "none" if precompressed or small else CODEC
    records: list[tuple[int, ...]] = []
    share = job.share
    with open(Path(folder) / f"part-{share}.bin", "wb") as out:
        for body in encoded_bodies(job):
            stored = body.data if codec == "none" else pa.compress(body.data, CODEC, asbytes=True)
            offset = out.tell()
            out.write(stored)
            sizes = (offset, len(stored), len(body.data))
            records.append(
                (body.sequence, body.measurement, body.owner, share, *sizes, body.rows, body.metrics)
            )
    return np.array(records, dtype=RECORD).tobytes(), time.process_time() - cpu_started, codec


def _partitions(
    batch: pa.RecordBatch, partitions: int, key: str, names: pa.Array
) -> Iterator[tuple[int, pa.RecordBatch]]:
    if partitions == 1:
        yield 0, batch
        return
    owner = entity_ids(batch, key, names) % partitions
    for w in range(partitions):
        part = batch.filter(pa.array(owner == w))
        if part.num_rows:
            yield w, part
