"""The Docker engine as the docker runtime sees it: which engine (``DOCKER_HOST`` or a base URL), a
client for it, whether it runs on this machine and kernel, and engine errors turned into
``TargetError`` naming what was being done. Secrets never reach a message (``redact``)."""

from __future__ import annotations

import contextlib
import os
import platform
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlparse

import docker
import docker.errors
import requests

from tsbench.runtimes.contract import TargetError

if TYPE_CHECKING:
    pass

ClientFactory = Callable[[], docker.DockerClient]
DEFAULT_ENGINE = "unix:///var/run/docker.sock"


def engine_address(base_url: str | None = None) -> str:
    """The engine a client built from the environment talks to (for messages)."""
    return base_url or os.environ.get("DOCKER_HOST") or DEFAULT_ENGINE


def default_client(base_url: str | None = None) -> docker.DockerClient:
    """A client of ``base_url``, else of the environment (``DOCKER_HOST``, ``DOCKER_TLS_VERIFY``,
    ``DOCKER_CERT_PATH``, the Docker CLI context); the API version is negotiated with the engine."""
    if base_url:
        return docker.DockerClient(base_url=base_url, version="auto")
    return docker.from_env()


@contextlib.contextmanager
def engine_call(what: str) -> Iterator[None]:
    """Turn the docker SDK's errors into TargetError naming ``what`` was being done."""
    try:
        yield
    except docker.errors.APIError as error:
        raise TargetError(f"{what}: {error.explanation or error}") from None
    except (docker.errors.DockerException, requests.RequestException) as error:
        raise TargetError(f"{what}: {error}") from None


def engine_is_local(client: docker.DockerClient) -> bool:
    """True when the client reaches the engine over a local socket or loopback TCP."""
    base = client.api.base_url
    if base.startswith(("http+docker://localhost", "http+docker://localnpipe")):
        return True
    return urlparse(base).hostname in ("127.0.0.1", "localhost", "::1")


def client_address(client: docker.DockerClient) -> str:
    """The engine a connected client talks to (``unix:///…`` for a socket, else its URL)."""
    socket_path = getattr(getattr(client.api, "_custom_adapter", None), "socket_path", None)
    return f"unix://{socket_path}" if socket_path else client.api.base_url


def engine_hostname(client: docker.DockerClient) -> str | None:
    """The remote engine's host name (where its published ports are), when the client shows it."""
    adapter = getattr(client.api, "_custom_adapter", None)
    for candidate in (getattr(adapter, "ssh_host", None), client.api.base_url):
        if candidate:
            host = urlparse(candidate if "://" in candidate else f"ssh://{candidate}").hostname
            if host and host not in ("ssh", "localhost"):
                return host
    return None


def shares_our_kernel(client: docker.DockerClient) -> tuple[bool, str]:
    """Whether the engine's containers run on this machine's kernel (so this process can drop the page
    cache they use); with the reason when not."""
    if not engine_is_local(client):
        return False, f"the engine at {client.api.base_url} runs on another host"
    with engine_call("docker info"):
        info = client.info()
    if "Docker Desktop" in str(info.get("OperatingSystem", "")):
        return False, "the engine runs in Docker Desktop's virtual machine"
    if info.get("KernelVersion") != platform.release():
        return (
            False,
            f"the engine runs on kernel {info.get('KernelVersion')}, this process on {platform.release()}",
        )
    return True, ""


def redact(text: str, values: Mapping[str, str]) -> str:
    for value in values.values():
        if value:
            text = text.replace(value, "***")
    return text
