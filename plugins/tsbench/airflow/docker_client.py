"""The docker runtime's engine client from Airflow: the Docker provider's ``DockerHook`` when the
connection ``tsbench_docker`` exists, else the environment (``docker.from_env()``).

Connection ``tsbench_docker`` (type docker), every field optional: host/port/login/password = a
container registry the hook logs in to before images are pulled (as ``DockerHook`` does); extra
``base_url`` (the engine, default ``DOCKER_HOST`` or the local socket), ``tls`` (true: TLS with default
options) or ``ca_cert``/``client_cert``/``client_key`` (file paths), ``version`` (API version, default:
negotiated), ``timeout`` (seconds). Credentials stay in the connection; nothing here logs them.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable
from typing import Any

import docker
import docker.errors
from docker.constants import DEFAULT_TIMEOUT_SECONDS

from tsbench.runtimes.docker import DEFAULT_ENGINE, default_client, engine_address
from tsbench.targets.base import TargetError

log = logging.getLogger("tsbench.airflow")
DOCKER_CONNECTION = "tsbench_docker"


class _ClientOfHook(docker.DockerClient):
    """The SDK's high-level client around the hook's low-level ``APIClient`` (already pinged and
    logged in to the registry)."""

    def __init__(self, api: docker.APIClient):
        self.api = api


def docker_connection(conn_id: str = DOCKER_CONNECTION) -> Any | None:
    """The Airflow connection ``conn_id``, or None when it is not defined."""
    from airflow.sdk import Connection
    from airflow.sdk.exceptions import AirflowNotFoundException, AirflowRuntimeError

    try:
        return Connection.get(conn_id)
    except (AirflowNotFoundException, AirflowRuntimeError, LookupError) as error:
        log.info(
            "no Airflow connection %s (%s); the Docker engine comes from the environment",
            conn_id,
            type(error).__name__,
        )
        return None


def _tls(extra: dict[str, Any]) -> Any:
    from airflow.providers.docker.hooks.docker import DockerHook

    if extra.get("ca_cert") and extra.get("client_cert") and extra.get("client_key"):
        return DockerHook.construct_tls_config(
            ca_cert=extra["ca_cert"],
            client_cert=extra["client_cert"],
            client_key=extra["client_key"],
            verify=bool(extra.get("tls_verify", True)),
        )
    return bool(extra.get("tls", False))


def docker_client(conn_id: str = DOCKER_CONNECTION, base_url: str | None = None) -> docker.DockerClient:
    """A client of the engine, checked with a ping. ``base_url`` (the run's ``docker.base_url``) is
    used unless the connection's extra names one. TargetError naming the engine when none answers."""
    conn = docker_connection(conn_id)
    if conn is None:
        try:
            return default_client(base_url)
        except docker.errors.DockerException as error:
            raise TargetError(f"no Docker engine at {engine_address(base_url)}: {error}") from None
    from airflow.providers.docker.hooks.docker import DockerHook

    extra = conn.extra_dejson
    url = extra.get("base_url") or base_url or os.environ.get("DOCKER_HOST") or DEFAULT_ENGINE
    hook = DockerHook(
        docker_conn_id=conn_id if conn.host else None,  # no registry named: no login
        base_url=url,
        version=extra.get("version"),
        tls=_tls(extra) or None,
        timeout=int(extra.get("timeout", DEFAULT_TIMEOUT_SECONDS)),
    )
    try:
        api = hook.get_conn()
    except Exception as error:  # AirflowException (no engine answered) or the registry refused the login
        raise TargetError(f"no Docker engine at {url} (Airflow connection {conn_id}): {error}") from None
    return _ClientOfHook(api)


def docker_client_factory(
    base_url: str | None = None, conn_id: str = DOCKER_CONNECTION
) -> Callable[[], docker.DockerClient]:
    """What ``DockerRuntime(client_factory=…)`` takes: the engine is reached only when first needed."""
    return functools.partial(docker_client, conn_id, base_url)
