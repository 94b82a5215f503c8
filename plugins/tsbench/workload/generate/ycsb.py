"""ycsb-ts: YCSB-TS's record shape (study D) — a timestamp, three string tags and one double.

The entities are metrics (``metric_0 …``; study D spread its records over 8 containers); the record
count is ``scale × epochs`` (give it as ``row_budget``). Each metric carries three tags of 10
characters (YCSB-TS's ``tagvaluelength``), drawn once per metric, so every database keys a series
the same way (YCSB-TS draws tags per record; fixed tags keep InfluxDB's series count equal to the
metric count). Values are uniform doubles in ``[0, 10,000)`` with full float64 precision.
"""

from __future__ import annotations

import string

import numpy as np

from tsbench.workload.dataset_spec import DatasetSpec
from tsbench.workload.generate.common import Chunk, stream
from tsbench.workload.generate.simulator import MeasurementChunk, Simulator
from tsbench.workload.usecases import YCSB, YCSB_TAGS

TAG_LENGTH = 10
VALUE_RANGE = (0.0, 10_000.0)
_LETTERS = np.array(list(string.ascii_letters + string.digits))


def tag_values(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` random alphanumeric strings of ``TAG_LENGTH`` characters (object array)."""
    picks = _LETTERS[rng.integers(0, len(_LETTERS), size=(count, TAG_LENGTH))]
    return np.array(["".join(row) for row in picks], dtype=object)


class Ycsb(Simulator):
    use_case_name = "ycsb-ts"

    def __init__(self, spec: DatasetSpec):
        super().__init__(spec)
        rng = stream(spec.seed, "ycsb-tags")
        self.tags = {tag: tag_values(rng, self.entities) for tag in YCSB_TAGS}
        self.rng = stream(spec.seed, "ycsb-values")

    def entity_tags(self) -> dict[str, np.ndarray]:
        return {self.use_case.entity_key: self.entity_names()}

    def extra_tags(self, measurement: str) -> dict[str, np.ndarray]:
        return dict(self.tags) if measurement == YCSB.name else {}

    def simulate(self, chunk: Chunk) -> dict[str, MeasurementChunk]:
        values = self.rng.uniform(*VALUE_RANGE, size=(chunk.ne, chunk.nh))
        return {YCSB.name: MeasurementChunk({"value": values})}
