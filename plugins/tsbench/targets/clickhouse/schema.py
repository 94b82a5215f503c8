"""ClickHouse tables of a use case: one MergeTree table per measurement, entity tags denormalised.

Columns, in this order: ``time DateTime64(9, 'UTC')`` (the dataset's nanosecond instants, exactly),
the entity key and the entity's other tags, the measurement's extra tags (all
``LowCardinality(String)``), then the fields (``Int64`` / ``Float64``, ``Nullable(…)`` where the use
case's data has nulls). ``ENGINE = MergeTree PARTITION BY toDate(time) ORDER BY (<entity key>, time)``.
In a use case with nameless rows (iot) the entity's tags are ``LowCardinality(Nullable(String))`` (a
nameless row has NULL in all of them) and the table needs ``SETTINGS allow_nullable_key = 1``, since
the entity key is in the sorting key. Reasons in README.md ("Schema", "Nameless rows").
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from tsbench.workload.usecases import FLOAT, INT, Measurement, UseCase

TIME = "time"
TIME_TYPE = "DateTime64(9, 'UTC')"
TAG_TYPE = "LowCardinality(String)"
# Entity tags of use cases with nameless rows: NULL is one more dictionary entry of the column (no
# separate null map, unlike Nullable(String)).
NULLABLE_TAG_TYPE = "LowCardinality(Nullable(String))"
NULLABLE_KEY_SETTINGS = "allow_nullable_key = 1"  # a Nullable column in ORDER BY needs it
FIELD_TYPES: dict[pa.DataType, str] = {INT: "Int64", FLOAT: "Float64"}
# Per-column compression (ClickHouse's default, LZ4, everywhere else): within a part, rows are sorted
# by (entity, time), so consecutive timestamps of one entity differ by the sampling interval and
# DoubleDelta turns them into runs of zeros. Measured (cpu, 100 hosts × 1 day, one part): the time
# column takes 10.6 kB instead of 6.1 MB (0.01 instead of 7.1 B/row) at no measurable load cost.
TIME_CODEC = "CODEC(DoubleDelta, LZ4)"
PARTITION_BY = f"toDate({TIME})"

# Use cases whose data leaves fields empty (the iot simulator drops fields of some readings, as TSBS's
# does); their fields are Nullable. Elsewhere a null would be a bug, and the writer refuses it rather
# than let ClickHouse store the type's default (0) in its place.
NULLABLE_USE_CASES = frozenset({"iot"})


@dataclass(frozen=True)
class Column:
    """One column of a measurement table: name, ClickHouse type, optional ``CODEC(…)`` clause."""

    name: str
    type: str
    codec: str = ""

    @property
    def nullable(self) -> bool:
        return self.type.startswith(("Nullable(", "LowCardinality(Nullable("))

    def ddl(self) -> str:
        return " ".join(part for part in (self.name, self.type, self.codec) if part)


def fields_nullable(use_case: UseCase) -> bool:
    return use_case.name in NULLABLE_USE_CASES


def table_columns(measurement: Measurement, use_case: UseCase) -> list[Column]:
    """The columns of ``measurement``'s table, in table order."""
    columns = [Column(TIME, TIME_TYPE, TIME_CODEC)]
    entity_type = NULLABLE_TAG_TYPE if use_case.nameless_rows else TAG_TYPE
    columns += [Column(tag, entity_type) for tag in use_case.entity_tags]
    columns += [Column(tag, TAG_TYPE) for tag in measurement.extra_tags]
    nullable = fields_nullable(use_case)
    for name, kind in measurement.fields:
        base = FIELD_TYPES[kind]
        columns.append(Column(name, f"Nullable({base})" if nullable else base))
    return columns


def sorting_key(use_case: UseCase) -> tuple[str, str]:
    """``ORDER BY`` of every table: the entity key, then time."""
    return (use_case.entity_key, TIME)


def quote_ident(name: str) -> str:
    """A backquoted ClickHouse identifier."""
    return "`" + name.replace("\\", "\\\\").replace("`", "\\`") + "`"


def table_ddl(measurement: Measurement, use_case: UseCase, database: str | None = None) -> str:
    """``CREATE TABLE`` for one measurement (``database``-qualified when given)."""
    name = quote_ident(measurement.name)
    if database:
        name = f"{quote_ident(database)}.{name}"
    body = ",\n    ".join(column.ddl() for column in table_columns(measurement, use_case))
    settings = f"\nSETTINGS {NULLABLE_KEY_SETTINGS}" if use_case.nameless_rows else ""
    return (
        f"CREATE TABLE {name} (\n    {body}\n) ENGINE = MergeTree\n"
        f"PARTITION BY {PARTITION_BY}\nORDER BY ({', '.join(sorting_key(use_case))}){settings}"
    )
