"""The rows a database must hold after loading a dataset, given the limits of its data model.

Most targets store every row: the dataset's counts. A target may declare (``Capabilities``) that it
cannot represent a row without any field (InfluxDB's line protocol rejects such a line, so it is
never sent), or one without any field and without an entity (a nameless iot point that lost every
field: QuestDB's line protocol needs a tag or a field), or that nameless rows (iot points without
``name``) of one measurement and instant become one point (InfluxDB keys a point by series and
time). Rows sent more than once are kept as the target's ``Keeps`` says (``workload.kept``). Then
one exact DuckDB scan per measurement of the dataset's Parquet files counts what the model keeps.
"""

from __future__ import annotations

from tsbench.workload.dataset import Dataset
from tsbench.workload.kept import Keeps, kept_view
from tsbench.workload.scan import bounded_connection, sql_ident, sql_literal


def stored_rows(
    dataset: Dataset,
    keeps_fieldless: bool = True,
    merges_nameless: bool = False,
    keeps_bare: bool = True,
    keeps: Keeps = Keeps.ALL,
) -> dict[str, int]:
    """Rows per measurement the target must hold after a complete load of ``dataset``: named rows
    (with a field, unless ``keeps_fieldless``) as ``keeps`` keeps copies of them, plus nameless rows
    (with a field, unless ``keeps_fieldless`` and ``keeps_bare``), the latter counted per distinct
    instant when ``merges_nameless``."""
    keeps = kept_view(keeps, dataset.copies)
    if keeps_fieldless and keeps_bare and not merges_nameless and keeps is Keeps.ALL:
        return dict(dataset.rows)
    if dataset.extract is not None:  # streams only data without copies, nameless or fieldless rows
        return dict(dataset.rows)
    key = sql_ident(dataset.use_case.entity_key)
    counts: dict[str, int] = {}
    con = bounded_connection()
    try:
        for name, rows in dataset.rows.items():
            fields = dataset.use_case.measurement(name).field_names
            fielded = "(" + " OR ".join(f"{sql_ident(f)} IS NOT NULL" for f in fields) + ")"
            named = f"{key} IS NOT NULL AND " + ("true" if keeps_fieldless else fielded)
            nameless = f"{key} IS NULL AND " + ("true" if keeps_fieldless and keeps_bare else fielded)
            count = "count(DISTINCT time)" if merges_nameless else "count(*)"
            source = f"read_parquet({sql_literal(dataset.glob(name))})"
            text = (
                f"SELECT ({_named_count(source, named, key, keeps)}) "
                f"+ (SELECT {count} FROM {source} WHERE {nameless})"
            )
            counts[name] = int(con.execute(text).fetchone()[0]) if rows else 0
    finally:
        con.close()
    return counts


def _named_count(source: str, where: str, key: str, keeps: Keeps) -> str:
    """SQL counting the named rows of ``source`` that match ``where`` and that ``keeps`` keeps (a
    copy has its original's fields present or missing alike, so the filter and the keeping
    commute)."""
    if keeps is Keeps.ALL:
        return f"SELECT count(*) FROM {source} WHERE {where}"
    if keeps is Keeps.DISTINCT:
        return f"SELECT count(*) FROM (SELECT DISTINCT * FROM {source} WHERE {where})"
    return f"SELECT count(DISTINCT ({key}, time)) FROM {source} WHERE {where}"
