"""A real MinIO server for tests that talk S3 (shared fixture module).

Use it from any test module (``tests/`` is on ``sys.path`` because of ``tests/conftest.py``)::

    pytest_plugins = ("integration.minio",)   # registers the ``minio_server`` fixture

    if TYPE_CHECKING:
        from integration.minio import MinioServer

    def test_something(minio_server: MinioServer) -> None:
        s3 = minio_server.client()
        bucket = minio_server.new_bucket()

The session-scoped ``minio_server`` fixture (``running_minio`` outside pytest) installs MinIO with
the project's own ``scripts/install_minio.sh`` (a ``go install`` of about 5 minutes on a fresh
machine, instant once built), starts ``minio server`` on free loopback ports with a random root
user and password for the session, waits for ``/minio/health/live``, yields the connection facts
and stops the server (SIGTERM, then SIGKILL) at the end. The data lives in a pytest temporary
folder.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

ROOT = Path(__file__).resolve().parents[2]
INSTALL_TIMEOUT_S = 1800
READY_TIMEOUT_S = 60


@dataclass(frozen=True)
class MinioServer:
    """Connection facts of a running MinIO server."""

    endpoint_url: str
    access_key: str
    secret_key: str
    region: str
    data_dir: Path
    log_path: Path

    def client(self, **overrides: Any) -> Any:
        """A boto3 S3 client for this server (``overrides`` replace client arguments)."""
        import boto3
        from botocore.config import Config

        arguments = {
            "endpoint_url": self.endpoint_url,
            "aws_access_key_id": self.access_key,
            "aws_secret_access_key": self.secret_key,
            "region_name": self.region,
            "config": Config(
                signature_version="s3v4", s3={"addressing_style": "path"}, retries={"max_attempts": 2}
            ),
            **overrides,
        }
        return boto3.client("s3", **arguments)

    def aws_environment(self) -> dict[str, str]:
        """The AWS variables that point boto3 and pyarrow's S3 at this server."""
        return {
            "AWS_ENDPOINT_URL_S3": self.endpoint_url,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_DEFAULT_REGION": self.region,
        }

    def new_bucket(self, stem: str = "tsbench") -> str:
        """Create a bucket with a fresh name and return the name. ``/minio/health/live`` answers before
        the server has initialised its object layer: a bucket asked for then is refused with
        ``XMinioServerNotInitialized`` (seen on a loaded machine), so that refusal is retried for 60 s."""
        name = f"{stem}-{secrets.token_hex(4)}"
        deadline = time.monotonic() + 60
        while True:
            try:
                self.client().create_bucket(Bucket=name)
                return name
            except ClientError as error:
                starting = error.response.get("Error", {}).get("Code") == "XMinioServerNotInitialized"
                if not starting or time.monotonic() > deadline:
                    raise
                time.sleep(0.5)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def install_minio() -> Path:
    """Run ``scripts/install_minio.sh`` (idempotent); returns the binary's path."""
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "install_minio.sh")],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"scripts/install_minio.sh failed ({done.returncode}):\n{done.stderr[-3000:]}")
    binary = Path(done.stdout.strip().splitlines()[-1])
    if not os.access(binary, os.X_OK):
        raise RuntimeError(f"scripts/install_minio.sh printed {binary}, which is not an executable")
    return binary


def _wait_ready(url: str, process: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"minio exited with {process.returncode}:\n{log_path.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"minio not ready after {READY_TIMEOUT_S} s:\n{log_path.read_text()[-3000:]}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=15)


@pytest.fixture(scope="session")
def minio_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MinioServer]:
    with running_minio(tmp_path_factory.mktemp("minio")) as server:
        yield server


@contextmanager
def running_minio(folder: Path) -> Iterator[MinioServer]:
    """A MinIO server with its data and log in ``folder`` (also for benches), stopped on exit."""
    binary = install_minio()
    data_dir, log_path = folder / "data", folder / "minio.log"
    data_dir.mkdir()
    access_key = f"tsbench-{secrets.token_hex(4)}"
    secret_key = secrets.token_urlsafe(24)
    port, console = free_port(), free_port()
    env = {**os.environ, "MINIO_ROOT_USER": access_key, "MINIO_ROOT_PASSWORD": secret_key}
    env.pop("MINIO_VOLUMES", None)
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [
                str(binary),
                "server",
                str(data_dir),
                "--address",
                f"127.0.0.1:{port}",
                "--console-address",
                f"127.0.0.1:{console}",
                "--quiet",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    try:
        _wait_ready(f"http://127.0.0.1:{port}/minio/health/live", process, log_path)
        yield MinioServer(f"http://127.0.0.1:{port}", access_key, secret_key, "us-east-1", data_dir, log_path)
    finally:
        _stop(process)
