"""An in-process DuckDB for scanning a dataset's Parquet files in bounded memory: capped at
``MEMORY_LIMIT``, spilling beyond it to the system's temporary folder (DuckDB's default would be
``./.tmp`` in whatever the working directory is).

Measured at 4,000 hosts × 1 day (34.56 M rows, 2026-11-26, this 2-core machine): the dataset
suite's two scans peak at +1,246 MB RSS under a 2 GB cap, +607 MB under 512 MB, +354 MB under
256 MB, in 10 s each; the oracle's 28 reference answers at +529 MB uncapped, +395 MB under 256 MB,
in 50 s each.
"""

from __future__ import annotations

import shutil
import tempfile

import duckdb

MEMORY_LIMIT = "256MB"
TEMP_SHARE = 0.5  # of the temporary folder's free space a connection may spill into


def sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def sql_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def bounded_connection(
    memory_limit: str | None = None, temp_dir: str | None = None
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB capped at ``memory_limit`` (default ``MEMORY_LIMIT``) that spills to
    ``temp_dir`` (default: the system's temporary folder) up to ``TEMP_SHARE`` of its free space at
    connection (DuckDB's own cap, 90 %, let a 1 B-row oracle fill the disk to 98 %: a query that
    needs more fails with DuckDB's error naming the limit); no progress bar (it would draw into
    task logs)."""
    con = duckdb.connect()
    temp = temp_dir or tempfile.gettempdir()
    spill_mib = int(shutil.disk_usage(temp).free * TEMP_SHARE) // 2**20
    con.execute(f"SET temp_directory = {sql_literal(temp)}")
    con.execute(f"SET max_temp_directory_size = '{spill_mib}MiB'")
    con.execute("SET enable_progress_bar = false")
    con.execute(f"SET memory_limit = {sql_literal(memory_limit or MEMORY_LIMIT)}")
    return con
