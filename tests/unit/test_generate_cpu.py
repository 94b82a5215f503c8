"""cpu-only data: the facts of WORKLOAD.md, checked statistically on real generated data."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from scipy import stats

from tsbench.spec import DatasetSpec
from tsbench.workload.dataset import Dataset, ensure_dataset
from tsbench.workload.generate import generate
from tsbench.workload.generate.common import ClampedWalk, plan_chunks, stream
from tsbench.workload.generate.cpu import REGIONS
from tsbench.workload.usecases import CPU, CPU_FIELDS, HOST_TAGS


def values(dataset: Dataset) -> tuple[pa.Table, np.ndarray]:
    table = dataset.read("cpu")
    return table, np.stack([table[f].to_numpy() for f in CPU_FIELDS])


def test_row_count_schema_and_order(day_dataset: Dataset) -> None:
    table, _ = values(day_dataset)
    assert table.num_rows == 864_000 == day_dataset.rows["cpu"]
    assert table.schema.equals(CPU.arrow_schema("hostname"), check_metadata=False)
    times = table["time"].cast(pa.int64()).to_numpy()
    hosts = table["hostname"].to_pylist()
    assert hosts[:3] == ["host_0", "host_1", "host_2"] and hosts[100] == "host_0"
    assert np.all(np.diff(times) >= 0)  # epoch-major
    assert np.all(times[:100] == times[0]) and times[100] - times[0] == 10 * 10**9


def test_unique_host_time(day_dataset: Dataset) -> None:
    table, _ = values(day_dataset)
    frame = table.select(["time", "hostname"]).to_pandas()
    assert not frame.duplicated().any()


def test_values_are_integers_in_range_with_tsbs_boundary_shares(day_dataset: Dataset) -> None:
    _, v = values(day_dataset)
    assert v.dtype == np.int64 and v.min() == 0 and v.max() == 100
    # WORKLOAD.md: about 1.6 % zeros and 0.6 % hundreds at scale 100 × 1 day
    assert 0.010 < (v == 0).mean() < 0.025
    assert 0.003 < (v == 100).mean() < 0.012


def test_steps_have_unit_sd_before_clamping() -> None:
    rng = stream(1, "test")
    walk = ClampedWalk(rng, 200, 0.0, 100.0, 1.0, k=10)
    before = walk.state.copy()
    out = walk.advance(rng, 2_000, 0, 200)
    series = np.concatenate([before[:, None, :], out], axis=1)  # (k, 1 + ne, nh)
    steps = np.diff(series, axis=1)
    inside = (series[:, :-1] > 5) & (series[:, :-1] < 95)  # far from the clamps
    assert abs(steps[inside].std() - 1.0) < 0.01
    assert abs(steps[inside].mean()) < 0.01


def test_emitted_steps_look_like_unit_normal(day_dataset: Dataset) -> None:
    _, v = values(day_dataset)
    per_host = v.reshape(10, -1, 100)  # (field, epoch, host)
    steps = np.diff(per_host, axis=1)
    interior = (per_host[:, :-1] > 5) & (per_host[:, :-1] < 95)
    # truncation adds two uniform fractional parts: var ≈ 1 + 1/6
    assert abs(steps[interior].std() - np.sqrt(1 + 1 / 6)) < 0.02


def test_tag_frequencies_are_uniform(dataset_cache) -> None:
    dataset, _ = ensure_dataset(DatasetSpec.parse(scale=20_000, end="2016-01-01T00:00:10Z"), dataset_cache)
    tags = dataset.tags().to_pandas()
    assert list(tags.columns) == list(HOST_TAGS)
    assert tags["hostname"].tolist()[:2] == ["host_0", "host_1"]
    for column, options in {
        "region": len(REGIONS),
        "rack": 100,
        "os": 3,
        "arch": 2,
        "team": 4,
        "service": 20,
        "service_version": 2,
        "service_environment": 3,
    }.items():
        counts = tags[column].value_counts()
        assert len(counts) == options, column
        assert stats.chisquare(counts.to_numpy()).pvalue > 1e-4, column
    for region, letters in REGIONS.items():
        centres = tags.loc[tags.region == region, "datacenter"]
        assert set(centres) == {region + letter for letter in letters}
        assert stats.chisquare(centres.value_counts().to_numpy()).pvalue > 1e-4, region


def test_same_spec_same_bytes_other_seed_other_data(tmp_path, day_dataset: Dataset) -> None:
    again, reused = ensure_dataset(DatasetSpec.parse(scale=100), tmp_path / "elsewhere")
    assert not reused
    assert [f.sha256 for f in again.manifest.files] == [f.sha256 for f in day_dataset.manifest.files]
    assert again.manifest.tags.sha256 == day_dataset.manifest.tags.sha256
    other, _ = ensure_dataset(DatasetSpec.parse(scale=100, seed=124), tmp_path / "elsewhere")
    assert other.path != again.path
    assert other.manifest.files[0].sha256 != again.manifest.files[0].sha256
    assert not other.read("cpu").equals(again.read("cpu"))


def _sorted(table: pa.Table) -> pa.Table:
    return table.cast(
        pa.schema(
            [
                (n, pa.string() if n == "hostname" else t)
                for n, t in zip(table.column_names, table.schema.types, strict=True)
            ]
        )
    ).sort_by([("time", "ascending"), ("hostname", "ascending")])


def test_per_host_runs_are_the_same_rows_in_runs(dataset_cache) -> None:
    base = DatasetSpec.parse(scale=7, end="2016-01-01T01:00:00Z")
    runs = DatasetSpec.parse(scale=7, end="2016-01-01T01:00:00Z", ingestion="per-host-runs", run_length=10)
    a, _ = ensure_dataset(base, dataset_cache)
    b, _ = ensure_dataset(runs, dataset_cache)
    assert a.path != b.path
    table = b.read("cpu")
    hosts = table["hostname"].to_pylist()
    assert hosts[:10] == ["host_0"] * 10 and hosts[10:20] == ["host_1"] * 10
    assert _sorted(table).equals(_sorted(a.read("cpu")))


def test_chunking_bounds_memory_and_keeps_runs_whole() -> None:
    chunks = plan_chunks(epochs=360, entities=100_000, run_length=1)
    assert all(c.rows <= 1 << 18 for c in chunks)
    assert sum(c.rows for c in chunks) == 36_000_000
    runs = plan_chunks(epochs=100, entities=7, run_length=10, target_rows=50)
    assert all(c.ne % 10 == 0 for c in runs) and sum(c.rows for c in runs) == 700
    huge = plan_chunks(epochs=3, entities=5_000_000, run_length=1)
    assert all(c.rows <= 1 << 18 for c in huge) and sum(c.rows for c in huge) == 15_000_000


def test_generated_batches_do_not_depend_on_chunk_size_for_tags() -> None:
    spec = DatasetSpec.parse(scale=50, end="2016-01-01T00:10:00Z")
    assert generate(spec).tags.equals(generate(spec, target_rows=100).tags)


@pytest.mark.parametrize("scale", [1, 3])
def test_tiny_scales(dataset_cache, scale: int) -> None:
    dataset, _ = ensure_dataset(DatasetSpec.parse(scale=scale, end="2016-01-01T00:01:00Z"), dataset_cache)
    assert dataset.rows["cpu"] == scale * 6
