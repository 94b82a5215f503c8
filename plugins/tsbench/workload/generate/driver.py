"""Turns a simulator's chunks into Arrow record batches in ingestion order.

Ingestion patterns: ``interleaved`` (epoch-major, then entity: TSBS's default) and
``per-host-runs`` (inside each block of ``run_length`` epochs, all rows of one entity, then the
next: study A's de-interleaved pattern). Both hold exactly the same rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from tsbench.workload.dataset_spec import DatasetSpec
from tsbench.workload.generate.common import Chunk, plan_chunks, row_order
from tsbench.workload.generate.simulator import MeasurementChunk, Simulator
from tsbench.workload.usecases import UseCase

TAG_TYPE = pa.dictionary(pa.int32(), pa.string())


def _simulators() -> dict[str, type[Simulator]]:
    from tsbench.workload.generate.cpu import CpuOnly
    from tsbench.workload.generate.devops import Devops
    from tsbench.workload.generate.iot import Iot
    from tsbench.workload.generate.ycsb import Ycsb

    return {cls.use_case_name: cls for cls in (CpuOnly, Devops, Iot, Ycsb)}


def _dictionary_column(values_per_entity: np.ndarray, entity_index: np.ndarray) -> pa.DictionaryArray:
    dictionary, codes = np.unique(values_per_entity.astype(str), return_inverse=True)
    return pa.DictionaryArray.from_arrays(
        pa.array(codes.astype(np.int32)[entity_index]), pa.array(dictionary, pa.string())
    )


@dataclass
class GeneratedData:
    """A dataset being generated: the entity tags table and a stream of (measurement, batch)."""

    spec: DatasetSpec
    use_case: UseCase
    tags: pa.Table
    chunks: list[Chunk]
    batches: Iterator[tuple[str, pa.RecordBatch]]


def generate(spec: DatasetSpec, target_rows: int | None = None) -> GeneratedData:
    """Start generating ``spec``; memory stays bounded by one chunk (about 1 M rows)."""
    simulator = _simulators()[spec.use_case](spec)
    use_case = simulator.use_case
    tags = simulator.entity_tags()
    tags_table = pa.table({name: pa.array(tags[name], pa.string()) for name in use_case.entity_tags})
    run_length = spec.run_length if spec.ingestion == "per-host-runs" else 1
    kwargs = {"target_rows": target_rows} if target_rows else {}
    chunks = plan_chunks(spec.epochs, spec.scale, run_length, **kwargs)
    names = pa.array(tags[use_case.entity_key], pa.string())
    extra = {m.name: simulator.extra_tags(m.name) for m in use_case.measurements}
    batches = _batches(spec, simulator, chunks, run_length, names, extra)
    return GeneratedData(spec, use_case, tags_table, chunks, batches)


def _batches(
    spec: DatasetSpec,
    simulator: Simulator,
    chunks: list[Chunk],
    run_length: int,
    names: pa.Array,
    extra: dict[str, dict[str, np.ndarray]],
) -> Iterator[tuple[str, pa.RecordBatch]]:
    use_case = simulator.use_case
    schemas = {m.name: use_case.row_schema(m.name) for m in use_case.measurements}
    for chunk in chunks:
        epochs = spec.start + (chunk.e0 + np.arange(chunk.ne, dtype=np.int64)) * spec.interval
        times = np.repeat(epochs, chunk.nh)
        entities = np.tile(np.arange(chunk.h0, chunk.h0 + chunk.nh, dtype=np.int32), chunk.ne)
        order = row_order(chunk.ne, chunk.nh, run_length)
        for name, values in simulator.simulate(chunk).items():
            index = _emit_index(values, chunk, order)
            yield (
                name,
                _record_batch(schemas[name], use_case, values, times, entities, index, names, extra[name]),
            )


def _emit_index(values: MeasurementChunk, chunk: Chunk, order: np.ndarray | None) -> np.ndarray | None:
    """Positions (into the interleaved rows) in emission order, after drops and delays.

    A point delayed by ``d`` epochs is emitted right after the point that the same entity would
    emit ``d`` epochs later (at the latest, at the end of the chunk), so delays keep the chosen
    ingestion pattern (interleaved or per-host runs) for every other point.
    """
    if values.keep is None and values.delay is None:
        return order
    base = order if order is not None else np.arange(chunk.rows, dtype=np.int64)
    if values.delay is not None:
        position = np.empty(chunk.rows, dtype=np.int64)
        position[base] = np.arange(chunk.rows)  # where each interleaved row is emitted
        epoch = np.repeat(np.arange(chunk.ne), chunk.nh)
        entity = np.tile(np.arange(chunk.nh), chunk.ne)
        delay = values.delay.reshape(-1)
        target = np.minimum(epoch + delay, chunk.ne - 1) * chunk.nh + entity
        key = 2 * position[target] + (delay > 0)
        base = base[np.argsort(key[base], kind="stable")]
    if values.keep is not None:
        base = base[values.keep.reshape(-1)[base]]
    return base


def _record_batch(
    schema: pa.Schema,
    use_case: UseCase,
    values: MeasurementChunk,
    times: np.ndarray,
    entities: np.ndarray,
    index: np.ndarray | None,
    names: pa.Array,
    extra: dict[str, np.ndarray],
) -> pa.RecordBatch:
    def pick(array: np.ndarray) -> np.ndarray:
        flat = array.reshape(-1)
        return flat if index is None else flat[index]

    picked_entities = pick(entities)
    nameless = None if values.nameless is None else pick(values.nameless)
    columns: list[pa.Array] = [
        pa.array(pick(times), schema.field("time").type),
        pa.DictionaryArray.from_arrays(pa.array(picked_entities, mask=nameless), names),
    ]
    for tag in schema.names[2 : 2 + len(extra)]:
        columns.append(_dictionary_column(extra[tag], picked_entities))
    for name in schema.names[2 + len(extra) :]:
        kind = schema.field(name).type
        mask = values.nulls.get(name)
        columns.append(pa.array(pick(values.fields[name]), kind, mask=None if mask is None else pick(mask)))
    return pa.RecordBatch.from_arrays(columns, schema=schema)
