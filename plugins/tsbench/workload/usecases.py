"""Use cases and their measurements: names, tags and fields in TSBS order (YCSB-TS's for ycsb-ts).

A use case simulates ``scale`` entities (hosts, trucks, metrics). Each entity carries fixed tags
(``entity_tags``, the first being its name, e.g. ``hostname``). Each measurement is one table whose
rows are ``(time, <entity key>, <extra tags…>, <fields…>)``; the entity's other tags live once per
entity in the dataset's ``tags`` table. A use case names the measurement its queries read, the
fields they may read (in order) and the query families it answers (``query_types.QueryType.family``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

INT = pa.int64()
FLOAT = pa.float64()

CPU_FIELDS = (
    "usage_user",
    "usage_system",
    "usage_idle",
    "usage_nice",
    "usage_iowait",
    "usage_irq",
    "usage_softirq",
    "usage_steal",
    "usage_guest",
    "usage_guest_nice",
)

HOST_TAGS = (
    "hostname",
    "region",
    "datacenter",
    "rack",
    "os",
    "arch",
    "team",
    "service",
    "service_version",
    "service_environment",
)

TRUCK_TAGS = ("name", "fleet", "driver", "model", "device_version")
IOT_FLEETS = ("East", "West", "North", "South")  # TSBS's FleetChoices; iot queries draw one of them


@dataclass(frozen=True)
class Measurement:
    """One measurement (table): extra per-series tags and typed fields, in line-protocol order."""

    name: str
    fields: tuple[tuple[str, pa.DataType], ...]
    extra_tags: tuple[str, ...] = ()

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.fields)

    def arrow_schema(self, entity_key: str, nameless_rows: bool = False) -> pa.Schema:
        """Arrow schema of this measurement's rows (time in ns UTC; tags dictionary-encoded); the
        entity key is nullable when the use case has ``nameless_rows``."""
        tag_type = pa.dictionary(pa.int32(), pa.string())
        columns = [pa.field("time", pa.timestamp("ns", tz="UTC"), nullable=False)]
        columns.append(pa.field(entity_key, tag_type, nullable=nameless_rows))
        columns += [pa.field(tag, tag_type, nullable=False) for tag in self.extra_tags]
        columns += [pa.field(name, kind) for name, kind in self.fields]
        return pa.schema(columns)


@dataclass(frozen=True)
class UseCase:
    """A named workload: entity naming, entity tags, measurements, and what queries it supports."""

    name: str
    entity_prefix: str
    entity_tags: tuple[str, ...]
    measurements: tuple[Measurement, ...]
    query_families: tuple[str, ...] = ()
    queried: str = "cpu"  # the measurement every query reads
    entities: str = "hosts"  # what its scale counts, for people
    # Rows may lack the entity key (TSBS's iot generator clears the ``name`` tag of a few points on
    # purpose): such a row is stored with a NULL / missing key and belongs to no entity.
    nameless_rows: bool = False
    groups: tuple[str, ...] = ()  # the values of the tag a query may pick entities by (iot: fleets)
    # Any field of a row may be missing (TSBS's iot generator leaves fields out of points): no field
    # is sure to be in every row, so a target that counts rows by such a field cannot count them.
    gapped_fields: bool = False

    @property
    def entity_key(self) -> str:
        return self.entity_tags[0]

    @property
    def query_fields(self) -> tuple[str, ...]:
        """The fields queries read, in order (a type reading M fields reads the first M)."""
        return self.measurement(self.queried).field_names if self.query_families else ()

    def measurement(self, name: str) -> Measurement:
        for item in self.measurements:
            if item.name == name:
                return item
        raise KeyError(f"use case {self.name!r} has no measurement {name!r}")

    def row_schema(self, measurement: str) -> pa.Schema:
        """Arrow schema of one measurement's rows in this use case (see ``Measurement.arrow_schema``)."""
        return self.measurement(measurement).arrow_schema(self.entity_key, self.nameless_rows)

    def tags_schema(self) -> pa.Schema:
        return pa.schema([pa.field(tag, pa.string(), nullable=False) for tag in self.entity_tags])


def per_row(per_entry: np.ndarray, indices: pa.Array, nameless: int) -> np.ndarray:
    """A dictionary column's per-entry values (e.g. each entry's row in the tags table) taken per
    row by its ``indices``; ``nameless`` where an index is null (a row without an entity)."""
    if not indices.null_count:
        return per_entry[indices.to_numpy(zero_copy_only=False)]
    rows = per_entry[indices.fill_null(0).to_numpy(zero_copy_only=False)]
    rows[indices.is_null().to_numpy(zero_copy_only=False)] = nameless
    return rows


def _ints(*names: str) -> tuple[tuple[str, pa.DataType], ...]:
    return tuple((name, INT) for name in names)


CPU = Measurement("cpu", _ints(*CPU_FIELDS))

DEVOPS_MEASUREMENTS = (
    CPU,
    Measurement(
        "diskio",
        _ints("reads", "writes", "read_bytes", "write_bytes", "read_time", "write_time", "io_time"),
        ("serial",),
    ),
    Measurement(
        "disk",
        (
            *_ints("total", "free", "used"),
            ("used_percent", FLOAT),
            *_ints("inodes_total", "inodes_free", "inodes_used"),
        ),
        ("path", "fstype"),
    ),
    Measurement(
        "kernel",
        _ints(
            "boot_time",
            "interrupts",
            "context_switches",
            "processes_forked",
            "disk_pages_in",
            "disk_pages_out",
        ),
    ),
    Measurement(
        "mem",
        (
            *_ints("total", "available", "used", "free", "cached", "buffered"),
            ("used_percent", FLOAT),
            ("available_percent", FLOAT),
            ("buffered_percent", FLOAT),
        ),
    ),
    Measurement(
        "net",
        _ints(
            "bytes_sent",
            "bytes_recv",
            "packets_sent",
            "packets_recv",
            "err_in",
            "err_out",
            "drop_in",
            "drop_out",
        ),
        ("interface",),
    ),
    Measurement(
        "nginx",
        _ints("accepts", "active", "handled", "reading", "requests", "waiting", "writing"),
        ("port", "server"),
    ),
    Measurement(
        "postgresl",
        _ints(
            "numbackends",
            "xact_commit",
            "xact_rollback",
            "blks_read",
            "blks_hit",
            "tup_returned",
            "tup_fetched",
            "tup_inserted",
            "tup_updated",
            "tup_deleted",
            "conflicts",
            "temp_files",
            "temp_bytes",
            "deadlocks",
            "blk_read_time",
            "blk_write_time",
        ),
    ),
    Measurement(
        "redis",
        (
            *_ints(
                "uptime_in_seconds",
                "total_connections_received",
                "expired_keys",
                "evicted_keys",
                "keyspace_hits",
                "keyspace_misses",
                "instantaneous_ops_per_sec",
                "instantaneous_input_kbps",
                "instantaneous_output_kbps",
                "connected_clients",
                "used_memory",
                "used_memory_rss",
                "used_memory_peak",
                "used_memory_lua",
                "rdb_changes_since_last_save",
                "sync_full",
                "sync_partial_ok",
                "sync_partial_err",
                "pubsub_channels",
                "pubsub_patterns",
                "latest_fork_usec",
                "connected_slaves",
                "master_repl_offset",
                "repl_backlog_active",
                "repl_backlog_size",
                "repl_backlog_histlen",
            ),
            ("mem_fragmentation_ratio", FLOAT),
            *_ints("used_cpu_sys", "used_cpu_user", "used_cpu_sys_children", "used_cpu_user_children"),
        ),
        ("port", "server"),
    ),
)

_IOT_COMMON = (("load_capacity", FLOAT), ("fuel_capacity", FLOAT), ("nominal_fuel_consumption", FLOAT))
IOT_MEASUREMENTS = (
    Measurement(
        "readings",
        _IOT_COMMON
        + tuple(
            (name, FLOAT)
            for name in (
                "latitude",
                "longitude",
                "elevation",
                "velocity",
                "heading",
                "grade",
                "fuel_consumption",
            )
        ),
    ),
    Measurement(
        "diagnostics",
        (*_IOT_COMMON, ("fuel_state", FLOAT), ("current_load", FLOAT), ("status", INT)),
    ),
)

# YCSB-TS (study D): a record is a timestamp, three string tags and one double, written to one of a
# few metrics (the study's 8 containers); the metrics are the entities, the tags ride on every row.
YCSB_TAGS = ("tag0", "tag1", "tag2")
YCSB = Measurement("usermetric", (("value", FLOAT),), YCSB_TAGS)

_CPU_FAMILIES = ("devops", "ycsb-ts")
USE_CASES: dict[str, UseCase] = {
    "cpu-only": UseCase("cpu-only", "host_", HOST_TAGS, (CPU,), _CPU_FAMILIES),
    "devops": UseCase("devops", "host_", HOST_TAGS, DEVOPS_MEASUREMENTS, _CPU_FAMILIES),
    "iot": UseCase(
        "iot",
        "truck_",
        TRUCK_TAGS,
        IOT_MEASUREMENTS,
        ("iot",),
        queried="readings",
        entities="trucks",
        nameless_rows=True,
        groups=IOT_FLEETS,
        gapped_fields=True,
    ),
    "ycsb-ts": UseCase(
        "ycsb-ts", "metric_", ("metric",), (YCSB,), ("ycsb-ts",), queried="usermetric", entities="metrics"
    ),
}


def get_use_case(name: str) -> UseCase:
    try:
        return USE_CASES[name]
    except KeyError:
        raise ValueError(f"unknown use case {name!r}; known: {', '.join(USE_CASES)}") from None
