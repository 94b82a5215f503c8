"""A real moto server (EC2, S3, STS … over HTTP, moto's standalone mode) for tests that provision
with Terraform (shared fixture module, like ``integration.minio``)::

    pytest_plugins = ("integration.moto",)   # registers ``moto_url`` and ``aws_client``

It validates EC2 instance types as AWS does (``MOTO_EC2_ENABLE_INSTANCE_TYPE_VALIDATION``), so an
unknown type fails an apply midway. Credentials are moto's fake ones; nothing reaches AWS.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from tsbench.runtimes.ports import free_port, port_open

REGION = "us-east-1"
FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_EC2_METADATA_DISABLED": "true",
}


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    """A moto server on a free loopback port for the module; stopped afterwards."""
    port = free_port()
    env = {**os.environ, "MOTO_EC2_ENABLE_INSTANCE_TYPE_VALIDATION": "true"}
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("moto_server")), "-H", "127.0.0.1", "-p", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            if port_open(port):
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("moto_server did not start")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:  # busy in a request on a loaded machine: its state is throw-away
            process.kill()
            process.wait(timeout=10)


@pytest.fixture(scope="module")
def aws_client(moto_url: str) -> Callable[[str], Any]:
    """``aws_client("ec2")``: a boto3 client of the moto server."""

    def make(service: str) -> Any:
        return boto3.client(
            service,
            endpoint_url=moto_url,
            region_name=REGION,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )

    return make


def leftovers(
    aws_client: Callable[[str], Any], keep_buckets: frozenset[str] = frozenset()
) -> dict[str, list]:
    """Everything billable still there: live instances, volumes, non-default security groups, key
    pairs, buckets (but ``keep_buckets``). Empty lists when a teardown left nothing."""
    ec2 = aws_client("ec2")
    instances = [
        i["InstanceId"]
        for r in ec2.describe_instances()["Reservations"]
        for i in r["Instances"]
        if i["State"]["Name"] not in ("terminated", "shutting-down")
    ]
    return {
        "instances": instances,
        "volumes": [v["VolumeId"] for v in ec2.describe_volumes()["Volumes"]],
        "security_groups": [
            g["GroupId"]
            for g in ec2.describe_security_groups()["SecurityGroups"]
            if g["GroupName"] != "default"
        ],
        "key_pairs": [k["KeyName"] for k in ec2.describe_key_pairs()["KeyPairs"]],
        "buckets": [
            b["Name"] for b in aws_client("s3").list_buckets()["Buckets"] if b["Name"] not in keep_buckets
        ],
    }


def run_options(moto_url: str, ami: str, **more: Any) -> dict[str, Any]:
    """A run's ``aws`` options against this moto server: a small host that never becomes ready
    (moto boots no machine), so a provision fails 3 s after its apply."""
    return {
        "orchestrator_cidr": ["203.0.113.7/32"],
        "endpoint_url": moto_url,
        "ami_id": ami,
        "instance_type": "m5.large",
        "data_volume_gb": 10,
        "ready_timeout_s": 3,
        **more,
    }
