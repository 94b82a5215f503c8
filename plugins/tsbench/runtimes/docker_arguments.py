"""What the Docker runtime asks the engine for, computed without an engine (pure functions).

``run_arguments`` turns a ``ContainerSpec`` into the keyword arguments of the docker SDK's
``client.containers.create``; names, labels, the healthcheck (nanoseconds) and the per-instance secrets
are derived here too, so every decision about a container can be tested where no engine runs.
"""

from __future__ import annotations

import dataclasses
import io
import re
import tarfile
from collections.abc import Mapping
from typing import Any

from docker.types import Ulimit

from tsbench.runtimes.container_spec import ContainerSpec, HealthCheck

NS_PER_S = 1_000_000_000
LABEL_INSTANCE = "tsbench.instance"
LABEL_RUN = "tsbench.run"
LABEL_TARGET = "tsbench.target"
LABEL_FLAVOUR = "tsbench.flavour"
_UNSAFE = re.compile(r"[^a-zA-Z0-9_.-]+")


def resource_name(instance: str, *parts: str) -> str:
    """``tsbench-<instance>[-<part>…]`` with characters Docker refuses in names replaced by ``-``."""
    name = "-".join(["tsbench", instance, *parts])
    return _UNSAFE.sub("-", name).strip("-.")


def container_name(instance: str) -> str:
    return resource_name(instance)


def volume_names(spec: ContainerSpec, instance: str) -> dict[str, str]:
    """One named volume per data path: container path → volume name (``/var/lib/x/db`` →
    ``tsbench-<instance>-var-lib-x-db``)."""
    return {
        path: resource_name(instance, path.strip("/").replace("/", "-") or "root") for path in spec.data_paths
    }


def labels(instance: str, target: str, flavour: str, run: str | None = None) -> dict[str, str]:
    """Labels on every container and volume of an instance (teardown finds them by ``tsbench.instance``)."""
    body = {LABEL_INSTANCE: instance, LABEL_TARGET: target, LABEL_FLAVOUR: flavour}
    if run:
        body[LABEL_RUN] = run
    return body


def healthcheck_arguments(check: HealthCheck) -> dict[str, Any]:
    """The engine's healthcheck: a command run without a shell (``CMD``), durations in nanoseconds."""
    command = list(check.command)
    test = command if command[0] in ("CMD", "CMD-SHELL", "NONE") else ["CMD", *command]
    return {
        "test": test,
        "interval": int(check.interval_s * NS_PER_S),
        "timeout": int(check.timeout_s * NS_PER_S),
        "retries": check.retries,
        "start_period": int(check.start_period_s * NS_PER_S),
    }


def health_deadline_s(check: HealthCheck) -> float:
    """How long a server may take to become healthy before the engine would call it unhealthy."""
    return check.start_period_s + check.retries * (check.interval_s + check.timeout_s)


def container_environment(spec: ContainerSpec, values: Mapping[str, str]) -> dict[str, str]:
    """The container's environment: the spec's plain variables plus its secret ones filled from
    ``values`` (orchestrator variable → value). Raises KeyError naming a missing variable."""
    env = dict(spec.environment)
    for variable, name in spec.secret_env.items():
        env[variable] = values[name]
    return env


def port_bindings(
    spec: ContainerSpec, host_ports: Mapping[str, int | None], publish_ip: str
) -> dict[str, tuple[str, int | None]]:
    """``{"<container port>/tcp": (host ip, host port or None = engine's choice)}`` for every role."""
    return {f"{port}/tcp": (publish_ip, host_ports.get(role)) for role, port in spec.ports.items()}


def run_arguments(
    spec: ContainerSpec,
    instance: str,
    values: Mapping[str, str],
    host_ports: Mapping[str, int | None],
    publish_ip: str,
    container_labels: Mapping[str, str],
) -> dict[str, Any]:
    """Keyword arguments of ``client.containers.create`` for one server instance.

    ``values`` maps the spec's orchestrator variables to secret values (only ``secret_env`` ones reach
    the container); ``host_ports`` maps roles to host ports (None: the engine picks one); ports are
    published on ``publish_ip`` only. Data paths become the instance's named volumes.
    """
    arguments: dict[str, Any] = {
        "image": spec.image,
        "name": container_name(instance),
        "environment": container_environment(spec, values),
        "ports": port_bindings(spec, host_ports, publish_ip),
        "volumes": {
            name: {"bind": path, "mode": "rw"} for path, name in volume_names(spec, instance).items()
        },
        "healthcheck": healthcheck_arguments(spec.healthcheck),
        "labels": dict(container_labels),
        "restart_policy": {"Name": "no"},  # a crash must show, not be hidden by a restart
    }
    if spec.command:
        arguments["command"] = list(spec.command)
    if spec.ulimits:
        arguments["ulimits"] = [
            Ulimit(name=name, soft=soft, hard=hard) for name, (soft, hard) in sorted(spec.ulimits.items())
        ]
    if spec.shm_size:
        arguments["shm_size"] = spec.shm_size
    if spec.user:
        arguments["user"] = spec.user
    return arguments


def files_archive(files: Mapping[str, str]) -> bytes:
    """A tar archive of the spec's configuration files (absolute container paths, mode 0644), to
    extract at ``/`` with ``put_archive`` (the engine creates missing parent directories)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path, text in sorted(files.items()):
            data = text.encode()
            info = tarfile.TarInfo(path.lstrip("/"))
            info.size = len(data)
            info.mode = 0o644
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def config_text(spec: ContainerSpec, flavour: str) -> str:
    """The container's configuration for the report (secret variables by name, never by value)."""
    lines = [f"# docker runtime, flavour {flavour}", f"image: {spec.image}"]
    if spec.command:
        lines.append("command: " + " ".join(spec.command))
    lines.append("ports: " + ", ".join(f"{role}={port}/tcp" for role, port in spec.ports.items()))
    lines.append("volumes: " + ", ".join(spec.data_paths))
    lines += [f"env {key}={value}" for key, value in sorted(spec.environment.items())]
    lines += [f"env {key}=<secret from {name}>" for key, name in sorted(spec.secret_env.items())]
    lines += [f"ulimit {name}={soft}:{hard}" for name, (soft, hard) in sorted(spec.ulimits.items())]
    if spec.shm_size:
        lines.append(f"shm_size: {spec.shm_size}")
    lines.append("healthcheck: " + " ".join(spec.healthcheck.command))
    for path, text in sorted(spec.files.items()):
        lines += [f"--- file {path}", text.rstrip("\n")]
    return "\n".join(lines) + "\n"


def spec_to_json(spec: ContainerSpec) -> dict[str, Any]:
    """The spec as JSON (kept in the instance state: ``attach`` uses the spec that was provisioned)."""
    body = dataclasses.asdict(spec)
    body["ulimits"] = {name: list(limits) for name, limits in spec.ulimits.items()}
    return body


def spec_from_json(body: Mapping[str, Any]) -> ContainerSpec:
    fields = dict(body)
    check = dict(fields.pop("healthcheck"))
    check["command"] = tuple(check["command"])
    fields["healthcheck"] = HealthCheck(**check)
    fields["data_paths"] = tuple(fields["data_paths"])
    fields["command"] = tuple(fields.get("command") or ())
    fields["ulimits"] = {
        name: (int(soft), int(hard)) for name, (soft, hard) in (fields.get("ulimits") or {}).items()
    }
    return ContainerSpec(**fields)
