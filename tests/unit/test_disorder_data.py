"""Late, out-of-order and repeated rows (``workload.disorder``), their parameters, and the views of
the rows each keeping leaves (``workload.kept``)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pyarrow.parquet as pq
import pytest
from disorder_shape import DISORDER

from tsbench.spec import RunSpec
from tsbench.workload.dataset import Dataset, dataset_folder, ensure_dataset
from tsbench.workload.dataset_spec import DatasetSpec, SpecError
from tsbench.workload.disorder import update_free_tail_ns
from tsbench.workload.kept import Keeps, kept_rows_sql, kept_view
from tsbench.workload.live_rows import LiveRows
from tsbench.workload.stored_rows import stored_rows

SHAPE = {"scale": 20, "end": "2016-01-01T06:00:00Z", "seed": 3}


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Dataset, Dataset]:
    """The same data in time order, and arriving with late rows and copies."""
    cache = tmp_path_factory.mktemp("disorder")
    base, _ = ensure_dataset(DatasetSpec.parse(**SHAPE), cache)
    disordered, _ = ensure_dataset(DatasetSpec.parse(**SHAPE, **DISORDER), cache)
    return base, disordered


def _arrived(dataset: Dataset) -> list[tuple]:
    """Rows in file order: (position, hostname, time ns, usage_user)."""
    table = dataset.read("cpu", ["hostname", "time", "usage_user"])
    hosts = table.column("hostname").to_pylist()
    times = table.column("time").cast("int64").to_pylist()
    values = table.column("usage_user").to_pylist()
    return list(zip(range(len(hosts)), hosts, times, values, strict=True))


def test_every_row_arrives_and_copies_are_the_asked_share(pair: tuple[Dataset, Dataset]) -> None:
    base, disordered = pair
    rows = base.rows["cpu"]
    copies = disordered.rows["cpu"] - rows
    assert 0.08 * rows < copies < 0.12 * rows  # 5 % + 5 % (less the update-free tail)
    con = duckdb.connect()
    missing = con.execute(
        f"SELECT count(*) FROM (SELECT * FROM read_parquet('{base.glob('cpu')}') EXCEPT ALL "
        f"SELECT * FROM read_parquet('{disordered.glob('cpu')}'))"
    ).fetchone()[0]
    assert missing == 0
    assert disordered.copies and not base.copies


def test_late_rows_arrive_after_later_rows_within_the_bound(pair: tuple[Dataset, Dataset]) -> None:
    base, disordered = pair
    times = np.array([t for _, _, t, _ in _arrived(disordered)])
    newest_before = np.maximum.accumulate(times)
    behind = np.concatenate([[0], newest_before[:-1] - times[1:]])
    late_share = (behind > 0).mean()
    assert 0.05 < late_share < 0.2, late_share  # 10 % late, plus copies arriving after their time
    assert disordered.lateness_ns == behind.max() <= 600 * 10**9
    assert base.lateness_ns == 0


def test_a_copy_comes_after_its_original_and_an_update_halves_it(pair: tuple[Dataset, Dataset]) -> None:
    base, disordered = pair
    original = {(h, t): v for _, h, t, v in _arrived(base)}
    seen: dict[tuple, list[int]] = {}
    for _, host, at, value in _arrived(disordered):
        seen.setdefault((host, at), []).append(value)
    updated = 0
    tail_from = disordered.end_ns - update_free_tail_ns(disordered.end_ns - disordered.start_ns)
    for key, values in seen.items():
        assert values[0] == original[key], key  # the first to arrive is the row itself
        for copy in values[1:]:
            assert copy in (original[key], original[key] // 2), (key, values)
            if copy != original[key]:
                updated += 1
                assert key[1] < tail_from, "a row of the update-free tail was updated"
    assert updated > 0


def test_each_keeping_leaves_its_rows(pair: tuple[Dataset, Dataset]) -> None:
    base, disordered = pair
    counts = {keeps: stored_rows(disordered, keeps=keeps)["cpu"] for keeps in Keeps}
    assert counts[Keeps.ALL] == disordered.rows["cpu"]
    assert counts[Keeps.LAST] == base.rows["cpu"] < counts[Keeps.DISTINCT] < counts[Keeps.ALL]
    con = duckdb.connect()
    last = kept_rows_sql(disordered.glob("cpu"), "hostname", Keeps.LAST)
    halved = con.execute(
        f"SELECT count(*) FROM {last} k JOIN read_parquet('{base.glob('cpu')}') b USING (hostname, time) "
        "WHERE k.usage_user <> b.usage_user"
    ).fetchone()[0]
    assert halved > 0  # the last write of an updated row is the update
    assert kept_view(Keeps.LAST, copies=False) is Keeps.ALL
    assert stored_rows(base, keeps=Keeps.LAST) == base.rows


def test_the_live_rows_follow_the_arrival_order_and_bound_the_frontier(pair: tuple[Dataset, Dataset]) -> None:
    _, disordered = pair
    rows = LiveRows(disordered, 500, disordered.rows["cpu"])
    assert rows.in_arrival_order
    sent_after: list[int] = []
    batches = list(iter(rows.take, None))
    for i, batch in enumerate(batches):
        later = [b.first_ns for b in batches[i:]]
        assert min(later) >= batch.floor_ns  # no row handed out from here on is older
        sent_after.append(batch.floor_ns)
    assert sent_after == sorted(sent_after)
    assert sum(b.rows for b in batches) == disordered.rows["cpu"]


def test_without_disorder_the_dataset_keeps_its_address(
    pair: tuple[Dataset, Dataset], tmp_path: Path
) -> None:
    plain = DatasetSpec.parse(**SHAPE)
    assert "late_fraction" not in plain.dataset_key()
    assert dataset_folder(plain, tmp_path) != dataset_folder(DatasetSpec.parse(**SHAPE, **DISORDER), tmp_path)
    base, disordered = pair  # no column was added: the files' schema is the use case's
    assert pq.read_schema(disordered.files("cpu")[0]) == pq.read_schema(base.files("cpu")[0])


def test_bad_disorder_parameters_are_named_at_once() -> None:
    with pytest.raises(SpecError) as raised:
        RunSpec.parse(
            targets=["postgres"],
            late_fraction=1.5,
            duplicate_fraction=0.7,
            update_fraction=0.6,
            lateness="10m",
            max_lateness="1m",
            ingestion="per-host-runs",
        )
    fields = {field for field, _ in raised.value.problems}
    assert {"late_fraction", "update_fraction", "max_lateness", "ingestion"} <= fields, raised.value
    with pytest.raises(SpecError) as raised:
        RunSpec.parse(targets=["postgres"], duplicate_fraction=0.1, max_lateness="2d")
    assert [f for f, _ in raised.value.problems] == ["max_lateness"]


def test_updates_on_a_last_write_target_need_one_connection_per_host() -> None:
    """InfluxDB keeps the last write of an instant: workers sharing a queue could apply an update
    before its original, so the run is refused up front unless hosts stay on one connection."""
    with pytest.raises(SpecError) as raised:
        RunSpec.parse(targets=["postgres", "influxdb"], workers=2, **DISORDER)
    [(field, message)] = raised.value.problems
    assert field == "hash_workers" and "influxdb" in message and "postgres" not in message
    RunSpec.parse(targets=["postgres", "influxdb"], workers=2, hash_workers=True, **DISORDER)
    RunSpec.parse(targets=["influxdb"], workers=1, **DISORDER)
    RunSpec.parse(targets=["postgres"], workers=4, **DISORDER)  # every row is kept: order is moot
    RunSpec.parse(targets=["influxdb"], workers=4, **{**DISORDER, "update_fraction": 0})
