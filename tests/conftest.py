"""Shared fixtures: small real datasets generated once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tsbench.spec import DatasetSpec
from tsbench.workload.dataset import Dataset, ensure_dataset


@pytest.fixture(scope="session")
def dataset_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("datasets")


@pytest.fixture(scope="session")
def day_dataset(dataset_cache: Path) -> Dataset:
    """cpu-only, 100 hosts × 1 day at 10 s (864,000 rows) — the published scale-100 shape."""
    dataset, _ = ensure_dataset(DatasetSpec.parse(scale=100), dataset_cache)
    return dataset


@pytest.fixture(scope="session")
def small_dataset(dataset_cache: Path) -> Dataset:
    """cpu-only, 12 hosts × 1 day at 10 s: every query type fits."""
    dataset, _ = ensure_dataset(DatasetSpec.parse(scale=12, seed=7), dataset_cache)
    return dataset
