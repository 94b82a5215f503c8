"""Runtime options in RunSpec: bad cloud settings are refused before any work, with field names;
the options map onto variables the Terraform root module really declares."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tsbench.runtimes.aws import cloud_name
from tsbench.spec import RunSpec, SpecError

ROOT = Path(__file__).resolve().parents[2]
BASE = {"targets": ["questdb"], "scale": 10, "end": "2016-01-02T00:00:00Z"}
AWS = {"orchestrator_cidr": ["203.0.113.7/32"]}


def problems(**values) -> dict[str, str]:
    with pytest.raises(SpecError) as caught:
        RunSpec.parse(**{**BASE, **values})
    return dict(caught.value.problems)


def test_aws_needs_the_orchestrator_address() -> None:
    assert "aws.orchestrator_cidr" in problems(runtime="aws")
    assert RunSpec.parse(**BASE, runtime="local").aws.orchestrator_cidr == []  # only aws runs need it


@pytest.mark.parametrize(
    ("aws", "field", "words"),
    [
        ({"orchestrator_cidr": ["0.0.0.0/0"]}, "orchestrator_cidr", "whole internet"),
        ({"orchestrator_cidr": ["203.0.113.7/32", "10.0.0.0/8"]}, "10.0.0.0/8", "wider than an IPv4 /16"),
        ({"orchestrator_cidr": ["2001:db8::/32"]}, "2001:db8::/32", "or IPv6 /48"),
        (
            {"orchestrator_cidr": ["::/0"], "allow_wide_ingress": "  "},
            "::/0",
            "state why in allow_wide_ingress",
        ),
        ({"orchestrator_cidr": ["10.0.0.300/32"]}, "aws.orchestrator_cidr", "not a CIDR"),
        ({**AWS, "data_volume_type": "io1"}, "data_volume_iops", "need provisioned IOPS"),
        ({**AWS, "data_volume_type": "gp2", "data_volume_iops": 4000}, "data_volume_iops", "no provisioned"),
        ({**AWS, "data_volume_type": "gp3", "data_volume_iops": 100}, "data_volume_iops", "3000"),
        (
            {**AWS, "data_volume_type": "io1", "data_volume_iops": 1000, "data_volume_throughput": 300},
            "data_volume_throughput",
            "only gp3",
        ),
        ({**AWS, "instance_type": "m5 large"}, "aws.instance_type", "pattern"),
        ({**AWS, "region": "moon-1"}, "aws.region", "pattern"),
        ({**AWS, "ami_id": "debian"}, "aws.ami_id", "pattern"),
        ({**AWS, "backend_config": "/nonexistent/backend.hcl"}, "aws.backend_config", "no file"),
        ({**AWS, "surprise": 1}, "aws.surprise", "Extra inputs"),
    ],
)
def test_bad_aws_options_are_named(aws: dict, field: str, words: str) -> None:
    found = problems(runtime="aws", aws=aws)
    text = " ".join(f"{k}: {v}" for k, v in found.items())
    assert field in text and words in text, found


def test_a_wide_block_is_allowed_with_its_reason_and_a_narrow_one_without() -> None:
    why = "a VPC of our own, with no route to the internet"
    spec = RunSpec.parse(
        **BASE, runtime="aws", aws={"orchestrator_cidr": ["0.0.0.0/0"], "allow_wide_ingress": why}
    )
    assert spec.aws.allow_wide_ingress == why
    narrow = {"orchestrator_cidr": ["10.1.0.0/16", "2001:db8:1::/48"]}
    assert RunSpec.parse(**BASE, runtime="aws", aws=narrow).aws.allow_wide_ingress == ""


def test_aws_without_terraform_is_refused_up_front(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert "terraform" in problems(runtime="aws", aws=AWS)["runtime"]


def test_docker_flavours_must_exist() -> None:
    assert "docker.flavours.influxdb" in problems(
        targets=["influxdb"], docker={"flavours": {"influxdb": "9"}}
    )
    assert "docker.flavours.postgres" in problems(docker={"flavours": {"postgres": "15"}})  # not a target
    spec = RunSpec.parse(
        **{**BASE, "targets": ["influxdb"]}, runtime="docker", docker={"flavours": {"influxdb": "2.7"}}
    )
    assert spec.docker.flavours == {"influxdb": "2.7"}


def test_every_terraform_variable_the_runtime_sets_is_declared() -> None:
    declared = set(
        re.findall(r'^variable "([a-z_]+)"', (ROOT / "infra/envs/aws/variables.tf").read_text(), re.M)
    )
    spec = RunSpec.parse(
        **BASE, runtime="aws", aws={**AWS, "ami_id": "ami-0123456789abcdef0", "endpoint_url": "http://x"}
    )
    from tsbench.runtimes.aws import AwsRuntime

    sent = AwsRuntime(spec.aws)._variables(
        "run-1-scale-10-questdb", "questdb", {"node_agent_token": "t" * 20}
    )
    assert set(sent) <= declared, set(sent) - declared


@pytest.mark.parametrize(
    "instance",
    [
        "20261122T143401Z-abc123-scale-10-questdb",
        "20261122T143401Z-abc123-scale-100000-mongodb_naive" * 2,
        "X",
    ],
)
def test_cloud_names_fit_the_modules_rule(instance: str) -> None:
    name = cloud_name(instance)
    assert re.fullmatch(r"[a-z0-9][a-z0-9-]{0,47}", name)
    assert cloud_name(instance + "x") != name or len(instance) < 40


def test_a_shared_run_store_needs_remote_state_and_the_deployment_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TSBENCH_RUN_STORE", "s3://team/runs")
    monkeypatch.delenv("TSBENCH_SECRET_KEY", raising=False)
    found = problems(runtime="aws", aws=AWS)
    assert "TSBENCH_SECRET_KEY" in found["runtime"]
    assert "teardown may run on another worker" in found["aws.backend_config"]
    backend = tmp_path / "backend.hcl"
    backend.write_text('bucket = "state"\n')
    monkeypatch.setenv("TSBENCH_SECRET_KEY", "k" * 32)
    assert RunSpec.parse(**BASE, runtime="aws", aws={**AWS, "backend_config": str(backend)})
    monkeypatch.setenv("TSBENCH_RUN_STORE", str(tmp_path))  # one machine: local state is enough
    monkeypatch.delenv("TSBENCH_SECRET_KEY")
    assert RunSpec.parse(**BASE, runtime="aws", aws=AWS)


def test_every_instance_has_its_own_remote_state_key() -> None:
    from tsbench.runtimes.aws import state_key

    keys = {state_key(f"20261126T1600Z-abc-scale-10-{name}") for name in ("questdb", "postgres")}
    assert len(keys) == 2 and all(key.endswith("/terraform.tfstate") for key in keys)


def test_secrets_derived_from_the_deployment_key_are_the_same_on_every_worker(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two state roots stand for two workers: with the key they derive the same secrets and store
    none; a password the orchestrator's environment gives is used as it is."""
    from tsbench.runtimes.aws import AwsRuntime, default_container

    spec = RunSpec.parse(**BASE, runtime="aws", aws=AWS)
    container = default_container("questdb")
    monkeypatch.setenv("TSBENCH_SECRET_KEY", "deployment-key-" + "x" * 20)
    first = AwsRuntime(spec.aws, root=tmp_path / "a")._secrets("run-1-questdb", container)
    second = AwsRuntime(spec.aws, root=tmp_path / "b")._secrets("run-1-questdb", container)
    other = AwsRuntime(spec.aws, root=tmp_path / "b")._secrets("run-2-questdb", container)
    assert first == second and len(first["node_agent_token"]) >= 32
    assert first["node_agent_token"] != other["node_agent_token"]
    assert not list(tmp_path.rglob("*.json")), "a derived secret was stored"
    name = next(iter(container.secret_names()))
    monkeypatch.setenv(name, "given-by-the-orchestrator")
    assert AwsRuntime(spec.aws, root=tmp_path / "a")._secrets("run-1-questdb", container)[name] == (
        "given-by-the-orchestrator"
    )
    monkeypatch.delenv("TSBENCH_SECRET_KEY")  # one worker: random, kept 0600 in its state root
    alone = AwsRuntime(spec.aws, root=tmp_path / "c")._secrets("run-1-questdb", container)
    assert alone["node_agent_token"] != first["node_agent_token"]
    assert (tmp_path / "c" / "run-1-questdb" / "secrets.json").stat().st_mode & 0o777 == 0o600
