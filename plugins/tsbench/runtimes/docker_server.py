"""One server instance of the docker runtime (``DockerServer``): its container and state file, readiness
(engine healthcheck + the target answering over its own protocol), start/stop, cold restart, bytes on
disk, usage probe and the facts reported about image and engine. ``DockerRuntime`` (``docker.py``)
creates them."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import docker
import docker.errors

from tsbench.runtimes.container_spec import ContainerSpec
from tsbench.runtimes.contract import Endpoint, ServedTarget, TargetError
from tsbench.runtimes.docker_arguments import (
    config_text,
    health_deadline_s,
)
from tsbench.runtimes.docker_engine import (
    engine_call,
    redact,
)
from tsbench.runtimes.docker_stats import cpu_ns, cpu_percent, read_time_ns, resident_bytes

if TYPE_CHECKING:
    from docker.models.containers import Container


class ContainerHost(Protocol):
    """What a server container needs of its runtime (``DockerRuntime`` is one; ``docker.py``
    imports this module, so this one names no class of it)."""

    root: Path
    ready_timeout_s: float | None

    def client(self) -> docker.DockerClient: ...
    def save_record(self, instance: str, state: Mapping[str, Any]) -> None: ...
    def instance_secrets(
        self, instance: str, spec: ContainerSpec, state: Mapping[str, Any]
    ) -> dict[str, str]: ...
    def drop_caches(self, image: str) -> tuple[bool, str]: ...


class ContainerUsageProbe:
    """CPU % since the previous ``measure`` and resident memory of one container (engine statistics)."""

    def __init__(self, container: Container):
        self.container = container
        self._last: tuple[int, int] | None = None
        self._one_shot = True

    def _stats(self) -> dict[str, Any]:
        if self._one_shot:
            try:  # one reading, at once (API ≥ 1.41); otherwise the engine waits for a second sample
                return self.container.stats(stream=False, one_shot=True)
            except docker.errors.InvalidVersion:
                self._one_shot = False
        return self.container.stats(stream=False)

    def measure(self) -> tuple[float, int]:
        stats = self._stats()
        reading = (read_time_ns(stats.get("read")) or time.time_ns(), cpu_ns(stats))
        last, self._last = self._last, reading
        rss = resident_bytes(stats.get("memory_stats") or {})
        return (0.0 if last is None else cpu_percent(last, reading)), rss


class DockerServer:
    """One server container (create with ``DockerRuntime``, its ``ContainerHost``)."""

    def __init__(
        self,
        runtime: ContainerHost,
        instance: str,
        state: dict[str, Any],
        target_type: type[ServedTarget],
        spec: ContainerSpec,
    ):
        self.runtime = runtime
        self.instance = instance
        self.state = state
        self.target_type = target_type
        self.spec = spec

    # -- state -----------------------------------------------------------------------------------
    @property
    def home(self) -> Path:
        return self.runtime.root / self.instance

    def save(self) -> None:
        self.runtime.save_record(self.instance, self.state)

    def secret_values(self) -> dict[str, str]:
        return self.runtime.instance_secrets(self.instance, self.spec, self.state)

    def endpoint(self) -> Endpoint:
        return self.spec.endpoint(self.state["host"], self.state["ports"], self.secret_values())

    # -- engine ----------------------------------------------------------------------------------
    def container(self) -> Container:
        client = self.runtime.client()
        with engine_call(f"{self.instance}: container {self.state['container']}"):
            return client.containers.get(self.state["container"])

    def logs_tail(self, container: Container, lines: int = 20) -> str:
        try:
            text = container.logs(tail=lines).decode(errors="replace")
        except docker.errors.DockerException as error:
            text = f"(no logs: {error})"
        return redact(text.rstrip(), self.secret_values())

    def published_ports(self, container: Container) -> dict[str, int]:
        """Host ports the engine published for each role (after start)."""
        published = container.attrs.get("NetworkSettings", {}).get("Ports") or {}
        ports = {}
        for role, port in self.spec.ports.items():
            bindings = published.get(f"{port}/tcp") or []
            if bindings:
                ports[role] = int(bindings[0]["HostPort"])
        return ports

    def target_answers(self) -> None:
        """The target's own ready check: connect and ask the server its version."""
        target = self.target_type.answering(self.endpoint())
        try:
            target.version()
        finally:
            target.close()

    def wait_ready(self) -> float:
        """Until the engine reports the container healthy and the target answers; returns seconds.
        TargetError with the container's log tail when it exits, turns unhealthy or times out."""
        started = time.monotonic()
        timeout = self.runtime.ready_timeout_s or health_deadline_s(self.spec.healthcheck) + 60.0
        obstacle = "not inspected yet"
        while True:
            container = self.container()
            state = container.attrs.get("State", {})
            health = (state.get("Health") or {}).get("Status")
            if container.status in ("exited", "dead"):
                raise TargetError(
                    f"{self.instance}: container {container.status} (exit code {state.get('ExitCode')}) "
                    f"while starting:\n{self.logs_tail(container)}"
                )
            if health == "unhealthy":
                checks = (state.get("Health") or {}).get("Log") or [{}]
                output = redact(str(checks[-1].get("Output", "")).strip(), self.secret_values())
                raise TargetError(
                    f"{self.instance}: healthcheck failed ({output[-300:]}):\n{self.logs_tail(container)}"
                )
            if container.status == "running" and health in (None, "healthy"):
                ports = self.published_ports(container)
                if ports != self.state["ports"]:
                    self.state["ports"] = ports
                    self.save()
                try:
                    self.target_answers()
                    return time.monotonic() - started
                except Exception as error:  # any failure to answer means "not yet"
                    obstacle = f"healthy, but the target does not answer yet: {error}"
            else:
                obstacle = f"container {container.status}, health {health or 'none'}"
            if time.monotonic() - started > timeout:
                raise TargetError(
                    f"{self.instance}: not ready after {timeout:.0f} s ({obstacle}):\n"
                    + self.logs_tail(container)
                )
            time.sleep(0.5)

    def start(self) -> float:
        """Start the container and wait until ready; returns seconds taken."""
        started = time.monotonic()
        container = self.container()
        with engine_call(f"{self.instance}: starting container {container.name}"):
            container.start()
        self.wait_ready()
        return time.monotonic() - started

    def stop(self) -> float:
        """Stop (the image's stop signal, SIGKILL after the spec's ``stop_timeout_s``); returns seconds."""
        started = time.monotonic()
        container = self.container()
        with engine_call(f"{self.instance}: stopping container {container.name}"):
            container.stop(timeout=math.ceil(self.spec.stop_timeout_s))
        return time.monotonic() - started

    # -- Server protocol -------------------------------------------------------------------------
    def usage_probe(self) -> ContainerUsageProbe:
        return ContainerUsageProbe(self.container())

    def restart_cold(self) -> dict[str, Any]:
        """Stop the container → drop the OS page cache where possible → start → wait until ready."""
        stop_s = self.stop()
        container = self.container()
        was_down = container.status != "running"
        dropped, how = self.runtime.drop_caches(self.spec.image)
        start_s = self.start()
        return {
            "restarted": True,
            "was_down": was_down,
            "os_cache_dropped": dropped,
            "os_cache_note": how,
            "stop_s": round(stop_s, 3),
            "start_s": round(start_s, 3),
        }

    def disk_bytes(self) -> int:
        """Blocks allocated under the data paths (``du -sk`` in the running container); when stopped,
        the engine's sizes of the instance's volumes (``docker system df``: apparent bytes)."""
        container = self.container()
        paths = list(self.spec.data_paths)
        if container.status == "running":
            with engine_call(f"{self.instance}: du in container"):
                code, output = container.exec_run(["du", "-sk", *paths], user="0")
            sizes = [line.split()[0] for line in output.decode(errors="replace").splitlines() if line.strip()]
            if len(sizes) == len(paths) and all(s.isdigit() for s in sizes):
                return sum(int(s) for s in sizes) * 1024  # exit code 1 only means a file vanished meanwhile
            failure = f"du exited {code}: {output.decode(errors='replace')[-200:]}"
        else:
            failure = f"container {container.status}"
        client = self.runtime.client()
        with engine_call(f"{self.instance}: docker system df"):
            volumes = {v["Name"]: v for v in client.df().get("Volumes") or []}
        sizes = [
            (volumes.get(name) or {}).get("UsageData", {}).get("Size", -1)
            for name in self.state["volumes"].values()
        ]
        if any(size is None or size < 0 for size in sizes):
            raise TargetError(
                f"{self.instance}: no size for the data volumes ({failure}; the engine has none)"
            )
        return int(sum(sizes))

    def facts(self) -> dict[str, Any]:
        """Image (tag, id, registry digest), engine, container settings and the spec's note; no secrets."""
        client = self.runtime.client()
        with engine_call(f"{self.instance}: inspecting image and engine"):
            image = client.images.get(self.spec.image)
            version = client.version()
        digests = [
            d for d in image.attrs.get("RepoDigests") or [] if d.split("@")[0].endswith(self.spec.repository)
        ]
        digest = digests[0].split("@", 1)[1] if digests else ""
        return {
            "server_binary": f"{self.spec.image} ({digest or image.id})",
            "config": config_text(self.spec, self.state["flavour"]),
            "runtime": "docker",
            "flavour": self.state["flavour"],
            "image": self.spec.image,
            "image_id": image.id,
            "image_digest": digest,
            "note": self.spec.note,
            "engine": {
                "address": self.state["engine"],
                "version": version.get("Version"),
                "api_version": version.get("ApiVersion"),
                "os": version.get("Os"),
                "arch": version.get("Arch"),
                "kernel": version.get("KernelVersion"),
            },
            "container": {
                "name": self.state["container"],
                "ports": dict(self.state["ports"]),
                "volumes": dict(self.state["volumes"]),
                "ulimits": {k: list(v) for k, v in self.spec.ulimits.items()},
                "shm_size": self.spec.shm_size,
                "stop_timeout_s": self.spec.stop_timeout_s,
            },
        }
