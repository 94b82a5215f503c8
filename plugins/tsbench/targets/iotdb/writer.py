"""IoTDB's load path: each Arrow batch becomes one aligned tablet per device, all of a batch's
tablets sent in one ``insertTablets`` call of the session protocol (binary columns, no text).

A device is ``root.tsbs.<measurement>.`<entity>``` (with one more level per extra tag of the
measurement, in its order), its series the measurement's fields, declared by the measurement's
aligned schema template (``target.create_schema``) and activated by a device's first write. A null
field is marked in the tablet's bitmap. Rows without an entity (iot's nameless trucks) share one
device per measurement, ``NAMELESS``: their rows of one instant become one row there, holding each
field any of them had (the model ``target.py`` declares). A null extra tag is refused."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from iotdb.utils.BitMap import BitMap
from iotdb.utils.IoTDBConstants import TSDataType
from iotdb.utils.NumpyTablet import NumpyTablet

from tsbench.targets.base import Endpoint, TargetError
from tsbench.targets.iotdb.client import endpoint_session
from tsbench.targets.iotdb.dialect import DATABASE, NS_PER_MS, node
from tsbench.workload.usecases import UseCase

TYPES = {pa.int64(): TSDataType.INT64, pa.float64(): TSDataType.DOUBLE}
TYPE_NAMES = {TSDataType.INT64: "INT64", TSDataType.DOUBLE: "DOUBLE"}
SEPARATOR = "\x00"  # between a device's key values while rows are grouped (never inside a tag)
NAMELESS = "~nameless"  # the device of a measurement's rows without an entity (no generator's name)


def series_type(arrow_type: pa.DataType) -> TSDataType:
    """The IoTDB type a field of ``arrow_type`` is stored as (TargetError for one it has no type for)."""
    try:
        return TYPES[arrow_type]
    except KeyError:
        raise TargetError(f"iotdb: no series type for a field of Arrow type {arrow_type}") from None


def device_of(measurement: str, keys: list[str]) -> str:
    """The device of one entity (and its extra tags' values, in the measurement's order)."""
    return ".".join([DATABASE, node(measurement), *(node(key) for key in keys)])


def milliseconds(measurement: str, times_ns: np.ndarray) -> np.ndarray:
    """Instants in ns as the server's milliseconds (TargetError for one that is not a whole ms)."""
    whole, rest = np.divmod(times_ns, NS_PER_MS)
    if rest.any():
        raise TargetError(f"iotdb keeps instants to the millisecond: rows of {measurement!r} are finer")
    return whole


def _bitmap(valid: pa.Array) -> BitMap | None:
    """The tablet bitmap of a column's nulls (None when it has none): bit ``i % 8`` of byte ``i // 8``
    marks row ``i``; the client sends ``rows // 8 + 1`` bytes whatever the count, as its ``BitMap``
    holds them."""
    if valid.null_count == 0:
        return None
    mask = np.asarray(valid.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    bitmap = BitMap(len(mask))
    packed = np.packbits(mask, bitorder="little").tolist()
    bitmap.bits[: len(packed)] = packed
    return bitmap


class IoTDBWriter:
    """One load worker on its own session."""

    def __init__(self, endpoint: Endpoint, use_case: UseCase):
        self.use_case = use_case
        self.session = endpoint_session(endpoint)

    def tablets(self, measurement: str, batch: pa.RecordBatch) -> list[NumpyTablet]:
        """One aligned tablet per device of ``batch``, rows in time order within each."""
        shape = self.use_case.measurement(measurement)
        keys = [self.use_case.entity_key, *shape.extra_tags]
        table = pa.Table.from_batches([batch])
        columns = [pc.cast(table.column(key), pa.string()) for key in keys]
        columns[0] = columns[0].fill_null(NAMELESS)
        if any(column.null_count for column in columns):
            raise TargetError(f"iotdb: rows of {measurement!r} lacking an extra tag cannot be placed")
        joined = columns[0] if len(columns) == 1 else pc.binary_join_element_wise(*columns, SEPARATOR)
        order = pc.sort_indices(
            pa.table({"key": joined, "time": table.column("time")}),
            [("key", "ascending"), ("time", "ascending")],
        )
        table, joined = table.take(order), joined.take(order)
        key_values = joined.to_numpy(zero_copy_only=False)
        starts = np.flatnonzero(np.r_[True, key_values[1:] != key_values[:-1]])
        ends = np.r_[starts[1:], len(key_values)]
        names = list(shape.field_names)
        types = [series_type(table.schema.field(name).type) for name in names]
        times = milliseconds(measurement, pc.cast(table.column("time"), pa.int64()).to_numpy())
        fields = [table.column(name).combine_chunks() for name in names]
        values = [field.fill_null(0).to_numpy() for field in fields]
        tablets = []
        for start, end in zip(starts, ends, strict=True):
            device = device_of(measurement, str(key_values[start]).split(SEPARATOR))
            maps = [_bitmap(field.slice(start, end - start)) for field in fields]
            tablet_values = [column[start:end] for column in values]
            bitmaps = maps if any(m is not None for m in maps) else None
            tablets.append(NumpyTablet(device, names, types, tablet_values, times[start:end], bitmaps))
        return tablets

    def write(self, measurement: str, batch: pa.RecordBatch) -> int:
        """Send the batch's tablets in one call; the rows it holds once the server accepted them."""
        if batch.num_rows == 0:
            return 0
        tablets = self.tablets(measurement, batch)
        try:
            self.session.insert_aligned_tablets(tablets)
        except Exception as error:  # the client raises RuntimeError("<status>: <message>"), or thrift's
            raise TargetError(f"iotdb: insertTablets of {measurement!r} failed: {error}") from None
        return batch.num_rows

    def close(self) -> None:
        self.session.close()
