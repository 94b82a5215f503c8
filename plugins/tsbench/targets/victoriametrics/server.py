"""VictoriaMetrics (single-node, built from its Go module by ``install.sh``) as a local process:
``victoria-metrics -storageDataPath=<home>/data -httpListenAddr=127.0.0.1:<port> <flags>``.

Everything the server keeps lives in ``data/``: ``data/`` (samples, in monthly partitions of merged
parts), ``indexdb/`` (the inverted index of series), ``cache/`` (caches persisted at shutdown). One
listener: HTTP on loopback (the Graphite, OpenTSDB and InfluxDB TCP/UDP listeners are off by
default). Every HTTP path but ``/health`` asks for Basic authentication: user ``tsbench``, the
instance's own password, which the server reads from its 0600 file (``-httpAuth.password=file://…``,
so it never appears on a command line). The flags: ``definition.py``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import ClassVar

import requests

from tsbench.runtimes.definition import ServerDefinition, opt_dir
from tsbench.runtimes.instance_secret import instance_password
from tsbench.runtimes.local import ServerRecipe
from tsbench.targets.base import Endpoint, TargetError
from tsbench.targets.victoriametrics.definition import DEFINITION, flag_arguments

USER = "tsbench"
SECRET = "password"  # the instance secret's name: <home>/.secret-password


def binary_path(version: str) -> Path:
    """Where ``install.sh`` builds the ``victoria-metrics`` of ``version``."""
    return opt_dir() / "victoriametrics" / version / "victoria-metrics"


class VictoriaMetricsServer(ServerRecipe):
    name = "victoriametrics"
    definition: ClassVar[ServerDefinition] = DEFINITION
    port_roles = ("http",)
    start_timeout_s = 120.0  # opening the parts and the index of a large dataset

    @property
    def binary(self) -> Path:
        return binary_path(self.definition.pinned_version())

    @property
    def password(self) -> str:
        return instance_password(self.home, SECRET)

    def initialise(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        instance_password(self.home, SECRET)

    def arguments(self) -> list[str]:
        """The server's flags: this instance's data path, listener and login, then the table's."""
        return [
            f"-storageDataPath={self.data_dir}",
            f"-httpListenAddr=127.0.0.1:{self.ports['http']}",
            f"-httpAuth.username={USER}",
            f"-httpAuth.password=file://{self.home / ('.secret-' + SECRET)}",
            *flag_arguments(self.definition.settings()),
        ]

    def command(self) -> list[str]:
        if not os.access(self.binary, os.X_OK):
            raise TargetError(
                f"victoriametrics: {self.binary} is missing; run scripts/install.sh victoriametrics"
            )
        return [str(self.binary), *self.arguments()]

    def config_text(self) -> str:
        """The flags, one per line (the password only as its file's name)."""
        return "\n".join(self.arguments()) + "\n"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.ports['http']}"

    def ready(self) -> bool:
        try:
            return requests.get(f"{self.url}/health", timeout=1).status_code == 200
        except requests.RequestException:
            return False

    def endpoint(self) -> Endpoint:
        return Endpoint(
            host="127.0.0.1",
            ports=dict(self.ports),
            user=USER,
            data_dirs=(str(self.data_dir),),
            secrets={"password": self.password},
        )

    def version(self) -> str:
        result = subprocess.run([str(self.binary), "--version"], capture_output=True, text=True, timeout=30)
        return version_of(result.stdout.strip())


def version_of(build: str) -> str:
    """``1.151.0`` of a build string ``victoria-metrics-<date>-<time>-tags-v1.151.0-0-g…``."""
    for part in build.split("-"):
        if part.startswith("v") and part[1:2].isdigit():
            return part[1:]
    return build
