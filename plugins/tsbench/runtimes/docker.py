"""Docker runtime: each target's server as a container of its official image (``<target>/container.py``).

State of one instance lives in ``<state root>/<instance>/`` (the local runtime's root, ``$TSBENCH_STATE``
or ``/var/tmp/tsbench``; the folder is 0700)::

    container.json   target, flavour, image, container and volume names, published ports, engine address
    secrets.json     passwords/tokens generated for this instance (0600; never logged, never in results)

so that another process (a later pipeline task) can ``attach`` by instance name. Containers and volumes
carry the labels ``tsbench.instance`` (+ ``tsbench.target``, ``tsbench.flavour``, ``tsbench.run``), so
``teardown`` also finds what a crashed provision left without state.

Provision: pull the pinned image (unless the engine has it), create one named volume per data path,
create the container (ports published on free host ports — on 127.0.0.1 when the engine is local, else
engine-assigned on all interfaces of the engine's host), copy the spec's configuration files in, start,
and wait until the engine reports the healthcheck healthy *and* the target answers (``Target.version()``
over its own protocol). Secrets: the orchestrator variables a spec names are read from the environment
(or ``secret_source``), else generated per instance.

Measurements: CPU and memory from the engine's container statistics (``docker_stats``); bytes on disk
by ``du -sk`` over the data paths inside the running container (blocks allocated, like the local
runtime), or the engine's volume sizes (``docker system df``, apparent bytes) when it is stopped.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import math
import os
import platform
import shutil
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

import docker
import docker.errors
import pyarrow as pa
import requests
from docker.errors import NotFound  # a container or volume that is gone already: fine at teardown

from tsbench.results.files import write_private_json
from tsbench.runtimes.container_spec import ContainerSpec, pick_container, secret_values
from tsbench.runtimes.docker_arguments import (
    LABEL_INSTANCE,
    config_text,
    container_name,
    files_archive,
    health_deadline_s,
    labels,
    run_arguments,
    spec_from_json,
    spec_to_json,
    volume_names,
)
from tsbench.runtimes.docker_stats import cpu_ns, cpu_percent, read_time_ns, resident_bytes
from tsbench.runtimes.local import drop_os_caches, free_ports, state_root
from tsbench.targets.base import Endpoint, Target, TargetError

if TYPE_CHECKING:
    from docker.models.containers import Container

    from tsbench.runtimes.options import DockerOptions

ClientFactory = Callable[[], docker.DockerClient]
DEFAULT_ENGINE = "unix:///var/run/docker.sock"
READY_USE_CASE = "cpu-only"  # the ready check only connects; any use case will do
DROP_CACHES = "sync && echo 3 > /proc/sys/vm/drop_caches"


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
    """One server container (create with ``DockerRuntime``)."""

    def __init__(
        self,
        runtime: DockerRuntime,
        instance: str,
        state: dict[str, Any],
        target_type: type[Target],
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
        write_private_json(self.home / "container.json", self.state)

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
        from tsbench.workload.usecases import get_use_case

        target = self.target_type(self.endpoint(), get_use_case(READY_USE_CASE), pa.table({}))
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


class DockerRuntime:
    """Creates, finds and removes server containers on a Docker engine.

    ``client_factory`` makes the docker SDK client (default: ``base_url``, else the environment; the
    Airflow glue passes one built from the ``tsbench_docker`` connection). ``flavours`` picks a
    container flavour per target (default: the first of its ``CONTAINERS``). ``run`` is written to the
    ``tsbench.run`` label. ``secret_source`` looks up the orchestrator variables a spec names (default:
    the environment). ``endpoint_host`` overrides where clients reach a remote engine's published ports.
    ``drop_caches_privileged`` lets a cold restart drop the page cache of an engine on another kernel
    through a short-lived privileged container (off by default: it needs privileged containers).
    """

    name = "docker"

    def __init__(
        self,
        client_factory: ClientFactory | None = None,
        root: Path | None = None,
        flavours: Mapping[str, str] | None = None,
        run: str | None = None,
        secret_source: Callable[[str], str | None] | None = None,
        base_url: str | None = None,
        endpoint_host: str | None = None,
        drop_caches_privileged: bool = False,
        ready_timeout_s: float | None = None,
    ):
        self.client_factory = client_factory or (lambda: default_client(base_url))
        self.address = engine_address(base_url)
        self.root = root or state_root()
        self.flavours = dict(flavours or {})
        self.run = run
        self.secret_source = secret_source or os.environ.get
        self.endpoint_host = endpoint_host
        self.drop_caches_privileged = drop_caches_privileged
        self.ready_timeout_s = ready_timeout_s
        self._client: docker.DockerClient | None = None

    @classmethod
    def from_options(
        cls,
        options: DockerOptions,
        client_factory: ClientFactory | None = None,
        environment: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> DockerRuntime:
        """The runtime a run spec's ``docker`` options ask for. ``client_factory`` (e.g. the Airflow
        glue's ``docker_client_factory(options.base_url)``) wins over ``options.base_url``;
        ``environment`` is where secrets are looked up (default: this process's environment)."""
        source = environment.get if environment is not None else None
        return cls(
            client_factory=client_factory,
            flavours=options.flavours,
            base_url=options.base_url,
            secret_source=source,
            **kwargs,
        )

    def client(self) -> docker.DockerClient:
        """The engine's client, checked with a ping. TargetError naming the engine tried otherwise."""
        if self._client is None:
            try:
                client = self.client_factory()
                client.ping()
            except TargetError:
                raise
            except Exception as error:  # SDK, transport and Airflow errors alike
                raise TargetError(
                    f"no Docker engine at {self.address}: {error}. runtime=docker needs a running Docker "
                    "engine: start one, or point DOCKER_HOST, the run's docker.base_url or the Airflow "
                    "connection tsbench_docker at one"
                ) from None
            self._client = client
        return self._client

    # -- secrets ---------------------------------------------------------------------------------
    def instance_secrets(
        self, instance: str, spec: ContainerSpec, state: Mapping[str, Any]
    ) -> dict[str, str]:
        """Values of the spec's secret variables for ``instance``: generated ones from its
        ``secrets.json``, the others from ``secret_source``."""
        stored: dict[str, str] = {}
        path = self.root / instance / "secrets.json"
        if path.is_file():
            stored = json.loads(path.read_text())
        values = {}
        for name in spec.secret_names():
            value = (
                stored.get(name) if name in state.get("generated_secrets", ()) else self.secret_source(name)
            )
            if not value:
                raise TargetError(f"{instance}: secret {name} is neither set nor stored for this instance")
            values[name] = value
        return values

    # -- Runtime protocol ------------------------------------------------------------------------
    def provision(self, target_type: type[Target], instance: str) -> DockerServer:
        """Pull, create volumes and the container, start it and wait until ready (a fresh instance:
        whatever an earlier instance of that name left is removed first)."""
        target = target_type.name
        try:
            flavour, spec = pick_container(target, self.flavours.get(target))
        except ValueError as error:
            raise TargetError(str(error)) from None
        problems = spec.problems()
        if problems:
            raise TargetError(f"{target} container {flavour}: " + "; ".join(problems))
        return self.provision_spec(target_type, instance, flavour, spec)

    def provision_spec(
        self, target_type: type[Target], instance: str, flavour: str, spec: ContainerSpec
    ) -> DockerServer:
        """``provision`` with a given container spec (``provision`` picks the target's own)."""
        target = target_type.name
        client = self.client()
        self.teardown(instance)
        home = self.root / instance
        home.mkdir(parents=True, exist_ok=True)
        home.chmod(0o700)
        values, generated = secret_values(spec, self.secret_source)
        write_private_json(home / "secrets.json", {name: values[name] for name in generated})
        self.ensure_image(spec.image)

        local = engine_is_local(client)
        host = self.endpoint_host or ("127.0.0.1" if local else engine_hostname(client))
        if not host:
            raise TargetError(
                f"cannot tell where {client.api.base_url}'s published ports are: set endpoint_host"
            )
        picked = free_ports(len(spec.ports)) if local else [None] * len(spec.ports)
        host_ports: dict[str, int | None] = dict(zip(spec.ports, picked, strict=True))
        tags = labels(instance, target, flavour, self.run)
        volumes = volume_names(spec, instance)
        for name in volumes.values():
            with engine_call(f"{instance}: creating volume {name}"):
                client.volumes.create(name=name, labels=tags)
        publish_ip = "127.0.0.1" if local else "0.0.0.0"
        arguments = run_arguments(spec, instance, values, host_ports, publish_ip, tags)
        with engine_call(f"{instance}: creating container from {spec.image}"):
            container = client.containers.create(**arguments)
        state = {
            "runtime": self.name,
            "target": target,
            "flavour": flavour,
            "image": spec.image,
            "container": container.name,
            "container_id": container.id,
            "volumes": volumes,
            "host": host,
            "ports": {role: port for role, port in host_ports.items() if port is not None},
            "engine": client_address(client),
            "generated_secrets": sorted(generated),
            "target_class": f"{target_type.__module__}:{target_type.__qualname__}",
            "spec": spec_to_json(spec),
        }
        server = DockerServer(self, instance, state, target_type, spec)
        server.save()
        if spec.files:
            with engine_call(f"{instance}: copying configuration files into {container.name}"):
                container.put_archive("/", files_archive(spec.files))
        server.start()
        return server

    def attach(self, instance: str) -> DockerServer:
        """The instance provisioned earlier (possibly by another process)."""
        path = self.root / instance / "container.json"
        if not path.is_file():
            raise TargetError(f"no docker server instance {instance!r} under {self.root}")
        state = json.loads(path.read_text())
        module, _, name = state["target_class"].partition(":")
        target_type = getattr(importlib.import_module(module), name)
        return DockerServer(self, instance, state, target_type, spec_from_json(state["spec"]))

    def teardown(self, instance: str) -> None:
        """Remove the instance's containers and volumes (found by label and by the state file) and
        its state folder. Never raises for a missing instance; raises when state exists but the engine
        cannot be reached (its containers would be left behind)."""
        home = self.root / instance
        state: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError):
            state = json.loads((home / "container.json").read_text())
        try:
            client = self.client()
        except TargetError:
            if state:
                raise
            shutil.rmtree(home, ignore_errors=True)
            return
        selector = {"label": f"{LABEL_INSTANCE}={instance}"}
        with engine_call(f"{instance}: listing containers"):
            containers = {c.name: c for c in client.containers.list(all=True, filters=selector)}
        names = set(containers) | {state.get("container") or container_name(instance)}
        for name in names:
            with engine_call(f"{instance}: removing container {name}"), contextlib.suppress(NotFound):
                (containers.get(name) or client.containers.get(name)).remove(force=True, v=True)
        with engine_call(f"{instance}: listing volumes"):
            volumes = {v.name for v in client.volumes.list(filters=selector)}
        for name in volumes | set((state.get("volumes") or {}).values()):
            with engine_call(f"{instance}: removing volume {name}"), contextlib.suppress(NotFound):
                client.volumes.get(name).remove(force=True)
        shutil.rmtree(home, ignore_errors=True)

    # -- helpers ---------------------------------------------------------------------------------
    def ensure_image(self, image: str) -> None:
        """Pull ``image`` (repository:tag) unless the engine already has it."""
        client = self.client()
        try:
            client.images.get(image)
            return
        except docker.errors.ImageNotFound:
            pass
        except docker.errors.DockerException as error:
            raise TargetError(f"inspecting image {image}: {error}") from None
        repository, tag = image.rsplit(":", 1)
        with engine_call(
            f"pulling {image} (from its registry; log in through the tsbench_docker connection)"
        ):
            client.images.pull(repository, tag=tag)

    def drop_caches(self, image: str) -> tuple[bool, str]:
        """Drop the page cache of the kernel the containers run on; ``(done, how or why not)``."""
        client = self.client()
        same, why_not = shares_our_kernel(client)
        if same:
            if os.geteuid() == 0:
                done, how = drop_os_caches()
                if done:
                    return True, how
                why_not = how
            else:
                why_not = "this process is not root"
        if self.drop_caches_privileged:
            try:
                client.containers.run(
                    image,
                    entrypoint=["sh", "-c"],
                    command=[DROP_CACHES],
                    privileged=True,
                    remove=True,
                    network_mode="none",
                    user="0",
                )
                return True, f"{DROP_CACHES} in a privileged helper container ({why_not})"
            except docker.errors.DockerException as error:
                why_not += f"; privileged helper container failed: {error}"
        return False, f"OS page cache not dropped: {why_not}"
