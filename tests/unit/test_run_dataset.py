"""A run's dataset on a worker that does not have it: workers share no disk, so a later task may
run where the dataset was never generated. It is generated again from the run's spec and must be
byte-identical (every file's sha256) to what the run recorded."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tsbench.results.files import read_json, write_json_atomic
from tsbench.results.folder import PointFolder
from tsbench.run.point_setup import prepare_dataset
from tsbench.spec import RunSpec
from tsbench.workload.dataset import DatasetError
from tsbench.workload.recorded import run_dataset

SPEC = RunSpec.parse(targets=["questdb"], scale=10, end="2016-01-01T02:00:00Z")


def test_a_worker_without_the_dataset_generates_the_same_bytes(tmp_path: Path) -> None:
    run_dir, first_worker = tmp_path / "run" / "scale-10", tmp_path / "worker-1"
    body = prepare_dataset(SPEC, run_dir, dataset_cache=first_worker)
    recorded = Path(body.dataset.path)
    assert recorded.is_relative_to(first_worker)
    assert run_dataset(PointFolder(run_dir).read_run()).path == recorded  # where it was made

    shutil.rmtree(first_worker)  # another worker: the recorded path does not exist there
    second_worker = tmp_path / "worker-2"
    dataset = run_dataset(PointFolder(run_dir).read_run(), dataset_cache=second_worker)
    assert dataset.path.is_relative_to(second_worker) and dataset.id == body.dataset.id
    assert [f.sha256 for f in dataset.manifest.files] == body.dataset.files_sha256


def test_a_dataset_that_differs_from_the_recorded_one_is_refused(tmp_path: Path) -> None:
    run_dir = tmp_path / "run" / "scale-10"
    prepare_dataset(SPEC, run_dir, dataset_cache=tmp_path / "cache")
    run = read_json(run_dir / "run.json")
    run["dataset"]["files_sha256"][0] = "0" * 64  # as if another generator version had made it
    write_json_atomic(run_dir / "run.json", run)
    with pytest.raises(DatasetError, match="not the one the run recorded"):
        run_dataset(PointFolder(run_dir).read_run())
