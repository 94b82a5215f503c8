"""TSBS's two data-file formats (``FORMATS``): their names, the timescaledb header, shared rules.

``influx`` (InfluxDB line protocol; also what the QuestDB and VictoriaMetrics loaders read)
    One line per row: ``<measurement>,<tag>=<value>,… <field>=<value>,… <timestamp ns>``. Tags in TSBS
    order: the entity's tags (``UseCase.entity_tags``), then the measurement's extra tags (diskio
    ``serial``, disk ``path``/``fstype``, …). Integers carry an ``i`` suffix; floats are written in
    plain decimal notation with the fewest digits that read back exactly (Go's ``'f', -1``: ``1500``,
    ``0.25``, never an exponent). A missing (null) field is left out of the line. A row whose fields
    are *all* missing is not written at all: TSBS's serializer drops such a point because InfluxDB
    rejects a line without fields, so in this format such iot rows are lost (a round trip returns
    the other rows). An empty tag value (how an imported TSBS iot row with a cleared tag is kept) is
    left out of the line, as TSBS leaves out nil tags.

``timescaledb`` (also TSBS's ClickHouse format)
    A header: one ``tags,<tag> <type>,…`` line with the entity's tags, then one
    ``<measurement>,<field>,…`` line per measurement sorted by name, then an empty line (for cpu-only
    that is 3 lines). Then two lines per row: ``tags,<tag>=<value>,…`` and
    ``<measurement>,<timestamp ns>,<value>,…`` (values in the header's field order, numbers as in the
    influx format without the ``i``). A missing value is written as nothing (``…,12,,7,…``) and a
    missing tag as ``<tag>=``, as TSBS writes nil values. Decisions for what the header does not
    describe: devops extra tags follow the entity tags on each row's ``tags`` line (as TSBS writes
    every tag of a point there; its loader keeps the ones not in the header as additional tags).
    For iot, TSBS's trucks carry ``load_capacity``, ``fuel_capacity`` and
    ``nominal_fuel_consumption`` as (float32) *tags*: this format lists them in the header's tags
    line and writes them on the ``tags`` line, and they are not in the measurements' field lists;
    in the influx format TSBS writes them as the first fields. tsbench models them as the first
    three fields of ``readings`` and ``diagnostics`` (see ``usecases``), so they move between the
    row's fields and its tags line here.
"""

from __future__ import annotations

from typing import Literal

from tsbench.workload.usecases import UseCase

Format = Literal["influx", "timescaledb"]
# TSBS's file-format names (the "timescaledb" format is a text layout, not the database).
INFLUX_FORMAT = "influx"
TIMESCALEDB_FORMAT = "timescaledb"
FORMATS: tuple[str, ...] = (INFLUX_FORMAT, TIMESCALEDB_FORMAT)
# Fields that TSBS's iot trucks carry as (float32) tags: written on the tags line in the
# timescaledb format, as the first fields in the influx format.
TAG_FIELDS: dict[str, tuple[str, ...]] = {
    "iot": ("load_capacity", "fuel_capacity", "nominal_fuel_consumption"),
}
TAG_FIELD_TYPE = "float32"


class TsbsFormatError(ValueError):
    """A TSBS file (or a dataset to export) cannot be read or written; the message names the line."""


def check_format(fmt: str) -> None:
    """Raise ``ValueError`` unless ``fmt`` is one of ``FORMATS``."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown TSBS format {fmt!r}; known: {', '.join(FORMATS)}")


def tag_fields_of(use_case: UseCase) -> tuple[str, ...]:
    """The use case's fields that the timescaledb format carries on the tags line (``TAG_FIELDS``)."""
    return TAG_FIELDS.get(use_case.name, ())


def timescaledb_header(use_case: UseCase) -> str:
    """The header TSBS writes before the rows in the timescaledb format (ends with the empty line)."""
    tag_fields = tag_fields_of(use_case)
    tags = [f"{tag} string" for tag in use_case.entity_tags] + [f"{t} {TAG_FIELD_TYPE}" for t in tag_fields]
    lines = [",".join(["tags", *tags])]
    for m in sorted(use_case.measurements, key=lambda m: m.name):
        lines.append(",".join([m.name, *(f for f in m.field_names if f not in tag_fields)]))
    return "\n".join(lines) + "\n\n"
