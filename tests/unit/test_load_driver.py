"""The load driver: counts, metrics, hash-workers routing, failure isolation, progress lines."""

from __future__ import annotations

import logging
import threading
from collections import defaultdict

import pyarrow as pa
import pytest

from tsbench.measure.load import LoadError, load
from tsbench.measure.sink import NullTarget
from tsbench.workload.dataset import Dataset


class Recording(NullTarget):
    """A sink that remembers which worker thread got which hosts, and can fail on cue."""

    fail_after: int | None = None

    def create_schema(self) -> None:
        self.hosts_by_thread: dict[str, set[str]] = defaultdict(set)
        self.rows = 0
        self.lock = threading.Lock()
        self.flushed = False

    def writer(self):  # type: ignore[override]
        outer = self

        class Writer:
            def write(self, measurement: str, batch: pa.RecordBatch) -> int:
                with outer.lock:
                    if outer.fail_after is not None and outer.rows >= outer.fail_after:
                        raise ConnectionError("server went away")
                    outer.rows += batch.num_rows
                    outer.hosts_by_thread[threading.current_thread().name].update(
                        batch.column("hostname").to_pylist()
                    )
                return batch.num_rows

            def close(self) -> None:
                pass

        return Writer()

    def flush(self) -> None:
        self.flushed = True


def test_counts_rows_and_metrics(small_dataset: Dataset) -> None:
    target = NullTarget(None, small_dataset.use_case, small_dataset.tags())
    result = load(target, small_dataset, workers=3, batch_size=1_000)
    assert result.rows == 103_680 and result.metrics == 1_036_800
    assert result.seconds >= result.write_seconds > 0 and result.rows_per_s > 0
    assert result.to_json()["metrics_per_s"] == pytest.approx(10 * result.rows_per_s)


def test_hash_workers_route_each_host_to_one_worker(small_dataset: Dataset) -> None:
    target = Recording(None, small_dataset.use_case, small_dataset.tags())
    target.create_schema()
    result = load(target, small_dataset, workers=3, batch_size=500, hash_workers=True)
    assert result.rows == target.rows == 103_680 and target.flushed
    owners = list(target.hosts_by_thread.values())
    assert len(owners) == 3
    assert sum(len(hosts) for hosts in owners) == 12  # every host seen by exactly one worker


def test_without_hashing_workers_share_hosts(small_dataset: Dataset) -> None:
    target = Recording(None, small_dataset.use_case, small_dataset.tags())
    target.create_schema()
    load(target, small_dataset, workers=2, batch_size=500)
    assert all(len(hosts) == 12 for hosts in target.hosts_by_thread.values())


def test_a_failing_writer_stops_the_load_with_a_clear_error(small_dataset: Dataset) -> None:
    target = Recording(None, small_dataset.use_case, small_dataset.tags())
    target.create_schema()
    target.fail_after = 20_000
    with pytest.raises(
        LoadError, match=r"failed after 20,000 rows: worker \d: ConnectionError: server went away"
    ):
        load(target, small_dataset, workers=2, batch_size=1_000)
    assert not target.flushed


def test_progress_lines_in_the_log(small_dataset: Dataset, caplog: pytest.LogCaptureFixture) -> None:
    class Slow(Recording):
        def writer(self):  # type: ignore[override]
            inner = super().writer()

            class Writer:
                def write(self, measurement: str, batch: pa.RecordBatch) -> int:
                    threading.Event().wait(0.01)
                    return inner.write(measurement, batch)

                def close(self) -> None:
                    pass

            return Writer()

    target = Slow(None, small_dataset.use_case, small_dataset.tags())
    target.create_schema()
    with caplog.at_level(logging.INFO, logger="tsbench.load"):
        result = load(target, small_dataset, workers=1, batch_size=2_000, progress_s=0.1)
    lines = [r.getMessage() for r in caplog.records]
    assert any("rows/s (last" in line and "metrics/s mean" in line for line in lines)
    assert lines[-1].startswith("load null: done, 103,680 rows in ")
    assert result.progress and result.progress[-1]["rows"] <= 103_680
