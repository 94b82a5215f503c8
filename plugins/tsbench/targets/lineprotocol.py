"""Line protocol — InfluxDB's, which QuestDB's ILP also reads — built vectorised from Arrow batches,
and the wire format of its request bodies. Shared by the targets that load through it (InfluxDB,
QuestDB); no database's own facts live here (each passes its name for error messages).

One line per row::

    <measurement>,<entity tags…>,<extra tags…> <field>=<value>[i],… <timestamp ns>\\n

Entity tags come from the dataset's tags table in the use case's order (TSBS order: ``hostname,
region, datacenter, rack, os, arch, team, service, service_version, service_environment``), then the
measurement's extra tags (diskio ``serial``, disk ``path``/``fstype``, …); or, with
``tag_order="sorted"``, all tags sorted by key (InfluxDB's own order, which it then needs not restore
while parsing). Integers carry the ``i`` suffix; floats are Arrow's shortest round-trip text
(exponent notation such as ``1e-7`` is valid line protocol). A null field is left out of its line;
a row with no field at all cannot be represented (a line without fields is rejected) and is not
sent. An empty or null tag value is left out of the line (``tag=`` is rejected), and so are all
entity tags of a row without an entity (a nameless iot point). Names and tag
values are not escaped: they are checked instead, and one containing a character that would need
escaping (space, comma, ``=``, quote, backslash, newline) raises ``TargetError``.

Every Arrow kernel here works on whole columns and releases the GIL; Python runs once per batch,
never per row. The lines of a batch are one contiguous Arrow string buffer, sent as is or
gzip-compressed (``zlib`` releases the GIL too).
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tsbench.targets.base import Payload, TargetError
from tsbench.workload.usecases import Measurement, UseCase, per_row

FORBIDDEN = r"[ ,=\"\\\n\r]"  # characters that would need escaping in a tag key, tag value or name
MAX_LINES_PER_REQUEST = 100_000  # bigger batches are sent in several requests (bounded memory)
TAG_ORDERS = ("tsbs", "sorted")
_NULL_AS_EMPTY: dict[str, Any] = {"null_handling": "replace", "null_replacement": ""}  # a left-out tag


def check_names(system: str, kind: str, values: pa.Array) -> None:
    """Raise if any value would need escaping in line protocol (we never escape, we refuse)."""
    bad = pc.match_substring_regex(values, FORBIDDEN)
    if bad.true_count:
        value = values.filter(bad)[0].as_py()
        raise TargetError(
            f"{system}: {kind} {value!r} contains a character that line protocol would need escaped "
            "(space, comma, '=', quote, backslash or newline)"
        )


def _tag_pairs(system: str, tag: str, values: pa.Array) -> pa.Array:
    """``,tag=value`` per value; null where the value is null or empty (the tag is left out)."""
    values = values.cast(pa.string())
    check_names(system, f"tag {tag} value", values.drop_null())
    empty = pc.equal(values, "")
    if empty.true_count:
        values = pc.if_else(empty, pa.scalar(None, pa.string()), values)
    return pc.binary_join_element_wise(f",{tag}=", values, "")


def _value_strings(system: str, column: pa.Array, name: str) -> pa.Array:
    if pa.types.is_floating(column.type):
        finite = pc.is_finite(column)
        if finite.false_count - column.null_count > 0:
            raise TargetError(f"{system}: field {name} holds NaN or infinity, which line protocol lacks")
    return pc.cast(column, pa.string())


def _merge_literals(parts: list[Any]) -> list[Any]:
    merged: list[Any] = []
    for part in parts:
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] += part
        else:
            merged.append(part)
    return merged


class LineBuilder:
    """Turns record batches of one use case into line protocol (thread-safe: no shared mutation
    except an idempotent per-dictionary cache)."""

    def __init__(
        self,
        system: str,
        use_case: UseCase,
        tags: pa.Table,
        tag_order: str = "tsbs",
        fieldless_lines: bool = False,
    ):
        """``system`` names the database in error messages. ``tag_order`` "tsbs": entity tags in
        the use case's order, then the measurement's extra tags; "sorted": all tags sorted by key,
        the order InfluxDB keeps them in the series key (it then needs not sort them).
        ``fieldless_lines``: a row without any field becomes a line of tags and timestamp (QuestDB
        stores it with NULL fields) instead of being left out (InfluxDB rejects such a line); a
        nameless row without any field has no tag either and is left out in any case."""
        if tag_order not in TAG_ORDERS:
            raise ValueError(f"tag_order must be one of {TAG_ORDERS}, not {tag_order!r}")
        self.system = system
        self.use_case = use_case
        self.tag_order = tag_order
        self.fieldless_lines = fieldless_lines
        key = use_case.entity_key
        self.names = tags.column(key).combine_chunks().cast(pa.string())
        pairs = {t: _tag_pairs(system, t, tags.column(t).combine_chunks()) for t in use_case.entity_tags}
        for m in use_case.measurements:
            check_names(system, "measurement name", pa.array([m.name, *m.extra_tags, *m.field_names]))
        check_names(system, "tag name", pa.array(list(use_case.entity_tags)))
        # Per measurement, its tags in line order as segments: a run of entity tags becomes one
        # string per entity (",hostname=host_0,region=…", taken per row), an extra tag its name.
        self.plans: dict[str, list[pa.Array | str]] = {}
        for m in use_case.measurements:
            order = [*use_case.entity_tags, *m.extra_tags]
            if tag_order == "sorted":
                order.sort()
            plan: list[pa.Array | str] = []
            run: list[pa.Array] = []
            for tag in order:
                if tag in pairs:
                    run.append(pairs[tag])
                    continue
                if run:
                    plan.append(pc.binary_join_element_wise(*run, "", **_NULL_AS_EMPTY))
                    run = []
                plan.append(tag)
            if run:
                plan.append(pc.binary_join_element_wise(*run, "", **_NULL_AS_EMPTY))
            self.plans[m.name] = plan
        self._cache: tuple[pa.Array, np.ndarray] | None = None

    def _entity_rows(self, column: pa.Array) -> pa.Array:
        """Row of the tags table for every row (via the batch's dictionary, never per row); null
        for a row without an entity (a nameless iot point: its line carries no entity tag)."""
        if not pa.types.is_dictionary(column.type):
            column = pc.dictionary_encode(column)
        dictionary = column.dictionary
        cached = self._cache  # one read: another writer may replace it concurrently
        if cached is None or not cached[0].equals(dictionary):
            found = pc.index_in(dictionary.cast(pa.string()), value_set=self.names)
            if found.null_count:
                missing = dictionary.filter(pc.is_null(found))[0].as_py()
                raise TargetError(f"{self.system}: entity {missing!r} is not in the dataset's tags table")
            cached = (dictionary, found.to_numpy(zero_copy_only=False))
            self._cache = cached
        indices = column.indices
        nameless = indices.is_null().to_numpy(zero_copy_only=False) if indices.null_count else None
        return pa.array(per_row(cached[1], indices, 0), mask=nameless)

    def lines(self, m: Measurement, batch: pa.RecordBatch) -> pa.Array:
        """One string per representable row (see ``fieldless_lines``), each ending in a newline."""
        entity_rows = self._entity_rows(batch.column(self.use_case.entity_key))
        parts: list[Any] = [m.name]
        for segment in self.plans[m.name]:
            if not isinstance(segment, str):
                parts.append(segment.take(entity_rows))
                continue
            column = batch.column(segment)
            if not pa.types.is_dictionary(column.type):
                column = pc.dictionary_encode(column)
            parts.append(_tag_pairs(self.system, segment, column.dictionary).take(column.indices))
        stamps = pc.cast(pc.cast(batch.column("time"), pa.int64()), pa.string())
        fields = [(n, kind, _value_strings(self.system, batch.column(n), n)) for n, kind in m.fields]
        if not any(values.null_count for _, _, values in fields):
            separator = " "
            for name, kind, values in fields:
                parts += [f"{separator}{name}=", values]
                separator = "i," if pa.types.is_integer(kind) else ","
            parts += [separator[:-1] + " ", stamps, "\n"]
            return pc.binary_join_element_wise(*_merge_literals(parts), "", **_NULL_AS_EMPTY)
        # ",name=value" per field, null where the value is null; nulls joined as "" (not with
        # null_handling="skip", which drops rows whose inputs are all null in pyarrow ≤ 26)
        pieces = [
            pc.binary_join_element_wise(f",{name}=", values, "i" if pa.types.is_integer(kind) else "", "")
            for name, kind, values in fields
        ]
        joined = pc.binary_join_element_wise(*pieces, "", **_NULL_AS_EMPTY)
        fielded = pc.not_equal(joined, "")
        section = pc.binary_join_element_wise(" ", pc.utf8_slice_codeunits(joined, 1), "")  # 1st comma → " "
        if fielded.false_count:
            section = pc.if_else(fielded, section, "")
        lines = pc.binary_join_element_wise(*parts, section, " ", stamps, "\n", "", **_NULL_AS_EMPTY)
        # a line needs a field, or (``fieldless_lines``) at least a tag: a nameless row without
        # any field has neither and cannot be written
        keep = pc.or_(fielded, pc.is_valid(entity_rows)) if self.fieldless_lines else fielded
        return lines if not keep.false_count else lines.filter(keep)


def body(lines: pa.Array) -> memoryview:
    """The lines' bytes as one buffer (zero-copy: they are contiguous in the string array)."""
    if not len(lines):
        return memoryview(b"")
    offsets = np.frombuffer(lines.buffers()[1], np.int32, len(lines) + 1, lines.offset * 4)
    data = lines.buffers()[2]
    return memoryview(data)[int(offsets[0]) : int(offsets[-1])]


def gzip_bytes(data: memoryview, level: int) -> bytes:
    packer = zlib.compressobj(level, zlib.DEFLATED, 31)  # wbits 31: gzip container
    return packer.compress(data) + packer.flush()


class LineFormat:
    """Wire-ready ``/write`` bodies: a batch's lines (``MAX_LINES_PER_REQUEST`` per body), gzipped
    at ``gzip_level`` (0: plain text) as the writer sends them."""

    precompressed = True

    def __init__(self, builder: LineBuilder, gzip_level: int):
        self.builder = builder
        self.gzip_level = gzip_level
        fieldless = "keep" if builder.fieldless_lines else "drop"
        self.key = (
            f"line-protocol/{builder.tag_order}/fieldless-{fieldless}/gzip-{gzip_level}"
            f"/max-{MAX_LINES_PER_REQUEST}/2"  # 2: nameless rows without tags, bare rows left out
        )
        self.precompressed = bool(gzip_level)

    def encode(self, measurement: str, batch: pa.RecordBatch) -> list[Payload]:
        m = self.builder.use_case.measurement(measurement)
        payloads = []
        for start in range(0, batch.num_rows, MAX_LINES_PER_REQUEST):
            lines = self.builder.lines(m, batch.slice(start, MAX_LINES_PER_REQUEST))
            if len(lines):
                data = body(lines)
                packed = gzip_bytes(data, self.gzip_level) if self.gzip_level else bytes(data)
                payloads.append(Payload(packed, len(lines)))
        return payloads
