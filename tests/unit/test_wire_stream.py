"""Streamed wire bodies: encoded during the load by worker processes, the cache's bytes in the
cache's order, nothing stored, the encoders' CPU counted in the load's client CPU, and a worker's
failure or an early stop never leaves a process behind."""

from __future__ import annotations

import multiprocessing
import shutil
from pathlib import Path

import pytest
from test_wire_cache import Receiver

from tsbench.measure.load import load
from tsbench.measure.wire_cache import ensure_wire_cache
from tsbench.measure.wire_stream import WireStream, wire_bodies
from tsbench.spec import RunSpec, load_options
from tsbench.spec.load_options import WIRE_STREAM_FROM_ROWS
from tsbench.targets.influxdb.target import InfluxDBTarget
from tsbench.targets.postgres.target import PostgresTarget
from tsbench.targets.questdb.target import QuestDBTarget
from tsbench.workload.dataset import Dataset


def _children() -> set[int]:
    """This process's live multiprocessing children (other tests in the worker may own some)."""
    return {child.pid for child in multiprocessing.active_children()}


def _stream(dataset: Dataset, target_type: type, batch_size: int, partitions: int = 1) -> WireStream:
    stream = wire_bodies(dataset, target_type, batch_size, partitions, streamed=True)
    assert isinstance(stream, WireStream)
    return stream


@pytest.mark.parametrize("processes_from_rows", [10**9, 0], ids=["one process", "several processes"])
@pytest.mark.parametrize("partitions", [1, 3])
@pytest.mark.parametrize("target_type", [QuestDBTarget, PostgresTarget, InfluxDBTarget])
def test_streamed_bodies_are_the_cached_ones_in_the_same_order(
    small_dataset: Dataset,
    monkeypatch: pytest.MonkeyPatch,
    target_type: type,
    partitions: int,
    processes_from_rows: int,
) -> None:
    cache = ensure_wire_cache(small_dataset, target_type, 5_000, partitions)
    assert cache is not None
    monkeypatch.setattr(load_options, "PARALLEL_FROM_ROWS", processes_from_rows)
    stream = _stream(small_dataset, target_type, 5_000, partitions)
    assert (stream.processes > 1) == (processes_from_rows == 0)
    streamed = [(b.measurement, b.owner, b.data, b.rows, b.metrics) for b in stream.bodies()]
    cached = [(b.measurement, b.owner, b.data, b.rows, b.metrics) for b in cache.bodies()]
    assert streamed == cached
    facts = stream.facts()
    assert facts.streamed and facts.bytes_stored == 0 and (facts.encode_cpu_s or 0) > 0
    for key in ("bodies", "rows", "bytes_sent"):
        assert getattr(facts, key) == cache.manifest[key]
    assert facts.to_json().keys() <= cache.facts().to_json().keys() | {"streamed"}  # one record, both forms


def test_a_stream_stores_nothing_and_its_load_counts_the_encoders_cpu(
    small_dataset: Dataset, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    copy = Dataset.open(shutil.copytree(small_dataset.path, tmp_path / "dataset", ignore=_no_wire))
    monkeypatch.setattr(load_options, "PARALLEL_FROM_ROWS", 0)
    before = _children()
    stream = _stream(copy, QuestDBTarget, 5_000)
    target = Receiver(None, copy.use_case, copy.tags())
    target.create_schema()
    result = load(target, copy, workers=2, batch_size=5_000, wire=stream)
    assert result.source == "wire-streamed" and result.rows == 103_680 and result.metrics == 1_036_800
    assert stream.encoding_cpu_s_in_window > 0
    assert result.client_cpu_s >= stream.encoding_cpu_s_in_window  # the encoders' CPU is the client's
    assert not (copy.path / "wire").exists()
    assert _children() <= before


def _no_wire(folder: str, names: list[str]) -> list[str]:
    return ["wire"] if "wire" in names else []


def test_a_reader_that_stops_early_stops_the_encoders(
    small_dataset: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(load_options, "PARALLEL_FROM_ROWS", 0)
    before = _children()
    bodies = _stream(small_dataset, QuestDBTarget, 1_000).bodies()
    first = next(bodies)
    assert first.rows == 1_000 and len(_children() - before) >= 2  # the encoders run
    bodies.close()
    assert _children() <= before


def test_an_encoder_that_fails_fails_the_stream_with_its_error(
    small_dataset: Dataset, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    copy = Dataset.open(shutil.copytree(small_dataset.path, tmp_path / "dataset", ignore=_no_wire))
    for parquet in copy.path.rglob("*.parquet"):
        if parquet.name != "tags.parquet":
            parquet.write_bytes(b"not parquet")
    monkeypatch.setattr(load_options, "PARALLEL_FROM_ROWS", 0)
    before = _children()
    with pytest.raises(RuntimeError, match=r"encoding .* failed in a worker process"):
        list(_stream(copy, QuestDBTarget, 5_000).bodies())
    assert _children() <= before


def test_auto_streams_from_the_declared_size() -> None:
    small = RunSpec(targets=["questdb"], scale=10)
    assert not small.streams_wire_bodies
    assert RunSpec(targets=["questdb"], scale=10, wire_bodies="streamed").streams_wire_bodies
    hosts = -(-WIRE_STREAM_FROM_ROWS // 8_640)  # rows of a day per host at 10 s
    large = RunSpec(targets=["questdb"], scale=hosts)
    assert large.rows_total >= WIRE_STREAM_FROM_ROWS and large.streams_wire_bodies
    assert not RunSpec(targets=["questdb"], scale=hosts, wire_bodies="cached").streams_wire_bodies
