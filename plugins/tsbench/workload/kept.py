"""What a database keeps when a row is sent more than once (``workload.disorder``'s copies): each
target declares one ``Keeps`` (``Capabilities.keeps``), and the oracle answers, and the row counts
are checked, over the rows that keeping leaves.

Keeping applies to named rows (rows of an entity). Nameless rows (iot points that lost their
truck) are kept as ``Capabilities.merges_nameless_instants`` says; no query reads them.
"""

from __future__ import annotations

from enum import Enum

from tsbench.workload.scan import sql_ident, sql_literal


class Keeps(Enum):
    """What is kept of the rows of one entity and instant, in arrival order."""

    ALL = "all"  # every row sent (plain append: a heap table, a MergeTree)
    DISTINCT = "distinct"  # each distinct row once (an identical copy is dropped, an update kept)
    LAST = "last"  # the last row sent (an upsert keyed by entity and time)

    @property
    def answers_view(self) -> str:
        """The name of its reference answers' view (``PointFolder.answers_over``; empty: all rows)."""
        return "" if self is Keeps.ALL else self.value

    @property
    def order_matters(self) -> bool:
        """Whether what is kept depends on the order the copies arrive in (an update must come
        after its original): one connection per entity, or ordered writes, keep it."""
        return self is Keeps.LAST

    @property
    def meaning(self) -> str:
        return {
            Keeps.ALL: "every row sent, copies included",
            Keeps.DISTINCT: "each distinct row once: an identical copy is dropped, an updated one kept",
            Keeps.LAST: "the last row sent per entity and instant (an update replaces the row)",
        }[self]


def kept_view(keeps: Keeps, copies: bool) -> Keeps:
    """The view a database's answers are checked against: without copies in the data, every
    keeping holds the same rows, so the one view of all rows."""
    return keeps if copies else Keeps.ALL


def kept_rows_sql(glob: str, entity_key: str, keeps: Keeps) -> str:
    """A DuckDB relation of the rows of the Parquet files ``glob`` that ``keeps`` leaves; the
    files' order is the order rows arrived in (file name, then row number)."""
    source = f"read_parquet({sql_literal(glob)})"
    if keeps is Keeps.ALL:
        return source
    if keeps is Keeps.DISTINCT:
        return f"(SELECT DISTINCT * FROM {source})"
    numbered = f"read_parquet({sql_literal(glob)}, filename = true, file_row_number = true)"
    latest = "ORDER BY filename DESC, file_row_number DESC"
    return (
        f"(SELECT * EXCLUDE (filename, file_row_number) FROM {numbered} QUALIFY row_number() "
        f"OVER (PARTITION BY {sql_ident(entity_key)}, time {latest}) = 1)"
    )
