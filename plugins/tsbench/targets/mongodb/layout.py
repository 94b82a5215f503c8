"""What differs between the two MongoDB document layouts on the write side: collections, indexes,
documents and how a batch is sent. Queries differ too; they live in each folder's ``dialect.py``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import pyarrow as pa
from pymongo.collection import Collection
from pymongo.database import Database

from tsbench.targets.mongodb.shaping import BatchShaper
from tsbench.workload.usecases import Measurement, UseCase

IndexSpec = list[tuple[str, int]]


class Layout(ABC):
    """One way to store a use case's rows in MongoDB collections (one collection per measurement)."""

    name: ClassVar[str]  # e.g. "one document per host per hour"

    def __init__(self, use_case: UseCase, tags: pa.Table):
        self.use_case = use_case
        self.shaper = BatchShaper(use_case, tags)

    @abstractmethod
    def indexes(self, measurement: Measurement) -> list[IndexSpec]:
        """Secondary indexes we create on the measurement's collection (besides MongoDB's own)."""

    @abstractmethod
    def collection_options(self, measurement: Measurement) -> dict[str, Any]:
        """Options of ``create_collection`` (e.g. ``timeseries``)."""

    def create(self, database: Database, measurement: Measurement) -> None:
        """Create the (absent) collection of ``measurement`` with its indexes."""
        collection = database.create_collection(measurement.name, **self.collection_options(measurement))
        for keys in self.indexes(measurement):
            collection.create_index(keys)

    @abstractmethod
    def write(self, collection: Collection, measurement: str, batch: pa.RecordBatch) -> int:
        """Send one batch as one unordered bulk request (pymongo splits it only at the server's
        message limits); returns the batch's rows once the server has acknowledged them."""

    @abstractmethod
    def count(self, collection: Collection) -> int:
        """Rows (not documents) stored in the collection."""
