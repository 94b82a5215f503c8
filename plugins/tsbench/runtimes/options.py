"""Validated options of the docker and aws runtimes (part of ``RunSpec``, checked before any work).

``AwsOptions`` become Terraform variables of ``infra/envs/aws`` (see ``AwsOptions.tf_variables``);
volume sizes are GiB, IOPS per volume, throughput MiB/s, timeouts seconds.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tsbench.results.workspace import is_remote
from tsbench.runtimes.secret_key import SECRET_KEY_ENV, deployment_key

VolumeType = Literal["gp2", "gp3", "io1", "io2", "st1", "sc1", "standard"]
IOPS_RANGE = {"gp3": (3_000, 80_000), "io1": (100, 64_000), "io2": (100, 256_000)}
THROUGHPUT_RANGE = {"gp3": (125, 2_000)}
# The widest address block a host opens its ports to without ``allow_wide_ingress``: a /16 of IPv4
# (65,536 addresses, an organisation's network); a /48 of IPv6 (one site's allocation; an IPv6 /16
# would be a quarter of a million IPv4 internets).
SHORTEST_PREFIX = {4: 16, 6: 48}


class AwsOptions(BaseModel):
    """Where and on what a ``runtime=aws`` run provisions its benchmark host (one per target)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    region: str = Field("us-east-1", pattern=r"^[a-z]{2}(-gov|-iso[a-z]*)?-[a-z]+-\d+$")
    instance_type: str = Field("m5.2xlarge", pattern=r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$")
    ami_id: str | None = Field(None, pattern=r"^ami-[0-9a-f]{8,17}$", description="default: Debian 12")
    root_volume_gb: int = Field(30, ge=8, le=16_384)
    data_volume_type: VolumeType = "gp3"
    data_volume_gb: int = Field(200, ge=1, le=65_536)
    data_volume_iops: int | None = Field(None, description="gp3/io1/io2 only; default: the type's own")
    data_volume_throughput: int | None = Field(None, description="MiB/s, gp3 only")
    orchestrator_cidr: list[str] = Field(
        default_factory=list,
        description="who may reach the host (the Airflow workers' addresses); a block wider than an "
        "IPv4 /16 or an IPv6 /48 needs allow_wide_ingress",
    )
    allow_wide_ingress: str = Field(
        "",
        max_length=300,
        description="why the host may be open to a block wider than an IPv4 /16 or an IPv6 /48 (empty: "
        "it may not); the reason goes into the run's record",
    )
    client_host: bool = Field(False, description="also provision a separate client host")
    client_instance_type: str = Field("c5.2xlarge", pattern=r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$")
    ssh_public_key: str = Field("", description="OpenSSH public key for operators; empty: no key pair")
    ready_timeout_s: float = Field(1_200.0, gt=0, le=7_200)
    max_parallel_hosts: int = Field(
        2, ge=1, le=64, description="benchmark hosts of one run that exist and measure at once (cost control)"
    )
    endpoint_url: str | None = Field(
        None, pattern=r"^https?://", description="an AWS-compatible endpoint (tests: moto's server)"
    )
    backend_config: str | None = Field(None, description="file with S3 backend settings (remote state)")

    @field_validator("orchestrator_cidr")
    @classmethod
    def _cidrs(cls, value: list[str]) -> list[str]:
        for text in value:
            try:
                ipaddress.ip_network(text, strict=False)
            except ValueError as error:
                raise ValueError(f"{text!r} is not a CIDR block ({error})") from None
        return value

    @model_validator(mode="after")
    def _ingress(self) -> Self:
        """A block wider than ``SHORTEST_PREFIX`` allows only with a reason (``allow_wide_ingress``)."""
        networks = {text: ipaddress.ip_network(text, strict=False) for text in self.orchestrator_cidr}
        wide = {text: n for text, n in networks.items() if n.prefixlen < SHORTEST_PREFIX[n.version]}
        if wide and not self.allow_wide_ingress.strip():
            whole = any(network.prefixlen == 0 for network in wide.values())
            how = "opens the host to the whole internet" if whole else "is wider than an IPv4 /16 or IPv6 /48"
            raise ValueError(
                f"orchestrator_cidr: {', '.join(wide)} {how}; name the orchestrator's address block "
                "(e.g. 203.0.113.7/32), or state why in allow_wide_ingress"
            )
        return self

    @model_validator(mode="after")
    def _volume(self) -> Self:
        kind = self.data_volume_type
        problems = []
        if self.data_volume_iops is not None:
            if kind not in IOPS_RANGE:
                problems.append(f"data_volume_iops: {kind} volumes have no provisioned IOPS")
            elif not IOPS_RANGE[kind][0] <= self.data_volume_iops <= IOPS_RANGE[kind][1]:
                low, high = IOPS_RANGE[kind]
                problems.append(f"data_volume_iops: {kind} takes {low}…{high} IOPS")
        elif kind in ("io1", "io2"):
            problems.append(f"data_volume_iops: {kind} volumes need provisioned IOPS")
        if self.data_volume_throughput is not None:
            if kind not in THROUGHPUT_RANGE:
                problems.append(f"data_volume_throughput: only gp3 volumes take a throughput ({kind})")
            elif not THROUGHPUT_RANGE[kind][0] <= self.data_volume_throughput <= THROUGHPUT_RANGE[kind][1]:
                low, high = THROUGHPUT_RANGE[kind]
                problems.append(f"data_volume_throughput: gp3 takes {low}…{high} MiB/s")
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def problems_for_a_run(self) -> list[tuple[str, str]]:
        """What must be set, and be there, before a run can provision (defaults suit the form, not
        a run): the orchestrator's address block, the Terraform binary, a readable backend config."""
        problems = []
        if not self.orchestrator_cidr:
            problems.append(
                ("aws.orchestrator_cidr", "name the orchestrator's address block, e.g. 203.0.113.7/32")
            )
        if shutil.which("terraform") is None:
            problems.append(("runtime", "runtime aws runs Terraform, and no terraform is on PATH"))
        if self.backend_config and not os.path.isfile(self.backend_config):
            problems.append(("aws.backend_config", f"no file {self.backend_config}"))
        if is_remote(os.environ.get("TSBENCH_RUN_STORE", "")):  # workers that share no disk
            problems += self._shared_deployment_problems()
        return problems

    def _shared_deployment_problems(self) -> list[tuple[str, str]]:
        """With a shared run store, a branch's tasks may run on different workers: the host's
        Terraform state must be remote and its secrets derivable by every worker."""
        problems = []
        if not self.backend_config:
            problems.append(
                (
                    "aws.backend_config",
                    "the run store is shared (TSBENCH_RUN_STORE=s3://…), so a host's teardown may run "
                    "on another worker than its provision: name S3 backend settings for Terraform's "
                    "state (a file every worker has)",
                )
            )
        if deployment_key() is None:
            problems.append(
                (
                    "runtime",
                    "the run store is shared (TSBENCH_RUN_STORE=s3://…): every worker needs the same "
                    f"deployment key {SECRET_KEY_ENV} to reach a host another worker provisioned",
                )
            )
        return problems

    def tf_variables(self) -> dict[str, Any]:
        """Terraform variables of ``infra/envs/aws`` (secrets and per-target values are added by the
        runtime)."""
        body: dict[str, Any] = {
            "region": self.region,
            "instance_type": self.instance_type,
            "root_volume_size_gb": self.root_volume_gb,
            "data_volume_type": self.data_volume_type,
            "data_volume_size_gb": self.data_volume_gb,
            "data_volume_iops": self.data_volume_iops,
            "data_volume_throughput": self.data_volume_throughput,
            "orchestrator_cidr": list(self.orchestrator_cidr),
            "allow_wide_ingress": self.allow_wide_ingress,
            "client_host": self.client_host,
            "client_instance_type": self.client_instance_type,
            "ssh_public_key": self.ssh_public_key,
        }
        if self.ami_id:
            body["ami_id"] = self.ami_id
        if self.endpoint_url:
            body.update(aws_endpoint_url=self.endpoint_url, skip_aws_validation=True)
        return body


class DockerOptions(BaseModel):
    """``flavours`` picks a container flavour per target (``{"<target>": "<flavour>"}``); the first
    flavour of a target's ``CONTAINERS`` otherwise. ``base_url`` names the engine (default: the
    environment's, ``DOCKER_HOST`` or the local socket)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    flavours: dict[str, str] = Field(default_factory=dict)
    base_url: str | None = None
