"""The shape of the machine a run's databases run on, as the plan needs it: cores, memory and the disk
their data may fill. ``local`` and ``docker``: this machine (its free space where the servers keep
their data); ``aws``: the declared instance type (``aws_shapes.toml``) and data volume."""

from __future__ import annotations

import os
import shutil
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import psutil

from tsbench.runtimes.options import AwsOptions

SHAPES = Path(__file__).with_name("aws_shapes.toml")
GIB = 2**30


@dataclass(frozen=True)
class MachineShape:
    """``cores`` and ``memory_bytes`` None: unknown (the plan then does not scale or check them);
    ``disk_bytes``: what the databases' data may fill there; ``what``: for people."""

    what: str
    cores: int | None
    memory_bytes: int | None
    disk_bytes: int
    disk_what: str


def free_bytes(path: Path) -> int:
    """Free bytes on the filesystem that holds ``path`` (or its nearest existing parent)."""
    probe = path
    while not probe.exists():
        probe = probe.parent
    return shutil.disk_usage(probe).free


def this_machine(data_root: Path) -> MachineShape:
    """This machine, its databases' data under ``data_root``."""
    return MachineShape(
        what=f"this machine ({os.cpu_count()} cores, {psutil.virtual_memory().total / GIB:,.0f} GiB)",
        cores=os.cpu_count(),
        memory_bytes=psutil.virtual_memory().total,
        disk_bytes=free_bytes(data_root),
        disk_what=f"free under {data_root}",
    )


@cache
def _instances() -> dict[str, tuple[int, float]]:
    table = tomllib.loads(SHAPES.read_text())["instances"]
    return {name: (int(cores), float(gib)) for name, (cores, gib) in table.items()}


def aws_host(options: AwsOptions) -> MachineShape:
    """One benchmark host of ``options``: its instance type's vCPUs and memory (None when the table
    does not list the type) and its data volume."""
    shape = _instances().get(options.instance_type)
    cores, memory = (shape[0], int(shape[1] * GIB)) if shape else (None, None)
    known = f"{cores} vCPU, {shape[1]:g} GiB" if shape else "shape not in runtimes/aws_shapes.toml"
    return MachineShape(
        what=f"{options.instance_type} ({known})",
        cores=cores,
        memory_bytes=memory,
        disk_bytes=options.data_volume_gb * 10**9,
        disk_what=f"its {options.data_volume_gb:,} GB {options.data_volume_type} data volume",
    )
