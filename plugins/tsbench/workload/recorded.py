"""The dataset a point recorded (``run.json``), on whichever worker asks for it."""

from __future__ import annotations

import logging
from pathlib import Path

from tsbench.results.model import PointRun
from tsbench.workload.dataset import Dataset, DatasetError, ensure_dataset
from tsbench.workload.dataset_spec import DatasetSpec

log = logging.getLogger("tsbench.run")


def run_dataset(run: PointRun, dataset_cache: Path | None = None) -> Dataset:
    """The dataset a run folder's ``run.json`` names, on this worker. Where the recorded path holds
    it (the worker that generated it, or a shared cache) it is opened; a worker that lacks it
    generates it again from the run's spec into its own cache (the generator is deterministic).
    Either way its id and every file's sha256 must equal what was recorded when the run first
    produced it, else ``DatasetError``."""
    recorded = run.dataset
    path = Path(recorded.path)
    if (path / "manifest.json").is_file():
        dataset = Dataset.open(path)
    else:
        spec = DatasetSpec.parse(**{k: v for k, v in run.spec.items() if k in DatasetSpec.model_fields})
        dataset, reused = ensure_dataset(spec, dataset_cache)
        how = "found in this worker's cache" if reused else "generated again on this worker"
        log.info("dataset %s is not at %s: %s (%s)", recorded.id, path, how, dataset.path)
    shas = [entry.sha256 for entry in dataset.manifest.files]
    if dataset.id != recorded.id or shas != recorded.files_sha256:
        raise DatasetError(
            f"dataset {dataset.id} at {dataset.path} is not the one the run recorded ({recorded.id}, "
            "files by sha256): the generator or its version differs between workers"
        )
    return dataset
