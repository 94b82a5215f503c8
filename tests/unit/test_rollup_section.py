"""The report's Rollups table sets a rollup's bytes beside its own raw table's, not the whole
footprint (which counts WAL and other tables)."""

from __future__ import annotations

from tsbench.report.sections.rollups import rolled_up_table_bytes
from tsbench.results.model import FootprintFigures


def testrolled_up_table_bytes_are_the_rolled_up_tables_own() -> None:
    postgres_like = FootprintFigures(
        bytes=1_000,
        parts={"cpu.table": 500, "cpu.indexes": 200, "cpu.toast": 0, "tags.table": 50, "wal": 250},
    )
    assert rolled_up_table_bytes(postgres_like, "cpu") == 700
    assert rolled_up_table_bytes(FootprintFigures(bytes=900, parts={"cpu": 600, "mem": 300}), "cpu") == 600
    assert rolled_up_table_bytes(FootprintFigures(bytes=900), "cpu") == 900  # no part per table: the whole
    assert (
        rolled_up_table_bytes(FootprintFigures(bytes=900, parts={"cpu": 600}), "") == 900
    )  # an older result
    assert rolled_up_table_bytes(None, "cpu") is None
