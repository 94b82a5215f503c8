"""Exact aggregates of a dataset's Parquet files by DuckDB, for the dataset suite.

A dataset can hold 100 M rows, too many for a pandas DataFrame, so the data itself never goes to
great_expectations. DuckDB streams over the measurement's Parquet glob (``Dataset.glob``, the same
files the oracle reads) twice:

1. one ``GROUP BY filename`` scan computes, per Parquet file, the row count and, per column, the
   minimum, the maximum and the number of nulls (plus exact counts of out-of-range values and of
   timestamps outside the window, for the report);
2. one ``GROUP BY hash(entity, time) HAVING count(*) > 1`` finds candidate duplicates; only when
   there are any, the rows with those hashes are grouped by the real key, so a hash collision never
   counts as a duplicate (DuckDB spills to a temporary folder when the keys do not fit in memory).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import duckdb
import pandas as pd

from tsbench.workload.dataset import Dataset
from tsbench.workload.scan import bounded_connection, sql_ident, sql_literal

DUPLICATE_EXAMPLES = 100


@dataclass
class MeasurementProfile:
    """Exact aggregates of one measurement's Parquet files (see the module docstring)."""

    measurement: str
    columns: list[str]
    files: pd.DataFrame  # file, rows, min_<col>, max_<col>, nulls_<col>, out_<col>, out_time
    duplicate_keys: int
    extra_rows: int  # rows beyond the first of every duplicated key
    duplicates: pd.DataFrame  # entity, time (ns), n — at most ``duplicate_examples`` keys
    seconds: float

    @property
    def rows(self) -> int:
        return int(self.files["rows"].sum()) if len(self.files) else 0


def connect(memory_limit: str | None = None, temp_dir: str | None = None) -> duckdb.DuckDBPyConnection:
    """``bounded_connection`` that may return rows in any order (the scans only aggregate)."""
    con = bounded_connection(memory_limit, temp_dir)
    con.execute("SET preserve_insertion_order = false")
    return con


def profile_measurement(
    con: duckdb.DuckDBPyConnection,
    dataset: Dataset,
    measurement: str,
    ranges: dict[str, tuple[float, float]] | None = None,
    duplicate_examples: int = DUPLICATE_EXAMPLES,
) -> MeasurementProfile:
    """Both scans of one measurement; ``ranges`` (column → inclusive bounds) adds out-of-range counts."""
    started = time.perf_counter()
    entity = dataset.manifest.entity_key or dataset.use_case.entity_key
    ranges = ranges or {}
    if not any((dataset.path / measurement).glob("*.parquet")):
        empty = pd.DataFrame({"file": pd.Series([], dtype=str), "rows": pd.Series([], dtype="int64")})
        none = pd.DataFrame({"entity": [], "time": [], "n": []})
        return MeasurementProfile(measurement, [], empty, 0, 0, none, time.perf_counter() - started)
    glob = sql_literal(dataset.glob(measurement))
    columns = [row[0] for row in con.execute(f"DESCRIBE SELECT * FROM read_parquet({glob})").fetchall()]
    files = _file_aggregates(con, dataset, glob, columns, ranges)
    keys, extra, dups = _duplicated_keys(con, glob, entity, duplicate_examples)
    return MeasurementProfile(
        measurement, columns, files, int(keys), int(extra), dups, time.perf_counter() - started
    )


def _file_aggregates(
    con: duckdb.DuckDBPyConnection,
    dataset: Dataset,
    glob: str,
    columns: list[str],
    ranges: dict[str, tuple[float, float]],
) -> pd.DataFrame:
    """Scan 1: per file (path relative to the dataset) rows and per column min, max, nulls, out."""
    select = ["filename AS file", "count(*) AS rows"]
    for i, column in enumerate(columns):
        q = sql_ident(column)
        value = f"epoch_ns({q})" if column == "time" else q
        select.append(f"CASE WHEN count({q}) = count(*) THEN min({value}) END AS min_{i}")
        select.append(f"CASE WHEN count({q}) = count(*) THEN max({value}) END AS max_{i}")
        select.append(f"count(*) - count({q}) AS nulls_{i}")
        if column in ranges:
            lo, hi = ranges[column]
            select.append(f"count(*) FILTER (WHERE {q} < {lo} OR {q} > {hi}) AS out_{i}")
    start, end = dataset.start_ns, dataset.end_ns
    select.append(
        f'count(*) FILTER (WHERE epoch_ns("time") < {start} OR epoch_ns("time") >= {end}) AS out_time'
    )
    source = f"read_parquet({glob}, filename = true)"
    raw = con.execute(f"SELECT {', '.join(select)} FROM {source} GROUP BY filename ORDER BY file").df()
    renames = {}
    for i, column in enumerate(columns):
        for kind in ("min", "max", "nulls", "out"):
            renames[f"{kind}_{i}"] = f"{kind}_{column}"
    files = raw.rename(columns=renames)
    root = str(dataset.path).rstrip("/") + "/"
    files["file"] = files["file"].map(lambda p: p[len(root) :] if p.startswith(root) else p)
    return files


def _duplicated_keys(
    con: duckdb.DuckDBPyConnection, glob: str, entity: str, duplicate_examples: int
) -> tuple[int, int, pd.DataFrame]:
    """Scan 2: duplicated (entity, time) keys, the rows beyond the first of each, and examples.

    Two steps, both exact: group by a 64-bit hash of (entity, time) — a fixed 8-byte key instead of
    text, so the hash table stays small — and, only when some hash occurs more than once, group the
    rows with those hashes by the real key (so a hash collision is never mistaken for a duplicate).
    Rows without an entity (nameless iot points) belong to no entity and have no key to repeat.
    """
    key = f'hash({sql_ident(entity)}, epoch_ns("time"))'
    named = f"{sql_ident(entity)} IS NOT NULL"
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE candidates AS SELECT {key} AS h FROM read_parquet({glob}) "
        f"WHERE {named} GROUP BY h HAVING count(*) > 1"
    )
    keys, extra, dups = 0, 0, pd.DataFrame({"entity": [], "time": [], "n": []})
    if con.execute("SELECT count(*) FROM candidates").fetchone()[0]:
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE dup AS SELECT {sql_ident(entity)}::VARCHAR AS entity, "
            f'epoch_ns("time") AS time, count(*) AS n FROM read_parquet({glob}) '
            f"WHERE {named} AND {key} IN (SELECT h FROM candidates) GROUP BY ALL HAVING count(*) > 1"
        )
        keys, extra = con.execute("SELECT count(*), coalesce(sum(n - 1), 0) FROM dup").fetchone()
        dups = con.execute(
            f"SELECT entity, time, n FROM dup ORDER BY entity, time LIMIT {int(duplicate_examples)}"
        ).df()
        con.execute("DROP TABLE dup")
    con.execute("DROP TABLE candidates")
    return keys, extra, dups
