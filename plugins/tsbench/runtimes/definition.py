"""One server definition per target, read by every runtime.

A target folder declares ``DEFINITION`` in ``targets/<name>/definition.py``: the pinned version, ONE
tuning table and ONE install recipe (``targets/<name>/install.sh``). The local runtime's
configuration file, the container's arguments and the cloud host's settings are rendered from it by
generic code (this module and ``runtimes/cloud_install.py``), so a value can only differ between
runtimes where a ``Scaled`` rule sizes it to the machine the server runs on.

A tuning value is either fixed text (same everywhere) or a ``Scaled`` rule: a share of the machine's
cores or memory, clamped and rounded, evaluated in Python for the local and docker runtimes (this
host) and by bash arithmetic on the cloud host (its ``nproc`` and ``/proc/meminfo``), with the same
integer arithmetic so both give the same number on the same machine.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import psutil

TARGETS_DIR = Path(__file__).resolve().parents[1] / "targets"


@dataclass(frozen=True)
class Machine:
    """What a server may use: ``cores`` (logical CPUs) and ``memory_mib`` (total RAM, MiB)."""

    cores: int
    memory_mib: int

    @classmethod
    def this_host(cls) -> Machine:
        """This machine (the local and docker runtimes' servers run here)."""
        return cls(cores=os.cpu_count() or 1, memory_mib=psutil.virtual_memory().total // 2**20)


@dataclass(frozen=True)
class Scaled:
    """A tuning value sized to the machine: ``resource × numerator // denominator`` rounded to the
    nearest ``step``, clamped to ``[minimum, maximum]``, followed by ``suffix`` (e.g. ``"MB"``).

    ``per`` is ``"cores"`` (count) or ``"memory_mib"`` (MiB); ``scale_by`` divides the clamped
    result (e.g. 1024 with suffix ``"GB"``: whole GiB)."""

    per: Literal["cores", "memory_mib"]
    numerator: int = 1
    denominator: int = 1
    step: int = 1
    minimum: int = 1
    maximum: int = 1 << 40
    suffix: str = ""
    scale_by: int = 1

    def amount(self, machine: Machine) -> int:
        share = getattr(machine, self.per) * self.numerator // self.denominator
        rounded = (share + self.step // 2) // self.step * self.step
        return min(max(rounded, self.minimum), self.maximum) // self.scale_by

    def value(self, machine: Machine) -> str:
        return f"{self.amount(machine)}{self.suffix}"

    def bash(self) -> str:
        """The same computation on the cloud host: a call of the rendered script's ``scaled``."""
        numbers = (self.numerator, self.denominator, self.step, self.minimum, self.maximum, self.scale_by)
        return f'$(scaled "${self.per}" {" ".join(map(str, numbers))}){self.suffix}'


TuningValue = str | Scaled


def opt_dir() -> Path:
    """Where install recipes put what they install and build: ``$TSBENCH_OPT``, with scripts/lib.sh's
    default (``$XDG_CACHE_HOME`` or ``~/.cache``, then ``tsbench/opt``)."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(os.environ.get("TSBENCH_OPT") or os.path.join(cache, "tsbench", "opt"))


def evaluate(table: Mapping[str, TuningValue], machine: Machine) -> dict[str, str]:
    """``table`` with every ``Scaled`` rule evaluated on ``machine`` (order kept)."""
    return {key: value.value(machine) if isinstance(value, Scaled) else value for key, value in table.items()}


def cloud_tuning(table: Mapping[str, TuningValue]) -> dict[str, str]:
    """``table`` for a file the cloud host writes (``cloud_files``): ``Scaled`` rules as the host's
    bash arithmetic, which expands there."""
    return {key: value.bash() if isinstance(value, Scaled) else value for key, value in table.items()}


@dataclass(frozen=True)
class ServerDefinition:
    """Everything about a target's server that does not depend on the runtime.

    ``version`` is the one pin of the server (package, jar, image tag and cloud install derive from
    it; an environment variable ``<NAME>_VERSION`` overrides it for a local install, as before).
    ``tuning`` is the one table of server settings in the server's own key syntax, in the order the
    configuration lists them; ``process`` holds settings given to the process rather than written
    to its configuration (heap, GC; keys are identifiers, e.g. ``heap_max``). ``install`` names
    the local install recipe in the target folder; ``install_env`` are extra variables it and the
    cloud steps need (e.g. a package major version). ``server`` names the target folder whose
    server this is when a target runs another target's server (its recipes and version variable;
    default: the target's own folder).

    ``releases`` are the other versions the install recipe installs side by side with the pin,
    newest first (a run's ``versions`` compares them: ``tsbench.targets.releases``), on the runtimes
    ``release_runtimes`` names; ``at_release(version)`` is the definition a run installs and runs
    for one of them (``release``: the version a run chose, ahead of the pin and its override).
    """

    name: str
    version: str
    tuning: Mapping[str, TuningValue] = field(default_factory=dict)
    process: Mapping[str, TuningValue] = field(default_factory=dict)
    install: str = "install.sh"
    install_env: Mapping[str, str] = field(default_factory=dict)
    # The cloud host's steps, in order: files in targets/ (default: the target's cloud_install.sh).
    cloud_steps: tuple[str, ...] = ()
    # Files the cloud host's steps write, by the name of the shell function that prints each: rendered
    # by the target's own Python from the declaration its other runtimes use too, with $VARIABLES and
    # $(scaled …) words the host expands (runtimes/cloud_install.py).
    cloud_files: Mapping[str, str] = field(default_factory=dict)
    # Position among the targets scripts/main.sh compares by default, which scripts/install_all.sh
    # installs up front (0: neither; the server's sources are not reachable from every machine).
    main_job: int = 0
    # A local server built from source on first use (minutes, once per machine): runs locally like
    # the main job's, but is not installed up front (0: a package, or nothing obtainable here).
    local_build_minutes: int = 0
    server: str = ""
    releases: tuple[str, ...] = ()
    release_runtimes: tuple[str, ...] = ()
    release: str = ""

    def at_release(self, version: str) -> ServerDefinition:
        """This definition installing and running ``version`` instead of the pin (no override)."""
        return replace(self, release=version)

    @property
    def server_folder(self) -> str:
        """The folder holding the server's recipes: ``server`` or the target's own."""
        return self.server or self.name

    @property
    def version_variable(self) -> str:
        return f"{self.server_folder.upper()}_VERSION"

    def pinned_version(self) -> str:
        """The version to install and run: the release a run chose, else the pin or the
        ``<NAME>_VERSION`` override."""
        return self.release or os.environ.get(self.version_variable) or self.version

    def settings(self, machine: Machine | None = None) -> dict[str, str]:
        """The tuning table's values on ``machine`` (default: this host), in table order."""
        return evaluate(self.tuning, machine or Machine.this_host())

    def process_settings(self, machine: Machine | None = None) -> dict[str, str]:
        """The ``process`` table's values on ``machine`` (default: this host)."""
        return evaluate(self.process, machine or Machine.this_host())

    @property
    def cloud_scripts(self) -> list[Path]:
        """The cloud host's own steps, in the order the rendered script runs them."""
        steps = self.cloud_steps or (f"{self.server_folder}/cloud_install.sh",)
        return [TARGETS_DIR / step for step in steps]

    @property
    def install_path(self) -> Path:
        return TARGETS_DIR / self.server_folder / self.install

    def install_environment(self) -> dict[str, str]:
        """Variables the install recipe reads: the version (and ``install_env``)."""
        return {self.version_variable: self.pinned_version(), **self.install_env}


def load_definition(target: str) -> ServerDefinition | None:
    """``DEFINITION`` of ``targets/<target>/definition.py`` (None when the target has none)."""
    try:
        module = importlib.import_module(f"tsbench.targets.{target}.definition")
    except ModuleNotFoundError as error:
        if error.name == f"tsbench.targets.{target}.definition":
            return None
        raise
    return module.DEFINITION


def shell_assignments(definition: ServerDefinition) -> str:
    """``NAME=value`` lines of the install environment, for ``eval`` in a shell entry point."""
    return "".join(f"{key}={value}\n" for key, value in definition.install_environment().items())


def defined_targets() -> list[str]:
    """Target folders that declare a server definition (``targets/<name>/definition.py``), sorted:
    found by that file, so the runtimes never import the targets package to list them."""
    return sorted(path.parent.name for path in TARGETS_DIR.glob("*/definition.py"))


def main_job_targets() -> list[str]:
    """The targets of the main job (``scripts/main.sh``, ``install_all.sh``), in their order."""
    found = (load_definition(name) for name in defined_targets())
    chosen = [definition for definition in found if definition is not None and definition.main_job]
    return [definition.name for definition in sorted(chosen, key=lambda definition: definition.main_job)]


def local_targets() -> list[str]:
    """Targets whose server runs as a local process here: the main job's, then those built from
    source on first use (``local_build_minutes``)."""
    built = [name for name in defined_targets() if (d := load_definition(name)) and d.local_build_minutes]
    return [*main_job_targets(), *(name for name in built if name not in main_job_targets())]


def main(argv: list[str]) -> int:
    """``python -m tsbench.runtimes.definition <target>[@<release>]``: the install environment (of that
    release) as shell lines;
    ``--main-job``: the targets ``main.sh`` compares and ``install_all.sh`` installs, one a line;
    ``--releases <target>``: the other releases its recipe installs beside the pin, one a line."""
    if argv == ["--main-job"]:
        sys.stdout.write("".join(f"{name}\n" for name in main_job_targets()))
        return 0
    if len(argv) == 2 and argv[0] == "--releases" and (definition := load_definition(argv[1])) is not None:
        sys.stdout.write("".join(f"{release}\n" for release in definition.releases))
        return 0
    target, _, release = argv[0].partition("@") if len(argv) == 1 else ("", "", "")
    if (definition := load_definition(target) if target else None) is None:
        usage = "usage: python -m tsbench.runtimes.definition <target with definition.py>[@<release>]"
        print(usage, file=sys.stderr)
        return 2
    if release and release not in definition.releases:
        known = ", ".join(definition.releases) or "none"
        print(f"{target}'s recipe installs no release {release} (declared: {known})", file=sys.stderr)
        return 2
    sys.stdout.write(shell_assignments(definition.at_release(release) if release else definition))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
