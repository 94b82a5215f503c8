"""Wire-ready bodies against the real servers: every row stored once, every answer the oracle's.

The load path of a comparison run (``TargetPhases.load``) sends bodies encoded before the timed
window (or, streamed, during it); this proves, per server, that those bytes are what the server
needs: row counts equal the dataset's and every query type's answers equal the oracle's, with shared
and hashed workers, cached and streamed.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from conftest import check_all_queries

from tsbench.measure.load import load
from tsbench.measure.wire_cache import ensure_wire_cache
from tsbench.measure.wire_stream import WireStream, wire_bodies
from tsbench.targets.registry import load_target
from tsbench.workload.dataset import Dataset

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("name", ["questdb", "postgres", "timescaledb", "influxdb"])
def test_wire_load_stores_every_row_and_answers_like_the_oracle(
    name: str, serve: Callable, small_dataset: Dataset
) -> None:
    wire = ensure_wire_cache(small_dataset, load_target(name), 4_000)
    hashed = ensure_wire_cache(small_dataset, load_target(name), 4_000, partitions=2)
    assert wire is not None and hashed is not None
    with serve(name, small_dataset) as (_, target):
        target.create_schema()
        result = load(target, small_dataset, workers=2, batch_size=4_000, hash_workers=True, wire=hashed)
        assert result.source == "wire" and result.rows == 103_680
        assert {m: target.row_count(m) for m in small_dataset.measurements} == small_dataset.rows
        target.create_schema()  # the comparison's shape: shared queue, then the queries
        result = load(target, small_dataset, workers=2, batch_size=4_000, wire=wire)
        assert result.rows == 103_680 and result.client_cpu_s < 0.5 * result.seconds * 2
        assert {m: target.row_count(m) for m in small_dataset.measurements} == small_dataset.rows
        target.create_schema()  # the same bodies streamed, encoded during the load: queried below
        stream = wire_bodies(small_dataset, load_target(name), 4_000, 2, streamed=True)
        assert isinstance(stream, WireStream)
        result = load(target, small_dataset, workers=2, batch_size=4_000, hash_workers=True, wire=stream)
        assert result.source == "wire-streamed" and result.rows == 103_680
        assert {m: target.row_count(m) for m in small_dataset.measurements} == small_dataset.rows
        nonempty = check_all_queries(target, small_dataset, per_type=1)
        assert sum(nonempty.values()) >= 15
