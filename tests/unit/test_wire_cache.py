"""Wire-ready load bodies: encoded once per dataset and format, content-addressed, reused, the
same bytes whether one or several processes encode them, and loaded by the driver unchanged."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tsbench.measure import wire_cache
from tsbench.measure.load import load
from tsbench.measure.sink import NullTarget
from tsbench.measure.wire_cache import ensure_wire_cache
from tsbench.spec import load_options
from tsbench.targets.base import Capabilities
from tsbench.targets.postgres.target import PostgresTarget
from tsbench.targets.questdb.target import QuestDBTarget
from tsbench.workload.dataset import Dataset


def _no_wire(folder: str, names: list[str]) -> list[str]:
    return ["wire"] if "wire" in names else []


def _sent(cache: wire_cache.WireCache) -> list[bytes]:
    return [body.data for body in cache.bodies()]


def test_built_once_then_reused_with_the_rows_of_the_dataset(small_dataset: Dataset, tmp_path: Path) -> None:
    # a copy without the caches other tests built in the shared dataset (with xdist, in any order)
    small_dataset = Dataset.open(shutil.copytree(small_dataset.path, tmp_path / "dataset", ignore=_no_wire))
    built = ensure_wire_cache(small_dataset, QuestDBTarget, 5_000)
    again = ensure_wire_cache(small_dataset, QuestDBTarget, 5_000)
    assert built is not None and again is not None
    assert not built.reused and again.reused and built.path == again.path
    assert built.manifest["rows"] == sum(small_dataset.rows.values()) == 103_680
    assert built.manifest["bodies"] == 21 and (built.facts().encode_cpu_s or 0) > 0
    assert built.manifest["bytes_stored"] == built.manifest["bytes_sent"]  # small: stored as sent
    assert built.manifest["codec"] == "none"
    other = ensure_wire_cache(small_dataset, QuestDBTarget, 10_000)
    assert other is not None and other.path != built.path  # batch size is part of the address


def test_bodies_are_the_formats_own_encoding_in_ingestion_order(small_dataset: Dataset) -> None:
    cache = ensure_wire_cache(small_dataset, PostgresTarget, 5_000)
    assert cache is not None
    wire = PostgresTarget.wire_format(small_dataset.use_case, small_dataset.tags())
    expected = [
        payload.data
        for batch in small_dataset.iter_batches("cpu", 5_000)
        for payload in wire.encode("cpu", batch)
    ]
    assert _sent(cache) == expected


def test_several_processes_write_the_same_bodies(
    small_dataset: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    single = ensure_wire_cache(small_dataset, QuestDBTarget, 4_000)
    monkeypatch.setattr(load_options, "PARALLEL_FROM_ROWS", 0)
    monkeypatch.setattr(wire_cache, "FORMAT", "tsbench-wire/1+parallel-test")  # a new address
    parallel = ensure_wire_cache(small_dataset, QuestDBTarget, 4_000)
    assert single is not None and parallel is not None and parallel.path != single.path
    assert parallel.manifest["processes"] >= 2 and single.manifest["processes"] == 1
    assert _sent(parallel) == _sent(single)


def test_a_larger_dataset_is_stored_compressed_and_read_back_the_same(
    small_dataset: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = ensure_wire_cache(small_dataset, QuestDBTarget, 6_000)
    monkeypatch.setattr(wire_cache, "STORED_RAW_UP_TO_ROWS", 100_000)  # below its 103,680 rows
    monkeypatch.setattr(wire_cache, "FORMAT", "tsbench-wire/2+lz4-test")  # a new address
    packed = ensure_wire_cache(small_dataset, QuestDBTarget, 6_000)
    assert plain is not None and packed is not None and packed.manifest["codec"] == "lz4"
    assert packed.manifest["bytes_stored"] < packed.manifest["bytes_sent"] == plain.manifest["bytes_sent"]
    assert _sent(packed) == _sent(plain)


def test_partitions_keep_every_host_with_one_owner(small_dataset: Dataset) -> None:
    cache = ensure_wire_cache(small_dataset, QuestDBTarget, 5_000, partitions=3)
    assert cache is not None
    hosts: dict[int, set[bytes]] = {}
    for body in cache.bodies():
        lines = body.data.split(b"\n")
        hosts.setdefault(body.owner, set()).update(line.split(b",", 2)[1] for line in lines if line)
    assert sorted(hosts) == [0, 1, 2]
    assert sum(len(h) for h in hosts.values()) == 12 and set.union(*hosts.values()).__len__() == 12


def test_a_half_built_cache_is_never_taken(small_dataset: Dataset) -> None:
    cache = ensure_wire_cache(small_dataset, PostgresTarget, 7_000)
    assert cache is not None
    (cache.path / "manifest.json").unlink()  # as if the build had stopped before its last step
    rebuilt = ensure_wire_cache(small_dataset, PostgresTarget, 7_000)
    assert rebuilt is not None and not rebuilt.reused
    assert np.array_equal(rebuilt.records(), cache.records())


def test_targets_without_a_wire_format_have_no_cache(small_dataset: Dataset) -> None:
    assert ensure_wire_cache(small_dataset, NullTarget, 5_000) is None


class Receiver(NullTarget):
    """Counts the bytes and bodies its writers are sent, per worker thread."""

    capabilities = Capabilities(durable=False, compression="none")

    def create_schema(self) -> None:
        self.bodies: dict[str, list[bytes]] = {}
        self.lock = threading.Lock()

    def writer(self):  # type: ignore[override]
        outer = self

        class Writer:
            def send(self, measurement: str, payload: bytes) -> None:
                with outer.lock:
                    outer.bodies.setdefault(threading.current_thread().name, []).append(payload)

            def write(self, measurement: str, batch: pa.RecordBatch) -> int:
                raise AssertionError("a wire load never encodes")

            def close(self) -> None:
                pass

        return Writer()


def test_the_driver_sends_every_body_unchanged(small_dataset: Dataset, tmp_path: Path) -> None:
    cache = ensure_wire_cache(small_dataset, QuestDBTarget, 5_000)
    assert cache is not None
    target = Receiver(None, small_dataset.use_case, small_dataset.tags())
    target.create_schema()
    result = load(target, small_dataset, workers=2, batch_size=5_000, wire=cache)
    assert result.source == "wire" and result.rows == 103_680 and result.metrics == 1_036_800
    sent = [body for bodies in target.bodies.values() for body in bodies]
    assert sorted(sent) == sorted(_sent(cache))
    facts = result.to_json()
    assert facts["client_cpu_s"] > 0 and 0 < facts["client_share"] <= 1
    assert facts["client_cpu_s_per_million_rows"] == pytest.approx(result.client_cpu_s / 0.10368)
