"""A streamed dataset: generated once to count it and keep the extract its queries read
(``workload.extract``), then generated again by every load (``Dataset.iter_batches``), never stored
whole. At study A's paper sizes a stored dataset is 114.7 GB per order and size (11.0 GB per
1 B rows, measured); its extract holds the rows of the query windows, a few hundred MB.

The folder is a dataset folder (manifest written last, renamed into place, under a file lock) whose
manifest states the whole dataset's rows and lateness, counted while generating, and an ``extract``
section: the spans kept, their rows and the fields every row carried.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa

from tsbench.progress import Progress
from tsbench.workload.dataset import (
    Dataset,
    DatasetError,
    DatasetWriter,
    cache_dir,
    dataset_folder,
    locked_build,
)
from tsbench.workload.dataset_spec import DatasetSpec
from tsbench.workload.extract import Coverage, ReadWindow, RowFilter, entity_spans, merged
from tsbench.workload.generate import generate
from tsbench.workload.manifest import ExtractFacts
from tsbench.workload.row_stream import Lateness
from tsbench.workload.scan import bounded_connection, sql_ident, sql_literal
from tsbench.workload.usecases import UseCase


class ExtractWriter(DatasetWriter):
    """Writes the rows the windows read; counts every row, its lateness and its complete fields."""

    def __init__(self, final: Path, use_case: UseCase, windows: list[ReadWindow]):
        super().__init__(final, use_case)
        every = merged(w for w in windows if w.entities is None)
        self.keep = RowFilter(every, entity_spans(windows), use_case.entity_key)
        self.rows_seen: dict[str, int] = {m.name: 0 for m in use_case.measurements}
        self.lateness_seen = Lateness()
        self.complete = {m.name: set(m.field_names) for m in use_case.measurements}

    def write(self, measurement: str, batch: pa.RecordBatch) -> None:
        self.rows_seen[measurement] += batch.num_rows
        self.lateness_seen.note(measurement, batch)
        self.complete[measurement] -= {f for f in self.complete[measurement] if batch.column(f).null_count}
        super().write(measurement, self.keep.kept(batch))

    def manifest_rows(self) -> tuple[dict[str, int], int]:
        """The whole dataset's rows and lateness (the files hold the extract)."""
        return self.rows_seen, self.lateness_seen.ns

    def extract_facts(self) -> ExtractFacts:
        """What the folder keeps: the spans, the rows kept, the fields every generated row carried."""
        measurements = self.use_case.measurements
        fields = {m.name: [f for f in m.field_names if f in self.complete[m.name]] for m in measurements}
        return ExtractFacts(
            spans=self.keep.spans,
            entity_spans=self.keep.by_entity,
            rows=dict(self.rows),
            complete_fields=fields,
        )


def ensure_streamed_dataset(
    spec: DatasetSpec,
    windows: list[ReadWindow],
    directory: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
) -> tuple[Dataset, bool]:
    """``spec``'s streamed dataset, keeping the rows ``windows`` read, in the cache (generated once);
    returns ``(dataset, reused)``."""
    folder = dataset_folder(spec, cache_dir(directory), windows)
    if (folder / "manifest.json").is_file():
        return Dataset.open(folder), True
    return locked_build(folder, lambda final: build_extract(spec, final, windows, progress))


def build_extract(
    spec: DatasetSpec, final: Path, windows: list[ReadWindow], progress: Progress | None = None
) -> Dataset:
    """Generate ``spec`` once, keep the rows inside ``windows`` in ``final``; DatasetError when a
    window's coverage does not hold (the extract could not answer its query as the data would)."""
    data = generate(spec)
    writer = ExtractWriter(final, data.use_case, windows)
    try:
        for measurement, batch in data.batches:
            writer.write(measurement, batch)
            if progress:
                progress.update(batch.num_rows)
        writer.flush()
        if problems := uncovered(writer.tmp, data.use_case, spec.scale, windows):
            raise DatasetError("an extract cannot answer its queries: " + "; ".join(problems))
        time_range = {"start_ns": spec.start, "end_ns": spec.end, "interval_ns": spec.interval}
        facts = {"source": "generated", "spec": spec.dataset_key(), "time_range": time_range}
        return writer.commit(data.tags, {**facts, "extract": writer.extract_facts().model_dump()})
    except BaseException:
        writer.abort()
        raise


def uncovered(folder: Path, use_case: UseCase, entities: int, windows: list[ReadWindow]) -> list[str]:
    """The windows whose coverage does not hold in the extract written under ``folder``."""
    checked = {w for w in windows if w.coverage is not Coverage.NONE}
    if not checked:
        return []
    source = f"read_parquet({sql_literal(str(folder / use_case.queried / '*.parquet'))})"
    entity, problems = sql_ident(use_case.entity_key), []
    con = bounded_connection()
    try:
        for window in sorted(checked, key=lambda w: (w.start_ns, w.end_ns)):
            where = f"epoch_ns(time) >= {window.start_ns} AND epoch_ns(time) < {window.end_ns}"
            if window.coverage is Coverage.EVERY_ENTITY:
                found = con.execute(f"SELECT count(DISTINCT {entity}) FROM {source} WHERE {where}").fetchone()
                want = entities
            else:
                bucket = f"epoch_ns(time) // {window.bucket_ns}"
                found = con.execute(f"SELECT count(DISTINCT {bucket}) FROM {source} WHERE {where}").fetchone()
                want = -(-(window.end_ns - window.start_ns) // window.bucket_ns)
            if int(found[0]) != want:
                problems.append(
                    f"[{window.start_ns}, {window.end_ns}) has {found[0]} of the {want} "
                    f"{'entities' if window.coverage is Coverage.EVERY_ENTITY else 'buckets'} it needs"
                )
    finally:
        con.close()
    return problems
