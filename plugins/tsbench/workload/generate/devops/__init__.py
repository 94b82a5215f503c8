"""devops: TSBS's full host use case — cpu plus eight more measurements per host per epoch.

cpu is exactly the cpu-only simulation (same stream, same host tags). Every other measurement draws
from its own ``stream(seed, "devops-<name>")`` (its extra tags from ``"devops-<name>-tags"``), so
adding or changing one never moves another. The measurements are built from the field kinds in
``kinds`` (fact, counter, gauge, derived); ``system`` holds the host's own measurements (diskio,
disk, kernel, mem, net), ``services`` those of the services it runs (nginx, postgresl, redis).
"""

from __future__ import annotations

import numpy as np

from tsbench.workload.dataset_spec import DatasetSpec
from tsbench.workload.generate.common import Chunk
from tsbench.workload.generate.cpu import CpuWalk, host_tags
from tsbench.workload.generate.devops.kinds import Clock, Part
from tsbench.workload.generate.devops.services import Nginx, Postgres, Redis
from tsbench.workload.generate.devops.system import Disk, DiskIO, Kernel, Mem, Net
from tsbench.workload.generate.simulator import MeasurementChunk, Simulator

PARTS: tuple[type[Part], ...] = (DiskIO, Disk, Kernel, Mem, Net, Nginx, Postgres, Redis)


class Devops(Simulator):
    """cpu (identical to cpu-only) plus diskio, disk, kernel, mem, net, nginx, postgresl and redis."""

    use_case_name = "devops"

    def __init__(self, spec: DatasetSpec):
        super().__init__(spec)
        self.cpu = CpuWalk(spec.seed, self.entities)
        clock = Clock(spec, self.entities)
        self.parts = {cls.name: cls(spec.seed, clock, self.entities) for cls in PARTS}

    def entity_tags(self) -> dict[str, np.ndarray]:
        return host_tags(self.spec.seed, self.entities, self.entity_names())

    def extra_tags(self, measurement: str) -> dict[str, np.ndarray]:
        part = self.parts.get(measurement)
        return dict(part.tags) if part is not None else {}

    def simulate(self, chunk: Chunk) -> dict[str, MeasurementChunk]:
        values = {"cpu": self.cpu.chunk(chunk)}
        for name, part in self.parts.items():
            values[name] = part.chunk(chunk)
        return values
