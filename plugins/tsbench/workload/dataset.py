"""Datasets on disk: Parquet chunks + ``manifest.json`` in a content-addressed folder.

Layout of one dataset folder::

    manifest.json                 written last; its presence means "complete"
    tags.parquet                  one row per entity (hostname + its tags)
    <measurement>/part-00000.parquet …

Atomicity: written into a hidden temporary folder, renamed into place once ``manifest.json`` is
complete, under a file lock: never half-written, generated once. A streamed dataset's files are an
extract (``workload.streamed_dataset``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import queue
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from filelock import FileLock

from tsbench.progress import Progress
from tsbench.timeutil import format_instant
from tsbench.workload.dataset_spec import DatasetSpec
from tsbench.workload.disorder import Disorder, disordered
from tsbench.workload.extract import ReadWindow
from tsbench.workload.generate import generate
from tsbench.workload.generate.common import GENERATOR_VERSION
from tsbench.workload.manifest import ExtractFacts, Manifest
from tsbench.workload.row_stream import Lateness, rechunked
from tsbench.workload.usecases import UseCase, get_use_case

FORMAT = "tsbench-dataset/1"
DEFAULT_CACHE_DIR = Path(__file__).resolve().parents[3] / "datasets" / "cache"
PARQUET_OPTIONS: dict[str, Any] = {"compression": "zstd", "compression_level": 1}
BYTES_PER_ROW = {"cpu-only": 12, "devops": 40, "iot": 40, "ycsb-ts": 12}  # on disk, measured: refuses misfits


class DatasetError(RuntimeError):
    """A dataset is missing, incomplete, corrupt, or cannot be written."""


def cache_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """The dataset cache: ``path``, else ``$TSBENCH_DATASETS``, else ``datasets/cache/``."""
    return Path(path or os.environ.get("TSBENCH_DATASETS") or DEFAULT_CACHE_DIR)


def content_id(key: dict[str, Any]) -> str:
    """sha256 (first 16 hex digits) of the canonical JSON of what determines a dataset."""
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def estimated_bytes(spec: DatasetSpec) -> int:
    return spec.rows_total * BYTES_PER_ROW[spec.use_case]


def check_disk_space(spec: DatasetSpec, directory: Path) -> None:
    """Refuse (DatasetError) a dataset whose estimated size exceeds 90 % of the free space."""
    probe = directory
    while not probe.exists():
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    need = estimated_bytes(spec)
    if need > 0.9 * free:
        raise DatasetError(
            f"scale: {spec.rows_total:,} rows need about {need / 1e9:,.1f} GB in {directory}, "
            f"but only {free / 1e9:,.1f} GB are free"
        )


@dataclass(frozen=True)
class Dataset:
    """A complete dataset folder and its manifest."""

    path: Path
    manifest: Manifest

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Dataset:
        folder = Path(path)
        manifest_path = folder / "manifest.json"
        if not manifest_path.is_file():
            raise DatasetError(f"{folder} is not a complete dataset (no manifest.json)")
        body = json.loads(manifest_path.read_text())
        if body.get("format") != FORMAT:
            raise DatasetError(f"{folder}: unknown dataset format {body.get('format')!r}")
        return cls(folder, Manifest.from_json(body))

    @property
    def id(self) -> str:
        return self.manifest.id

    @property
    def use_case(self) -> UseCase:
        return get_use_case(self.manifest.use_case)

    @property
    def measurements(self) -> list[str]:
        return list(self.manifest.rows)

    @property
    def rows(self) -> dict[str, int]:
        return dict(self.manifest.rows)

    @property
    def start_ns(self) -> int:
        return self.manifest.time_range.start_ns

    @property
    def end_ns(self) -> int:
        """Exclusive end of the data (last timestamp + interval)."""
        return self.manifest.time_range.end_ns

    @property
    def interval_ns(self) -> int:
        return self.manifest.time_range.interval_ns

    @property
    def scale(self) -> int:
        return self.manifest.entities

    @functools.cached_property
    def copies(self) -> bool:
        """Whether some rows are sent more than once: what a database keeps is ``workload.kept``'s."""
        return self.manifest.spec is not None and DatasetSpec.parse(**self.manifest.spec).copies

    @property
    def lateness_ns(self) -> int:
        """The most a row's time lies behind a time before it in the files (0: time order; a
        dataset written before this was kept: 0 when generated in time order)."""
        return self.manifest.lateness_ns or 0

    def spec_fields(self) -> dict[str, Any]:
        """DatasetSpec fields describing this dataset (from its spec, or its range when imported)."""
        if self.manifest.spec is not None:
            return dict(self.manifest.spec)
        return {
            "use_case": self.manifest.use_case,
            "scale": self.scale,
            "start": self.start_ns,
            "end": self.end_ns,
            "interval": self.interval_ns,
        }

    @property
    def extract(self) -> ExtractFacts | None:
        """Set when the files keep only the rows the queries read (``iter_batches`` regenerates)."""
        return self.manifest.extract

    def files(self, measurement: str) -> list[Path]:
        return [self.path / f.path for f in self.manifest.files if f.measurement == measurement]

    def glob(self, measurement: str) -> str:
        """A glob over the measurement's Parquet files (for DuckDB's read_parquet)."""
        return str(self.path / measurement / "*.parquet")

    def tags(self) -> pa.Table:
        return pq.read_table(self.path / "tags.parquet")

    def read(self, measurement: str, columns: list[str] | None = None) -> pa.Table:
        return pa.concat_tables(pq.read_table(p, columns=columns) for p in self.files(measurement))

    def iter_batches(self, measurement: str, batch_rows: int) -> Iterator[pa.RecordBatch]:
        """Rows in ingestion order, in batches of exactly ``batch_rows`` (the last may be shorter):
        read from the files, or, for a streamed dataset (``extract``), generated again."""
        if self.extract is None:
            stored = (b for p in self.files(measurement) for b in pq.ParquetFile(p).iter_batches(batch_rows))
            return rechunked(stored, batch_rows)
        spec = DatasetSpec.parse(**(self.manifest.spec or {}))
        generated = (batch for name, batch in generate(spec).batches if name == measurement)
        return rechunked(generated, batch_rows)

    def complete_fields(self, measurement: str) -> tuple[str, ...]:
        """The measurement's fields that every row carries, read from the Parquet footers (a null
        count of 0 in every row group; a column without statistics is not counted as complete)."""
        if self.extract is not None:
            return tuple(self.extract.complete_fields.get(measurement, ()))
        names = self.use_case.measurement(measurement).field_names
        complete = set(names)
        for path in self.files(measurement):
            metadata = pq.ParquetFile(path).metadata
            columns = {metadata.schema.column(i).name: i for i in range(metadata.num_columns)}
            for group in range(metadata.num_row_groups):
                for name in list(complete):
                    found = metadata.row_group(group).column(columns[name]) if name in columns else None
                    stats = found.statistics if found is not None else None
                    if stats is None or not stats.has_null_count or stats.null_count:
                        complete.discard(name)
        return tuple(name for name in names if name in complete)

    def verify(self) -> None:
        """Check every file's size and sha256 against the manifest (DatasetError on mismatch)."""
        for entry in [*self.manifest.files, self.manifest.tags]:
            path = self.path / entry.path
            if not path.is_file() or path.stat().st_size != entry.bytes:
                raise DatasetError(f"{path}: missing or wrong size")
            if sha256_file(path) != entry.sha256:
                raise DatasetError(f"{path}: sha256 differs from the manifest")


class DatasetWriter:
    """Writes one dataset into a temporary folder; ``commit()`` renames it into place atomically.

    Parquet encoding runs on a background thread (pyarrow releases the GIL) so that generation and
    encoding overlap; at most ``max_pending`` batches wait, which bounds memory.
    """

    def __init__(self, final: Path, use_case: UseCase, max_pending: int = 2):
        self.final = final
        self.use_case = use_case
        self.tmp = final.parent / f".tmp-{final.name}-{uuid.uuid4().hex[:8]}"
        self.tmp.mkdir(parents=True)
        self.files: list[dict[str, Any]] = []
        self.rows: dict[str, int] = {m.name: 0 for m in use_case.measurements}
        self.time_min: int | None = None
        self.time_max: int | None = None
        self.lateness = Lateness()  # over the rows written
        self._parts: dict[str, int] = {}
        self._queue: queue.Queue[tuple[str, pa.RecordBatch] | None] = queue.Queue(max_pending)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._drain, name="dataset-writer", daemon=True)
        self._thread.start()

    def write(self, measurement: str, batch: pa.RecordBatch) -> None:
        if self._error:
            raise DatasetError(f"writing {self.final.name} failed: {self._error}") from self._error
        self._queue.put((measurement, batch))

    def _drain(self) -> None:
        while (item := self._queue.get()) is not None:
            if self._error is None:
                try:
                    self._write_now(*item)
                except BaseException as error:  # surfaced on the next write() or commit()
                    self._error = error

    def _write_now(self, measurement: str, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        part = self._parts.get(measurement, 0)
        self._parts[measurement] = part + 1
        relative = f"{measurement}/part-{part:05d}.parquet"
        path = self.tmp / relative
        path.parent.mkdir(exist_ok=True)
        pq.write_table(pa.Table.from_batches([batch]), path, **PARQUET_OPTIONS)
        times = batch.column("time").cast(pa.int64())
        low, high = pa.compute.min(times).as_py(), pa.compute.max(times).as_py()
        self.lateness.note(measurement, batch)
        self.time_min = low if self.time_min is None else min(self.time_min, low)
        self.time_max = high if self.time_max is None else max(self.time_max, high)
        self.rows[measurement] += batch.num_rows
        self.files.append(
            {
                "measurement": measurement,
                "path": relative,
                "rows": batch.num_rows,
                "bytes": path.stat().st_size,
                "sha256": sha256_file(path),
            }
        )

    def manifest_rows(self) -> tuple[dict[str, int], int]:
        """The rows per measurement and the lateness the manifest states: those written."""
        return self.rows, self.lateness.ns

    def flush(self) -> None:
        """Wait until every batch given is written (DatasetError if one failed)."""
        self._finish_thread()

    def _finish_thread(self) -> None:
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        if self._error:
            raise DatasetError(f"writing {self.final.name} failed: {self._error}") from self._error

    def commit(self, tags: pa.Table, manifest: dict[str, Any]) -> Dataset:
        """Write tags + manifest, then rename the folder into place; returns the dataset."""
        self._finish_thread()
        rows, lateness_ns = self.manifest_rows()
        pq.write_table(tags, self.tmp / "tags.parquet", **PARQUET_OPTIONS)
        tags_path = self.tmp / "tags.parquet"
        body = {
            "format": FORMAT,
            "id": self.final.name,
            "use_case": self.use_case.name,
            "entity_key": self.use_case.entity_key,
            "entities": tags.num_rows,
            "generator_version": GENERATOR_VERSION,
            "created_at": format_instant(time.time_ns()),
            **manifest,
            "rows": rows,
            "rows_total": sum(rows.values()),
            "lateness_ns": lateness_ns,
            "schema": {
                m.name: [{"name": f.name, "type": str(f.type)} for f in self.use_case.row_schema(m.name)]
                for m in self.use_case.measurements
            },
            "tags": {
                "path": "tags.parquet",
                "rows": tags.num_rows,
                "bytes": tags_path.stat().st_size,
                "sha256": sha256_file(tags_path),
            },
            "files": self.files,
        }
        body.setdefault("time_range", {})
        body["time_range"].setdefault("first_ns", self.time_min)
        body["time_range"].setdefault("last_ns", self.time_max)
        (self.tmp / "manifest.json").write_text(json.dumps(body, indent=2) + "\n")
        if self.final.exists():  # a stale incomplete folder (no manifest) from an older crash
            shutil.rmtree(self.final)
        os.rename(self.tmp, self.final)
        return Dataset.open(self.final)

    def abort(self) -> None:
        with contextlib.suppress(DatasetError):
            self._finish_thread()
        shutil.rmtree(self.tmp, ignore_errors=True)


def locked_build(folder: Path, build: Callable[[Path], Dataset]) -> tuple[Dataset, bool]:
    """Return the complete dataset at ``folder``, building it under a file lock if missing.

    Returns ``(dataset, reused)``.
    """
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder.parent / f".{folder.name}.lock")):
        if (folder / "manifest.json").is_file():
            return Dataset.open(folder), True
        return build(folder), False


def dataset_folder(spec: DatasetSpec, directory: Path, windows: list[ReadWindow] | None = None) -> Path:
    """Where ``spec``'s dataset lives; a streamed one's (``windows``' extract) is ``…-streamed-…``."""
    key: dict[str, Any] = {"generator_version": GENERATOR_VERSION, **spec.dataset_key()}
    if windows is None:
        return directory / f"{spec.use_case}-{spec.scale}-{content_id(key)}"
    key["extract"] = [[w.start_ns, w.end_ns, w.coverage.value, w.bucket_ns, w.entities] for w in windows]
    return directory / f"{spec.use_case}-{spec.scale}-streamed-{content_id(key)}"


def ensure_dataset(
    spec: DatasetSpec, directory: str | os.PathLike[str] | None = None, progress: Progress | None = None
) -> tuple[Dataset, bool]:
    """The dataset for ``spec`` in the cache, generated once; returns ``(dataset, reused)``."""
    root = cache_dir(directory)
    folder = dataset_folder(spec, root)
    if (folder / "manifest.json").is_file():
        return Dataset.open(folder), True
    check_disk_space(spec, root)

    def build(final: Path) -> Dataset:
        data = generate(spec)
        writer = DatasetWriter(final, data.use_case)
        disorder = Disorder.of(spec)
        batches = data.batches if disorder is None else disordered(data.batches, disorder, data.use_case)
        try:
            for measurement, batch in batches:
                writer.write(measurement, batch)
                if progress:
                    progress.update(batch.num_rows)
            time_range = {"start_ns": spec.start, "end_ns": spec.end, "interval_ns": spec.interval}
            return writer.commit(
                data.tags, {"source": "generated", "spec": spec.dataset_key(), "time_range": time_range}
            )
        except BaseException:
            writer.abort()
            raise

    return locked_build(folder, build)
