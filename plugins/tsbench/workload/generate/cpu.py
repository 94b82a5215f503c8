"""cpu-only: ten clamped random walks per host, emitted truncated to integers (TSBS semantics)."""

from __future__ import annotations

import numpy as np

from tsbench.workload.dataset_spec import DatasetSpec
from tsbench.workload.generate.common import Chunk, ClampedWalk, choose, stream
from tsbench.workload.generate.simulator import MeasurementChunk, Simulator
from tsbench.workload.usecases import CPU_FIELDS

REGIONS: dict[str, tuple[str, ...]] = {
    "us-east-1": ("a", "b", "c", "e"),
    "us-west-1": ("a", "b"),
    "us-west-2": ("a", "b", "c"),
    "eu-west-1": ("a", "b", "c"),
    "eu-central-1": ("a", "b"),
    "ap-southeast-1": ("a", "b"),
    "ap-southeast-2": ("a", "b"),
    "ap-northeast-1": ("a", "c"),
    "sa-east-1": ("a", "b", "c"),
}
OSES = ("Ubuntu16.10", "Ubuntu16.04LTS", "Ubuntu15.10")
ARCHES = ("x64", "x86")
TEAMS = ("SF", "NYC", "LON", "CHI")
ENVIRONMENTS = ("production", "staging", "test")


def host_tags(seed: int, hosts: int, names: np.ndarray) -> dict[str, np.ndarray]:
    """The ten TSBS host tags, each drawn uniformly (datacenter uniform within its region)."""
    rng = stream(seed, "host-tags")
    regions = choose(rng, tuple(REGIONS), hosts)
    sizes = np.array([len(REGIONS[region]) for region in regions])
    picks = (rng.random(hosts) * sizes).astype(np.int64)
    letters = np.array([REGIONS[r][i] for r, i in zip(regions, picks, strict=True)], dtype=object)
    return {
        "hostname": names,
        "region": regions,
        "datacenter": regions + letters,
        "rack": rng.integers(0, 100, hosts).astype(str).astype(object),
        "os": choose(rng, OSES, hosts),
        "arch": choose(rng, ARCHES, hosts),
        "team": choose(rng, TEAMS, hosts),
        "service": rng.integers(0, 20, hosts).astype(str).astype(object),
        "service_version": rng.integers(0, 2, hosts).astype(str).astype(object),
        "service_environment": choose(rng, ENVIRONMENTS, hosts),
    }


class CpuWalk:
    """The cpu measurement: 10 walks in [0, 100], step N(0, 1), start U[0, 100), values truncated."""

    def __init__(self, seed: int, hosts: int):
        self.rng = stream(seed, "cpu")
        self.walk = ClampedWalk(self.rng, hosts, 0.0, 100.0, 1.0, k=len(CPU_FIELDS))

    def chunk(self, chunk: Chunk) -> MeasurementChunk:
        values = self.walk.advance(self.rng, chunk.ne, chunk.h0, chunk.nh)
        columns = values.astype(np.int64)  # (10, ne, nh); values are ≥ 0, so this truncates
        return MeasurementChunk({name: columns[i] for i, name in enumerate(CPU_FIELDS)})


class CpuOnly(Simulator):
    use_case_name = "cpu-only"

    def __init__(self, spec: DatasetSpec):
        super().__init__(spec)
        self.cpu = CpuWalk(spec.seed, self.entities)

    def entity_tags(self) -> dict[str, np.ndarray]:
        return host_tags(self.spec.seed, self.entities, self.entity_names())

    def simulate(self, chunk: Chunk) -> dict[str, MeasurementChunk]:
        return {"cpu": self.cpu.chunk(chunk)}
