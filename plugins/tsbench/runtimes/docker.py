"""Docker runtime: each target's server as a container of its official image (``<target>/container.py``).

State of one instance lives in ``<state root>/<instance>/`` (the local runtime's root, ``$TSBENCH_STATE``
or ``/var/tmp/tsbench``; the folder is 0700)::

    container.json   target, flavour, image, container and volume names, published ports, engine address
    secrets.json     random passwords/tokens of this instance (0600; never logged, never in results)

so that another process (a later pipeline task) can ``attach`` by instance name. With a ``handoff``
folder (the target's folder of the run, which the run store carries between workers) the record also
goes there (``docker_instance.json``, no secrets), and with the deployment key ``$TSBENCH_SECRET_KEY``
the generated secrets are derived rather than random (``runtimes.secret_key``): a task on another
worker attaches to the container and tears it down — when it reaches the same engine (a worker on
another machine than a local engine's refuses, ``ElsewhereError``). Containers and volumes
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

Modules: this one (``DockerRuntime``: provision, attach, teardown, images, cache drop),
``docker_server`` (one instance), ``docker_engine`` (engine address, client, errors),
``docker_arguments`` (what is asked of the engine, pure), ``docker_stats`` (CPU/memory readings).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import docker
import docker.errors
from docker.errors import NotFound  # a container or volume that is gone already: fine at teardown

from tsbench.results.files import write_private_json
from tsbench.runtimes.container_spec import ContainerSpec, pick_container
from tsbench.runtimes.contract import ServedTarget, TargetError, class_at, class_path
from tsbench.runtimes.disk import drop_os_caches
from tsbench.runtimes.docker_arguments import (
    LABEL_INSTANCE,
    container_name,
    files_archive,
    labels,
    run_arguments,
    spec_from_json,
    spec_to_json,
    volume_names,
)
from tsbench.runtimes.docker_engine import (
    DEFAULT_ENGINE,
    ClientFactory,
    client_address,
    default_client,
    engine_address,
    engine_call,
    engine_hostname,
    engine_is_local,
    redact,
    shares_our_kernel,
)
from tsbench.runtimes.docker_server import DockerServer
from tsbench.runtimes.handoff import ElsewhereError, read_shared_record, write_shared_record
from tsbench.runtimes.local import state_root
from tsbench.runtimes.ports import free_ports
from tsbench.runtimes.secret_key import deployment_key, derived_secret, instance_secret_values

if TYPE_CHECKING:
    from tsbench.runtimes.options import DockerOptions

__all__ = ["DEFAULT_ENGINE", "DockerRuntime", "DockerServer", "default_client", "engine_address", "redact"]

RECORD = "docker_instance.json"  # in the handoff folder
DROP_CACHES = "sync && echo 3 > /proc/sys/vm/drop_caches"


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
        handoff: Path | None = None,
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
        self.handoff = handoff  # the target's run folder: the record every worker reads
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
        """Values of the spec's secret variables for ``instance``: generated ones derived from the
        deployment key or else from its ``secrets.json``, the others from ``secret_source``."""
        stored: dict[str, str] = {}
        path = self.root / instance / "secrets.json"
        if path.is_file():
            stored = json.loads(path.read_text())
        key = deployment_key()
        values = {}
        for name in spec.secret_names():
            if name not in state.get("generated_secrets", ()):
                value = self.secret_source(name)
            else:
                value = derived_secret(key, instance, name) if key else stored.get(name)
            if not value:
                raise TargetError(f"{instance}: secret {name} is neither set nor stored for this instance")
            values[name] = value
        return values

    # -- Runtime protocol ------------------------------------------------------------------------
    def provision(self, target_type: type[ServedTarget], instance: str) -> DockerServer:
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
        self, target_type: type[ServedTarget], instance: str, flavour: str, spec: ContainerSpec
    ) -> DockerServer:
        """``provision`` with a given container spec (``provision`` picks the target's own)."""
        target = target_type.name
        client = self.client()
        self.teardown(instance)
        home = self.root / instance
        home.mkdir(parents=True, exist_ok=True)
        home.chmod(0o700)
        values, generated = instance_secret_values(spec, instance, self.secret_source)
        if not deployment_key():  # random: kept for the later tasks (derived ones never are)
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
            "target_class": class_path(target_type),
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
        """The instance provisioned earlier (possibly by another process, or another worker)."""
        state = self.record(instance)
        if state is None:
            raise TargetError(f"no docker server instance {instance!r} under {self.root}")
        target_type = class_at(state["target_class"])
        return DockerServer(self, instance, state, target_type, spec_from_json(state["spec"]))

    def teardown(self, instance: str) -> None:
        """Remove the instance's containers and volumes (found by label and by the state file) and
        its state folder. Never raises for a missing instance; raises when state exists but the engine
        cannot be reached (its containers would be left behind)."""
        home = self.root / instance
        state: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError):
            state = self.record(instance) or {}
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
        if state and self.handoff is not None:
            write_shared_record(self.handoff, RECORD, instance, {**state, "stage": "removed"})
        shutil.rmtree(home, ignore_errors=True)

    # -- records ---------------------------------------------------------------------------------
    def record(self, instance: str) -> dict[str, Any] | None:
        """The instance's state: the run folder's record where there is one (it says when another
        worker removed the container; ElsewhereError when its engine is a socket of another
        machine), else this worker's ``container.json``; None when there is neither or the
        container was removed."""
        shared = read_shared_record(self.handoff, RECORD, instance) if self.handoff is not None else None
        if shared is not None:
            if shared.state.get("stage") == "removed":
                return None
            if str(shared.state.get("engine", "")).startswith("unix://") and not shared.written_here:
                raise ElsewhereError(
                    f"docker instance {instance!r} runs on the engine {shared.state['engine']} of "
                    f"{shared.host}, a socket this worker's machine does not have: route the branch to "
                    "that machine's workers, or use an engine every worker reaches (docker.base_url "
                    "tcp:// or ssh://)"
                )
            return shared.state
        path = self.root / instance / "container.json"
        return json.loads(path.read_text()) if path.is_file() else None

    def save_record(self, instance: str, state: Mapping[str, Any]) -> None:
        """``container.json`` (0600) and, with a handoff folder, the run folder's record."""
        write_private_json(self.root / instance / "container.json", dict(state))
        if self.handoff is not None:
            write_shared_record(self.handoff, RECORD, instance, {**state, "stage": "provisioned"})

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
