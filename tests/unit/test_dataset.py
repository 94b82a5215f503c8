"""Datasets on disk: content address, reuse, atomic completion, verification, disk-space refusal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tsbench.spec import DatasetSpec
from tsbench.workload.dataset import (
    Dataset,
    DatasetError,
    check_disk_space,
    dataset_folder,
    ensure_dataset,
    estimated_bytes,
)

ROOT = Path(__file__).resolve().parents[2]


def test_manifest_describes_the_dataset(day_dataset: Dataset) -> None:
    m = day_dataset.manifest.to_json()  # the file as written
    assert day_dataset.manifest.rows_total == 864_000 and day_dataset.manifest.tags.rows == 100
    assert m["format"] == "tsbench-dataset/1" and m["generator_version"]
    assert m["spec"]["scale"] == 100 and m["rows"] == {"cpu": 864_000}
    assert m["schema"]["cpu"][0] == {"name": "time", "type": "timestamp[ns, tz=UTC]"}
    assert sum(f["rows"] for f in m["files"]) == 864_000
    assert all(len(f["sha256"]) == 64 for f in m["files"])
    assert m["time_range"]["first_ns"] == m["time_range"]["start_ns"]
    assert m["time_range"]["last_ns"] == m["time_range"]["end_ns"] - m["time_range"]["interval_ns"]
    day_dataset.verify()


def test_second_request_reuses(day_dataset: Dataset, dataset_cache: Path) -> None:
    again, reused = ensure_dataset(DatasetSpec.parse(scale=100), dataset_cache)
    assert reused and again.path == day_dataset.path


def test_verify_detects_corruption(tmp_path: Path) -> None:
    dataset, _ = ensure_dataset(DatasetSpec.parse(scale=3, end="2016-01-01T00:10:00Z"), tmp_path)
    part = dataset.files("cpu")[0]
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF
    part.write_bytes(bytes(data))
    with pytest.raises(DatasetError, match="sha256"):
        dataset.verify()


def test_incomplete_folder_is_not_a_dataset(tmp_path: Path) -> None:
    spec = DatasetSpec.parse(scale=3, end="2016-01-01T00:10:00Z")
    folder = dataset_folder(spec, tmp_path)
    (folder / "cpu").mkdir(parents=True)
    (folder / "cpu" / "part-00000.parquet").write_bytes(b"half")
    with pytest.raises(DatasetError, match="not a complete dataset"):
        Dataset.open(folder)
    dataset, reused = ensure_dataset(spec, tmp_path)
    assert not reused and dataset.rows["cpu"] == 180
    dataset.verify()


def test_killed_generation_leaves_nothing_that_looks_complete(tmp_path: Path) -> None:
    """SIGKILL during a long generation; the next request regenerates from scratch."""
    args = ["--scale", "2000", "--end", "2016-01-01T06:00:00Z", "--cache-dir", str(tmp_path)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    child = subprocess.Popen([sys.executable, "-m", "tsbench", "generate", *args], env=env)
    deadline = time.time() + 60
    while time.time() < deadline and not any(tmp_path.glob(".tmp-*/cpu/*.parquet")):
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert not list(tmp_path.glob("*/manifest.json")), "killed run left a complete-looking dataset"
    spec = DatasetSpec.parse(scale=2000, end="2016-01-01T06:00:00Z")
    dataset, reused = ensure_dataset(spec, tmp_path)
    assert not reused and dataset.rows["cpu"] == 2000 * 2160
    dataset.verify()


def test_refuses_a_dataset_that_cannot_fit(tmp_path: Path) -> None:
    mount = tmp_path / "small"
    mount.mkdir()
    mounted = (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=4M", "tmpfs", str(mount)], capture_output=True
        ).returncode
        == 0
    )
    try:
        spec = DatasetSpec.parse(scale=1000)  # 8.64 M rows ≈ 100 MB
        if not mounted:  # not root: ask for more than this disk holds instead
            free = os.statvfs(tmp_path).f_bavail * os.statvfs(tmp_path).f_frsize
            spec = DatasetSpec.parse(
                scale=min(10_000_000, free // (12 * 8_640) + 1), end="2016-01-02T00:00:00Z"
            )
            mount = tmp_path
        with pytest.raises(DatasetError, match="GB are free"):
            check_disk_space(spec, mount)
        with pytest.raises(DatasetError):
            ensure_dataset(spec, mount)
        assert not list(mount.iterdir()), "refused dataset must not start writing"
        check_disk_space(DatasetSpec.parse(scale=1, end="2016-01-01T00:10:00Z"), mount)
    finally:
        if mounted:
            subprocess.run(["umount", str(mount)], check=True)


def test_estimate_covers_the_real_size(day_dataset: Dataset) -> None:
    real = sum(f.bytes for f in day_dataset.manifest.files)
    estimate = estimated_bytes(DatasetSpec.parse(**day_dataset.manifest.spec))
    assert real <= estimate < 3 * real


def test_iter_batches_has_exact_sizes(day_dataset: Dataset) -> None:
    sizes = [b.num_rows for b in day_dataset.iter_batches("cpu", 10_000)]
    assert sum(sizes) == 864_000 and set(sizes[:-1]) == {10_000} and sizes[-1] == 4_000
    first = next(day_dataset.iter_batches("cpu", 7))
    assert first.num_rows == 7 and first.column("hostname").to_pylist()[0] == "host_0"


def test_manifest_is_valid_json_with_sorted_files(day_dataset: Dataset) -> None:
    body = json.loads((day_dataset.path / "manifest.json").read_text())
    assert [f["path"] for f in body["files"]] == sorted(f["path"] for f in body["files"])


def test_complete_fields_are_those_without_a_null(day_dataset: Dataset, iot_dataset: Dataset) -> None:
    """Read from the Parquet footers; checked against the rows themselves."""
    assert day_dataset.complete_fields("cpu") == day_dataset.use_case.measurement("cpu").field_names
    for m in iot_dataset.use_case.measurements:
        table = iot_dataset.read(m.name)
        without_null = tuple(f for f in m.field_names if table[f].null_count == 0)
        assert iot_dataset.complete_fields(m.name) == without_null
        assert len(without_null) < len(m.field_names)  # TSBS's iot leaves fields unset
