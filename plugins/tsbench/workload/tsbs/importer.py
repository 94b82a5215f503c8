"""Import a TSBS data file (either format, plain or gzip) as a dataset in the cache.

Import reads either format (optionally gzip-compressed; detected from the content) in chunks of
``CHUNK_BYTES``, so memory stays bounded by a few chunks plus one Parquet part per measurement plus
the entity tags, whatever the file's size. Arrow's CSV reader (quoting off) splits the lines on a
helper thread; the rest is vectorised with ``pyarrow.compute`` and numpy, and Python work happens
once per distinct series (tag set) of a chunk, not per line. Line-protocol escapes (a backslash
before a comma or space) and string or boolean fields do not occur in TSBS files and are not
supported (the line is reported). The dataset lands in the cache under a content address made from
the file's sha256, so importing the same file again reuses it.
Rules while importing:

- every measurement, tag and field must belong to the use case (given, or inferred from the
  measurement names: only ``cpu`` → cpu-only, any other devops measurement → devops,
  ``readings``/``diagnostics`` → iot); anything else is an error naming the line;
- an entity's tags are fixed: a tag whose value changes for the same entity is an error naming the
  line. A tag missing from a line (TSBS's iot data clears a random tag on ~1 % of its points) is not a
  change; the entity's value comes from its other lines (empty if no line has it). Rows that lack the
  entity key itself (an iot point whose ``name`` was cleared) are kept with a null key where the use
  case has such rows (iot; counted as ``source.nameless_rows`` in the manifest) — their other tags
  are not kept, since tags live once per entity — and skipped elsewhere (``source.skipped_rows``);
- the interval is the smallest positive gap between consecutive distinct timestamps of one entity
  when every observed gap is a multiple of it (regular data), else the most common gap (irregular
  data); ``end_ns`` is the last timestamp plus the interval.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from tsbench.progress import Progress
from tsbench.workload.dataset import Dataset, cache_dir, content_id, locked_build, sha256_file
from tsbench.workload.tsbs.formats import TIMESCALEDB_FORMAT, Format, TsbsFormatError, check_format
from tsbench.workload.tsbs.influx_import import InfluxChunk, InfluxParser
from tsbench.workload.tsbs.reader import detect_format, read_lines
from tsbench.workload.tsbs.timescaledb_import import TimescaledbParser
from tsbench.workload.usecases import get_use_case

log = logging.getLogger("tsbench")

IMPORTER_VERSION = 2  # 2: nameless iot rows kept


def import_tsbs(
    path: str | os.PathLike[str],
    fmt: Format | None = None,
    use_case: str | None = None,
    cache: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
) -> tuple[Dataset, bool]:
    """Import a TSBS data file (plain or gzip) as a dataset in the cache; returns ``(dataset, reused)``.

    ``fmt`` defaults to the detected format; ``use_case`` to the one the measurement names imply.
    A second import of the same file (same content, format and use-case choice) reuses the dataset.
    """
    source = Path(path)
    if not source.is_file():
        raise FileNotFoundError(f"TSBS file {source} does not exist")
    detected = detect_format(source)
    if fmt is None:
        fmt = detected
    check_format(fmt)
    if fmt != detected:
        raise TsbsFormatError(
            f"{source.name}: asked to read the {fmt} format, but the file looks like {detected}"
        )
    if use_case is not None:
        get_use_case(use_case)
    digest = sha256_file(source)
    key = {"import": digest, "format": fmt, "use_case": use_case or "auto", "importer": IMPORTER_VERSION}
    folder = cache_dir(cache) / f"tsbs-import-{content_id(key)}"

    def build(final: Path) -> Dataset:
        importer = _Importer(source, fmt, use_case, progress)
        return importer.run(
            final, {"kind": "tsbs-import", "file": source.name, "sha256": digest, "format": fmt}
        )

    return locked_build(folder, build)


class _Importer(InfluxParser, TimescaledbParser):
    """Reads the file in its format and commits the dataset with its manifest."""

    def run(self, final: Path, source: dict[str, Any]) -> Dataset:
        self.final = final
        try:
            if self.fmt == TIMESCALEDB_FORMAT:
                chunks = read_lines(self.path, ("line",), "\x1f", lambda batch: batch.column(0))
                try:
                    self.parse_timescaledb(chunks)
                finally:
                    chunks.close()
            else:
                chunks = read_lines(self.path, ("series", "fields", "timestamp"), " ", InfluxChunk.tokenize)
                try:
                    self.parse_influx(chunks)
                finally:
                    chunks.close()
            for name in list(self.pending):
                self.flush(name)
            if self.writer is None or self.time_min is None or self.time_max is None:
                raise TsbsFormatError(f"{self.path.name}: no rows to import")
            interval = self.interval()
            tags = self.tags_table()
            manifest = {
                "source": {
                    **source,
                    "lines": self.lines,
                    "skipped_rows": self.skipped,
                    "nameless_rows": self.nameless,
                },
                "time_range": {
                    "start_ns": self.time_min,
                    "end_ns": self.time_max + interval,
                    "interval_ns": interval,
                },
                "entities": tags.num_rows,
            }
            if self.skipped:
                log.warning("tsbs import: skipped %d rows without an entity key", self.skipped)
            return self.writer.commit(tags, manifest)
        except BaseException:
            if self.writer is not None:
                self.writer.abort()
            raise
