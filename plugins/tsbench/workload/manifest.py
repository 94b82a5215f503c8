"""A dataset's ``manifest.json``, typed: written last into its folder (its presence means the
dataset is complete), it says what the dataset holds and how to check every file of it."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from tsbench.results.record import Record


class DataFile(Record):
    """One file of the dataset: its path in the folder, the measurement it holds (empty for the
    tags), rows, bytes and sha256."""

    path: str
    measurement: str = ""
    rows: int = 0
    bytes: int = 0
    sha256: str = ""


class TimeRange(Record):
    """The data's span in ns since the epoch: ``end_ns`` exclusive (the last instant + interval)."""

    start_ns: int
    end_ns: int
    interval_ns: int


class Manifest(Record):
    """What a dataset holds: its content address (``id``), use case and entities, the generator's
    version, the spec it was generated from (None: imported from a TSBS file), its span, rows per
    measurement and in all, the tags file and every data file. Undeclared keys (the columns'
    schema, an import's source facts) are kept as written."""

    format: str
    id: str
    use_case: str
    entity_key: str = ""
    entities: int = 0
    generator_version: str = ""
    created_at: str = ""
    spec: dict[str, Any] | None = None  # DatasetSpec's JSON
    time_range: TimeRange
    rows: dict[str, int]
    rows_total: int
    # The most a row's time lies behind the largest time written before it in its measurement's
    # files, i.e. in the order rows arrive (ns; 0: in time order; None: written before it was kept).
    lateness_ns: int | None = None
    tags: DataFile
    files: list[DataFile] = Field(default_factory=list)
