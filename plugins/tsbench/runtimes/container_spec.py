"""How a target's server runs as a container (the Docker runtime's per-target input).

Every target folder has ``container.py`` defining ``CONTAINERS``: a mapping flavour → ``ContainerSpec``
whose first entry is the default flavour (e.g. two major versions of one server). Images are official
images pinned to an exact version tag (never ``latest``); secrets are named, never written here: a
``secret_env`` entry maps a container variable to the orchestrator's environment variable holding it.
The same spec tells the cloud runtime which ports a VM's server listens on (the container ports) and
how clients log in (``client_*``), so one file describes a target's server outside the local runtime.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from tsbench.runtimes.contract import Endpoint

PINNED_TAG = re.compile(r"^[a-z0-9][a-z0-9._/-]*:[A-Za-z0-9][A-Za-z0-9._-]*(@sha256:[0-9a-f]{64})?$")


@dataclass(frozen=True)
class HealthCheck:
    """A command run inside the container; healthy when it exits 0. Intervals in seconds."""

    command: tuple[str, ...]
    interval_s: float = 2.0
    timeout_s: float = 5.0
    retries: int = 60
    start_period_s: float = 5.0


@dataclass(frozen=True)
class ContainerSpec:
    """One server container.

    ``ports`` maps a port role (the same roles as the target's local ``ServerRecipe``) to the
    container port; the runtime publishes each on a free host port. ``data_paths`` are the container
    directories holding data and WAL (each becomes a named volume: footprint on disk is measured
    there). ``files`` are configuration files written into the container before start
    (container path → text). ``ulimits`` maps a limit name to (soft, hard). ``secret_env`` maps a
    container variable to the orchestrator variable holding its value; ``client_secrets`` maps an
    ``Endpoint.secrets`` key (e.g. ``"password"``) to such a variable. The runtime reads those
    variables (Airflow Connections / environment) or generates a per-instance value when unset.
    ``stop_timeout_s`` is how long a stop may take before the engine kills the server (a database
    writing its shutdown checkpoint needs longer than Docker's default 10 s).
    """

    image: str
    ports: Mapping[str, int]
    data_paths: tuple[str, ...]
    healthcheck: HealthCheck
    environment: Mapping[str, str] = field(default_factory=dict)
    secret_env: Mapping[str, str] = field(default_factory=dict)
    command: tuple[str, ...] = ()
    files: Mapping[str, str] = field(default_factory=dict)
    ulimits: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    shm_size: str | None = None
    user: str | None = None
    client_user: str | None = None
    client_database: str | None = None
    client_extra: Mapping[str, object] = field(default_factory=dict)
    client_secrets: Mapping[str, str] = field(default_factory=dict)
    stop_timeout_s: float = 60.0  # SIGTERM (or the image's STOPSIGNAL) → SIGKILL after this long
    note: str = ""  # edition, what differs from the local runtime (shown in the report)

    @property
    def repository(self) -> str:
        return self.image.split(":", 1)[0]

    @property
    def tag(self) -> str:
        return self.image.split(":", 1)[1].split("@", 1)[0]

    def secret_names(self) -> set[str]:
        """Orchestrator environment variables this server and its clients need."""
        return {*self.secret_env.values(), *self.client_secrets.values()}

    def endpoint(self, host: str, ports: Mapping[str, int], values: Mapping[str, str]) -> Endpoint:
        """How clients reach this server at ``host`` with its roles published on ``ports``.
        ``values`` maps orchestrator variable names (``secret_names``) to their values."""
        return Endpoint(
            host=host,
            ports=dict(ports),
            user=self.client_user,
            database=self.client_database,
            extra=dict(self.client_extra),
            secrets={key: values[name] for key, name in self.client_secrets.items() if name in values},
        )

    def problems(self) -> list[str]:
        """What makes this spec unfit to run reproducibly (empty when fine)."""
        found = []
        if not PINNED_TAG.match(self.image):
            found.append(f"image {self.image!r} is not repository:tag")
        elif self.tag in {"latest", "stable", "edge", "nightly"} or not any(c.isdigit() for c in self.tag):
            found.append(f"image {self.image!r} is not pinned to a version")
        if not self.ports:
            found.append("no ports")
        if not self.data_paths:
            found.append("no data path (footprint on disk could not be measured)")
        for key, value in self.environment.items():
            if re.search(r"PASS|TOKEN|SECRET|KEY", key) and value:
                found.append(f"environment {key} looks like a secret: use secret_env")
        return found


def new_secret() -> str:
    """A per-instance password/token: 32 URL-safe characters (long enough for every image's rules)."""
    return secrets.token_urlsafe(24)


def secret_values(
    spec: ContainerSpec,
    source: Callable[[str], str | None],
    generate: Callable[[str], str] = lambda name: new_secret(),
) -> tuple[dict[str, str], set[str]]:
    """Values of the orchestrator variables the spec names (``secret_names``): from ``source`` (the
    environment, Airflow), else ``generate(name)``. Returns ``(values, names that were generated)``."""
    values: dict[str, str] = {}
    generated: set[str] = set()
    for name in sorted(spec.secret_names()):
        given = source(name)
        if given:
            values[name] = given
        else:
            values[name] = generate(name)
            generated.add(name)
    return values, generated


def target_containers(target: str) -> Mapping[str, ContainerSpec]:
    """``CONTAINERS`` of ``targets/<target>/container.py`` (empty when the target has none)."""
    import importlib

    try:
        module = importlib.import_module(f"tsbench.targets.{target}.container")
    except ModuleNotFoundError as error:
        if error.name == f"tsbench.targets.{target}.container":
            return {}
        raise
    return module.CONTAINERS


def pick_container(target: str, flavour: str | None = None) -> tuple[str, ContainerSpec]:
    """``(flavour, spec)``: the named flavour, or the target's default (its first). ValueError naming
    the known flavours otherwise."""
    specs = target_containers(target)
    if not specs:
        raise ValueError(f"target {target!r} has no container.py: it cannot run as a container")
    name = flavour or next(iter(specs))
    if name not in specs:
        raise ValueError(f"{target}: unknown container flavour {name!r}; known: {', '.join(specs)}")
    return name, specs[name]
