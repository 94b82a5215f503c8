"""The simulator contract: what a use case's generator must provide to the driver."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np

from tsbench.workload.dataset_spec import DatasetSpec
from tsbench.workload.generate.common import Chunk
from tsbench.workload.usecases import UseCase, get_use_case


@dataclass
class MeasurementChunk:
    """One measurement's values for one chunk, all arrays shaped ``(ne, nh)`` (epoch, entity).

    ``fields`` maps field name → typed values (int64 or float64, as the schema says).
    ``nulls`` maps field name → True where the value is missing (omitted from the row).
    ``keep`` is False for points that are dropped entirely; ``delay`` (epochs ≥ 0) moves a point
    later in the stream (out of order, still inside its chunk). ``nameless`` is True where the
    point's entity key is missing (only for use cases with ``nameless_rows``). Absent means: all
    kept, no delay, every point named.
    """

    fields: dict[str, np.ndarray]
    nulls: dict[str, np.ndarray] = field(default_factory=dict)
    keep: np.ndarray | None = None
    delay: np.ndarray | None = None
    nameless: np.ndarray | None = None


class Simulator(ABC):
    """Generates one use case. Subclasses draw only from ``tsbench.workload.generate.common.stream``s."""

    use_case_name: str

    def __init__(self, spec: DatasetSpec):
        self.spec = spec
        self.use_case: UseCase = get_use_case(spec.use_case)
        self.entities = spec.scale

    def entity_names(self) -> np.ndarray:
        return np.array([f"{self.use_case.entity_prefix}{i}" for i in range(self.entities)], dtype=object)

    @abstractmethod
    def entity_tags(self) -> dict[str, np.ndarray]:
        """Every tag in ``use_case.entity_tags`` order → one str per entity (the first is the name)."""

    def extra_tags(self, measurement: str) -> dict[str, np.ndarray]:
        """Per-series tags of a measurement (e.g. diskio ``serial``) → one str per entity."""
        return {}

    @abstractmethod
    def simulate(self, chunk: Chunk) -> dict[str, MeasurementChunk]:
        """Values of every measurement for ``chunk``; called once per chunk, in plan order."""
