"""The runtime a run's spec asks for (``local``, ``docker`` or ``aws``), built with the spec's options,
the leases its branches take and the price of one of its hosts.

Heavy or optional dependencies (the Docker SDK, Terraform) are imported only for the runtime asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tsbench.results.cost_records import MachinePrice
from tsbench.runtimes.base import Runtime
from tsbench.runtimes.options import AwsOptions, DockerOptions
from tsbench.runtimes.shapes import MachineShape, aws_host, this_machine


class RuntimeChoice(Protocol):
    """What of a run's spec picks and builds its runtime (``tsbench.spec.RunSpec`` is one; the
    runtimes never import the spec, which imports the targets)."""

    runtime: str
    aws: AwsOptions
    docker: DockerOptions


@dataclass(frozen=True)
class RuntimeOptions:
    """What the process running a branch gives its runtime beyond the spec (the command line: nothing;
    the Airflow glue: both). ``environment()`` gives credentials for the runtime's tools (e.g. AWS
    keys for Terraform), looked up only by a runtime that runs such tools;
    ``docker_client_factory(base_url)`` gives the Docker runtime its engine client (the Airflow glue
    passes one built on the Docker provider's hook)."""

    environment: Callable[[], Mapping[str, str]] | None = None
    docker_client_factory: Callable[[str | None], Callable[[], Any]] | None = None


def runtime_for(
    spec: RuntimeChoice,
    log_line: Callable[[str], None] | None = None,
    options: RuntimeOptions | None = None,
    run: str | None = None,
    handoff: Path | None = None,
) -> Runtime:
    """The spec's runtime, given ``options`` (None: none, ``RuntimeOptions()``); ``run`` labels what
    the runtime creates; ``handoff`` (a target's run folder) carries a local or cloud instance's
    record to the branch's later tasks."""
    given = options or RuntimeOptions()
    if spec.runtime == "aws":
        from tsbench.runtimes.aws import AwsRuntime

        return AwsRuntime(
            spec.aws,
            log_line=log_line,
            environment=given.environment() if given.environment else None,
            handoff=handoff,
        )
    if spec.runtime == "docker":
        from tsbench.runtimes.docker import DockerRuntime

        make_client = given.docker_client_factory
        factory = make_client(spec.docker.base_url) if make_client else None
        return DockerRuntime.from_options(spec.docker, client_factory=factory, run=run, handoff=handoff)
    from tsbench.runtimes.local import LocalRuntime

    return LocalRuntime(handoff=handoff)


def host_lease_keys(spec: RuntimeChoice, run: str) -> list[str | None]:
    """The leases a branch of ``run`` may take, one per benchmark host it may measure on (see
    ``tsbench.run.lease.HostLeases``): ``local`` and ``docker`` → ``[None]``, this machine, shared by
    every run; ``aws`` → the run's own ``max_parallel_hosts`` slots (each branch provisions its own
    host, so branches measure in parallel; the cap is cost control)."""
    if spec.runtime == "aws":
        return [f"{run}-aws-host-{i}" for i in range(spec.aws.max_parallel_hosts)]
    return [None]


def machine_price(spec: RuntimeChoice) -> MachinePrice:
    """The on-demand price per hour of one host the spec's runtime would rent, from that runtime's
    own price table (``aws``: ``runtimes/aws_pricing.py``); ``local`` and ``docker`` run on a
    machine tsbench does not rent: ``no price (local)``, ``no price (docker)``."""
    if spec.runtime == "aws":
        from tsbench.runtimes.aws_pricing import host_price

        return host_price(spec.aws)
    return MachinePrice.none(spec.runtime, f"no price ({spec.runtime})")


def machine_shape(spec: RuntimeChoice) -> MachineShape:
    """The machine the spec's databases run on, for the plan (``runtimes/shapes.py``): ``aws`` → the
    declared instance type and data volume; ``local`` and ``docker`` → this machine."""
    if spec.runtime == "aws":
        return aws_host(spec.aws)
    from tsbench.runtimes.local import state_root

    return this_machine(state_root())
