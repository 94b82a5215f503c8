"""Local runtime: each target's server as a plain local process with its own ports, data and log.

State of one server instance lives in ``<state root>/<instance>/`` (default root
``$TSBENCH_STATE`` or ``/var/tmp/tsbench``, readable by the service users recipes run as)::

    instance.json   recipe name and class, ports, pid, endpoint (so another process can attach)
    server.log      the server's stdout/stderr
    data/ …         whatever the recipe keeps

Servers start in their own session (``start_new_session``), so they outlive the process that
started them: a pipeline task can provision, and later tasks attach by instance name — under this
root, or, for a worker with another state root on the same machine, from the record the run folder
carries (``runtimes.handoff``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import psutil

from tsbench.runtimes.contract import Endpoint, ServedTarget, TargetError, class_at, class_path
from tsbench.runtimes.definition import ServerDefinition
from tsbench.runtimes.disk import allocated_bytes, drop_os_caches
from tsbench.runtimes.handoff import ElsewhereError, read_record, write_record
from tsbench.runtimes.listening import Listener, listening_sockets, require_loopback
from tsbench.runtimes.ports import free_ports, port_open, start_on_new_ports_if_taken
from tsbench.runtimes.process_env import server_environment
from tsbench.runtimes.process_group import kill_recorded_process
from tsbench.runtimes.process_probe import ProcessTreeProbe
from tsbench.runtimes.release_recipe import pinned_recipe, recipe_at_release, recipe_release

REPO = Path(__file__).resolve().parents[3]


def state_root() -> Path:
    return Path(os.environ.get("TSBENCH_STATE") or "/var/tmp/tsbench")


class ServerRecipe(ABC):
    """How to install, configure, run and check one server as a local process.

    Subclasses live in their target's folder (``server.py``). Paths are below ``home``.
    """

    name: ClassVar[str]
    # The target's server definition: its install.sh runs (idempotently) before the first start.
    definition: ClassVar[ServerDefinition | None] = None
    port_roles: ClassVar[tuple[str, ...]]
    run_as: ClassVar[str | None] = None  # system user to run the server as (files get chowned)
    stop_signal: ClassVar[int] = signal.SIGTERM
    start_timeout_s: ClassVar[float] = 120.0
    stop_timeout_s: ClassVar[float] = 60.0

    def __init__(self, home: Path, ports: dict[str, int]):
        self.home = home
        self.ports = ports

    @property
    def data_dir(self) -> Path:
        return self.home / "data"

    def install(self) -> None:
        """Run the definition's install recipe (idempotent; fast when already installed) with its
        version variables."""
        if self.definition is None:
            raise TargetError(
                f"{self.name}: the server recipe names no definition (targets/<name>/definition.py)"
            )
        script = self.definition.install_path
        environment = {**os.environ, **self.definition.install_environment()}
        result = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=environment)
        if result.returncode:
            tail = "\n".join((result.stdout + result.stderr).splitlines()[-15:])
            raise TargetError(f"{self.name}: {script.name} failed (exit {result.returncode}):\n{tail}")

    @abstractmethod
    def initialise(self) -> None:
        """Create data directories and configuration (idempotent; keeps existing data)."""

    @abstractmethod
    def command(self) -> list[str]:
        """The foreground server command."""

    def environment(self) -> dict[str, str]:
        """The server's environment: the orchestrator's without its secrets (``process_env``)."""
        return server_environment()

    @abstractmethod
    def ready(self) -> bool:
        """True when the server answers requests."""

    def after_start(self) -> None:  # noqa: B027 - an optional hook
        """Work that needs the running server once (e.g. create a database); idempotent."""

    @abstractmethod
    def endpoint(self) -> Endpoint:
        """How clients reach this server."""

    def data_dirs(self) -> list[Path]:
        """What ``footprint on disk`` counts: data + WAL directories."""
        return [self.data_dir]

    def outside_dirs(self) -> list[Path]:
        """Directories the server uses outside its home (removed at teardown too)."""
        return []

    @abstractmethod
    def version(self) -> str:
        """Version of the installed server binary."""

    def config_text(self) -> str:
        """The configuration written by ``initialise`` (for the report's appendix)."""
        return ""


@dataclass
class LocalServer:
    """A server instance under the local runtime (create with ``LocalRuntime``)."""

    instance: str
    home: Path
    recipe: ServerRecipe
    pid: int | None = None
    handoff: Path | None = None  # the run folder that also gets the record (``runtimes.handoff``)
    listening: list[Listener] | None = None  # the sockets it listened on after its start

    @property
    def state_file(self) -> Path:
        return self.home / "instance.json"

    @property
    def log_file(self) -> Path:
        return self.home / "server.log"

    def save(self) -> None:
        """``instance.json`` in its home and, with a ``handoff`` folder, the record there too."""
        body = {
            "instance": self.instance,
            "home": str(self.home),
            "recipe": self.recipe.name,
            "recipe_class": class_path(pinned_recipe(type(self.recipe))),
            "release": recipe_release(type(self.recipe)),
            "ports": self.recipe.ports,
            "pid": self.pid,
            "endpoint": self.recipe.endpoint().to_json(),
        }
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(body, indent=2))
        os.replace(tmp, self.state_file)
        if self.handoff is not None:
            write_record(self.handoff, body)

    def endpoint(self) -> Endpoint:
        return self.recipe.endpoint()

    def process(self) -> psutil.Process | None:
        if self.pid is None:
            return None
        try:
            proc = psutil.Process(self.pid)
        except psutil.NoSuchProcess:
            return None
        return proc if proc.status() != psutil.STATUS_ZOMBIE else None

    def processes(self) -> list[psutil.Process]:
        """The server process and its children (e.g. PostgreSQL backends)."""
        proc = self.process()
        if proc is None:
            return []
        try:
            return [proc, *proc.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def running(self) -> bool:
        return self.process() is not None

    def log_tail(self, lines: int = 20) -> str:
        if not self.log_file.exists():
            return "(no log)"
        return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])

    def start(self) -> float:
        """Start and wait until ready; returns seconds taken. Raises TargetError with the log tail."""
        if self.running() and self.recipe.ready():
            return 0.0
        started = time.perf_counter()
        user = self.recipe.run_as
        with open(self.log_file, "ab") as log:
            proc = subprocess.Popen(
                self.recipe.command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.home,
                env=self.recipe.environment(),
                start_new_session=True,
                user=user,
                group=user,
            )
        self.pid = proc.pid
        self.save()
        deadline = started + self.recipe.start_timeout_s
        while time.perf_counter() < deadline:
            if proc.poll() is not None:
                code = proc.returncode
                raise TargetError(
                    f"{self.instance}: server exited with code {code} during start:\n{self.log_tail()}"
                )
            if self.recipe.ready():
                self.recipe.after_start()
                self._require_loopback()
                return time.perf_counter() - started
            time.sleep(0.1)
        self.stop()
        raise TargetError(
            f"{self.instance}: not ready after {self.recipe.start_timeout_s:.0f} s:\n{self.log_tail()}"
        )

    def _require_loopback(self) -> None:
        """Stop the server and raise when a socket it holds listens beyond loopback."""
        try:
            self.listening = require_loopback(self.instance, self.processes())
        except TargetError:
            self.stop()
            raise

    def stop(self) -> float:
        """Stop gracefully (SIGKILL after the recipe's timeout); returns seconds taken."""
        started = time.perf_counter()
        proc = self.process()
        if proc is not None:
            try:
                proc.send_signal(self.recipe.stop_signal)
                proc.wait(self.recipe.stop_timeout_s)
            except psutil.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
            except psutil.NoSuchProcess:
                pass
        self._reap()
        for port in self.recipe.ports.values():
            deadline = time.perf_counter() + 10
            while port_open(port) and time.perf_counter() < deadline:
                time.sleep(0.05)
        self.pid = None
        if self.home.exists():
            self.save()
        return time.perf_counter() - started

    def kill(self) -> None:
        """SIGKILL the server's process group at once (fault injection)."""
        proc = self.process()
        if proc is not None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        self._reap()

    def _reap(self) -> None:
        if self.pid is None:
            return
        with contextlib.suppress(ChildProcessError):  # not our child: nothing to reap
            os.waitpid(self.pid, os.WNOHANG)

    def restart_cold(self) -> dict[str, Any]:
        """Cold restart (ClickBench's recipe): stop → wait until down → sync + drop OS caches →
        start → wait until ready. Returns what happened, including whether caches were dropped."""
        stop_s = self.stop()
        down = not self.recipe.ready()
        dropped, how = drop_os_caches()
        start_s = self.start()
        return {
            "restarted": True,
            "was_down": down,
            "os_cache_dropped": dropped,
            "os_cache_note": how,
            "stop_s": round(stop_s, 3),
            "start_s": round(start_s, 3),
        }

    def disk_bytes(self) -> int:
        return allocated_bytes(self.recipe.data_dirs())

    def usage_probe(self) -> ProcessTreeProbe:
        return ProcessTreeProbe(self.processes)

    def facts(self) -> dict[str, Any]:
        """The installed binary's version and the configuration written by the recipe."""
        listening = listening_sockets(self.processes())
        return {
            "server_binary": self.recipe.version(),
            "config": self.recipe.config_text(),
            "listening": [str(listener) for listener in listening],
        }


class LocalRuntime:
    """Creates, finds and removes local server instances."""

    name = "local"

    def __init__(self, root: Path | None = None, handoff: Path | None = None):
        """Instances live under ``root`` (default ``state_root()``); with ``handoff`` (a target's
        run folder) their records also go there, and ``attach`` finds an instance another worker
        provisioned on this machine from it."""
        self.root = root or state_root()
        self.handoff = handoff

    def provision(self, target_type: type[ServedTarget], instance: str) -> LocalServer:
        """Install, configure and start ``target_type``'s server as a fresh instance."""
        return self.provision_recipe(target_type.server_recipe(), instance)

    def provision_recipe(
        self, recipe_type: type[ServerRecipe], instance: str, fresh: bool = True
    ) -> LocalServer:
        """Install, configure and start a server instance; ``fresh`` wipes a previous one first. A
        start that failed because a port picked for it was taken meanwhile is made again from
        scratch on new ports (``ports.start_on_new_ports_if_taken``)."""

        def start(attempt: int) -> LocalServer:
            if (fresh or attempt > 1) and (self.root / instance).exists():
                self.teardown(instance, remove=True)
            server = self._installed(recipe_type, instance)
            server.start()
            return server

        return start_on_new_ports_if_taken(start, instance)

    def _installed(self, recipe_type: type[ServerRecipe], instance: str) -> LocalServer:
        """The instance's folder, freshly picked ports, the recipe installed and initialised."""
        home = self.root / instance
        home.mkdir(parents=True, exist_ok=True)
        if recipe_type.run_as:
            self.root.chmod(0o755)
            shutil.chown(home, recipe_type.run_as, recipe_type.run_as)
        ports = dict(zip(recipe_type.port_roles, free_ports(len(recipe_type.port_roles)), strict=True))
        server = LocalServer(instance, home, recipe_type(home, ports), handoff=self.handoff)
        server.recipe.install()
        server.recipe.initialise()
        server.save()
        return server

    def attach(self, instance: str) -> LocalServer:
        """The instance provisioned earlier by another process: from its state under this root, else
        from the handoff record (provisioned by a worker with another state root; ``ElsewhereError``
        when that was on another machine)."""
        home = self.root / instance
        state = home / "instance.json"
        body = json.loads(state.read_text()) if state.is_file() else None
        if body is None and self.handoff is not None:
            body = read_record(self.handoff, instance)
        if body is None:
            raise TargetError(f"no local server instance {instance!r} under {self.root}")
        home = Path(body.get("home") or home)
        if not body.get("recipe_class"):
            raise TargetError(f"{instance}: its state names no recipe class (written by an older tsbench)")
        recipe_type = class_at(body["recipe_class"])
        if not issubclass(recipe_type, ServerRecipe):
            raise TargetError(f"{instance}: {body['recipe_class']} is not a server recipe")
        if body.get("release"):  # a release a run chose (``runtimes.release_recipe``)
            recipe_type = recipe_at_release(recipe_type, body["release"])
        recipe = recipe_type(home, dict(body["ports"]))
        return LocalServer(instance, home, recipe, body.get("pid"), handoff=self.handoff)

    def teardown(self, instance: str, remove: bool = True) -> None:
        """Stop the instance if it runs and (by default) delete its files. Never raises for a
        missing instance: teardown must always be safe to run."""
        home = self.root / instance
        outside: list[Path] = []
        try:
            server = self.attach(instance)
            home, outside = server.home, server.recipe.outside_dirs()
            server.stop()
        except ElsewhereError:
            raise  # its server would be left running: say where
        except (TargetError, KeyError, ValueError):  # none, unknown recipe, damaged state: end it anyway
            kill_recorded_process(home / "instance.json")
        if remove:
            for folder in [home, *outside]:
                shutil.rmtree(folder, ignore_errors=True)
