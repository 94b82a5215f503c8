"""The rows a database must hold after loading a dataset, given the limits of its data model.

Most targets store every row: the dataset's counts. A target may declare (``Capabilities``) that it
cannot represent a row without any field (InfluxDB's line protocol rejects such a line, so it is
never sent), or one without any field and without an entity (a nameless iot point that lost every
field: QuestDB's line protocol needs a tag or a field), or that nameless rows (iot points without
``name``) of one measurement and instant become one point (InfluxDB keys a point by series and
time). Then one exact DuckDB scan per measurement of the dataset's Parquet files counts what the
model keeps.
"""

from __future__ import annotations

from tsbench.workload.dataset import Dataset
from tsbench.workload.scan import bounded_connection, sql_ident, sql_literal


def stored_rows(
    dataset: Dataset,
    keeps_fieldless: bool = True,
    merges_nameless: bool = False,
    keeps_bare: bool = True,
) -> dict[str, int]:
    """Rows per measurement the target must hold after a complete load of ``dataset``: named rows
    (with a field, unless ``keeps_fieldless``) plus nameless rows (with a field, unless
    ``keeps_fieldless`` and ``keeps_bare``), the latter counted per distinct instant when
    ``merges_nameless``."""
    if keeps_fieldless and keeps_bare and not merges_nameless:
        return dict(dataset.rows)
    key = sql_ident(dataset.use_case.entity_key)
    counts: dict[str, int] = {}
    con = bounded_connection()
    try:
        for name, rows in dataset.rows.items():
            fields = dataset.use_case.measurement(name).field_names
            fielded = "(" + " OR ".join(f"{sql_ident(f)} IS NOT NULL" for f in fields) + ")"
            named = "true" if keeps_fieldless else fielded
            nameless = "true" if keeps_fieldless and keeps_bare else fielded
            count = "count(DISTINCT time)" if merges_nameless else "count(*)"
            text = (
                f"SELECT count(*) FILTER (WHERE {key} IS NOT NULL AND {named}) "
                f"+ {count} FILTER (WHERE {key} IS NULL AND {nameless}) "
                f"FROM read_parquet({sql_literal(dataset.glob(name))})"
            )
            counts[name] = int(con.execute(text).fetchone()[0]) if rows else 0
    finally:
        con.close()
    return counts
