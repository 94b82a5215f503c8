"""GridDB's key-container model for tsbench: container names and column layouts.

* One TIME_SERIES container per entity per measurement, named ``<measurement>_<entity>``
  (``cpu_host_0``). Column 0 is the row key ``time`` (TIMESTAMP, millisecond precision, GridDB's
  default); then the measurement's extra tags as STRING (devops: one series per host, so constant
  within a container) and its fields as LONG (integers) or DOUBLE (floats), all nullable.
* One COLLECTION ``tsbench_tags`` for the entity tags: row key = the entity name (``hostname`` /
  ``name``), one STRING column per entity tag. Queries never need it (the entity of a row is its
  container); it keeps the dataset's tags in the database, as TSBS's GridDB schema did.
* Use cases with ``nameless_rows`` (iot): one COLLECTION ``<measurement>_nameless`` per measurement,
  without a row key, for the rows that have no entity (their instants need not be unique); the same
  columns as the TIME_SERIES containers, ``time`` included. An entity named ``nameless`` is refused.

GridDB compares container names without regard to ASCII case, so entity names differing only in case
cannot coexist; names use ASCII letters, digits, ``_``, ``-`` and ``.`` only (checked up front).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa

from tsbench.workload.usecases import FLOAT, INT, Measurement, UseCase

TIME = "time"  # the row key column of every measurement container
TAGS_CONTAINER = "tsbench_tags"
NAMELESS = "nameless"  # the suffix of the collection holding a measurement's rows without an entity
MILLIS_PER_NS = 1_000_000  # ns per GridDB TIMESTAMP unit (millisecond precision)

LONG = "LONG"
DOUBLE = "DOUBLE"
STRING = "STRING"

_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")


@dataclass(frozen=True)
class Column:
    name: str
    kind: str  # LONG, DOUBLE or STRING


@dataclass(frozen=True)
class Layout:
    """The non-key columns of one measurement's containers, in container order (key ``time`` first)."""

    measurement: str
    columns: tuple[Column, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)

    def kind(self, name: str) -> str:
        for column in self.columns:
            if column.name == name:
                return column.kind
        raise KeyError(f"{self.measurement} has no column {name!r}")


def _kind(arrow_type: pa.DataType) -> str:
    if arrow_type == INT:
        return LONG
    if arrow_type == FLOAT:
        return DOUBLE
    raise ValueError(f"no GridDB column kind for Arrow type {arrow_type}")


def layout(measurement: Measurement) -> Layout:
    columns = [Column(tag, STRING) for tag in measurement.extra_tags]
    columns += [Column(name, _kind(kind)) for name, kind in measurement.fields]
    return Layout(measurement.name, tuple(columns))


def tags_layout(use_case: UseCase) -> tuple[Column, ...]:
    """Columns of ``tsbench_tags`` (the first, the entity name, is its row key)."""
    return tuple(Column(tag, STRING) for tag in use_case.entity_tags)


def container_name(measurement: str, entity: str) -> str:
    return f"{measurement}_{entity}"


def nameless_container(measurement: str) -> str:
    """The COLLECTION holding ``measurement``'s rows that have no entity (no row key)."""
    return container_name(measurement, NAMELESS)


def check_names(use_case: UseCase, entities: Iterable[str]) -> list[str]:
    """The entity names as a list; ValueError naming the first entity GridDB could not keep apart."""
    names = list(entities)
    seen: dict[str, str] = {}
    for entity in names:
        if not _NAME.match(entity):
            raise ValueError(
                f"griddb: entity {entity!r} cannot be part of a container name "
                "(use ASCII letters, digits, '_', '-', '.')"
            )
        folded = entity.lower()
        if use_case.nameless_rows and folded == NAMELESS:
            raise ValueError(
                f"griddb: entity {entity!r} would share its containers' names with the collections "
                "of the rows without an entity (<measurement>_nameless)"
            )
        if folded in seen and seen[folded] != entity:
            raise ValueError(
                f"griddb: entities {seen[folded]!r} and {entity!r} differ only in case; GridDB "
                "container names are case-insensitive"
            )
        seen[folded] = entity
    for measurement in use_case.measurements:
        if not _NAME.match(measurement.name):
            raise ValueError(f"griddb: measurement {measurement.name!r} cannot be part of a container name")
    return names
