"""TSBS data files: export a dataset as ``tsbs_generate_data`` would write it, and import such files.

- ``formats``: the two formats (``influx``, ``timescaledb``), their rules and the timescaledb header;
- ``export`` (with ``sink``): a dataset → a TSBS file, rows interleaved as TSBS writes them;
- ``importer``: a TSBS file → a dataset in the cache, read by ``reader`` in bounded chunks, parsed
  by ``influx_import`` or ``timescaledb_import``, resolved to entities and series by ``series`` and
  written as Parquet parts by ``columns``.
"""

from tsbench.workload.tsbs.export import EXPORT_BATCH_ROWS, export_dataset, number_strings
from tsbench.workload.tsbs.formats import (
    FORMATS,
    INFLUX_FORMAT,
    TAG_FIELDS,
    TIMESCALEDB_FORMAT,
    Format,
    TsbsFormatError,
    timescaledb_header,
)
from tsbench.workload.tsbs.importer import IMPORTER_VERSION, import_tsbs
from tsbench.workload.tsbs.reader import CHUNK_BYTES, detect_format

__all__ = [
    "CHUNK_BYTES",
    "EXPORT_BATCH_ROWS",
    "FORMATS",
    "IMPORTER_VERSION",
    "INFLUX_FORMAT",
    "TAG_FIELDS",
    "TIMESCALEDB_FORMAT",
    "Format",
    "TsbsFormatError",
    "detect_format",
    "export_dataset",
    "import_tsbs",
    "number_strings",
    "timescaledb_header",
]
