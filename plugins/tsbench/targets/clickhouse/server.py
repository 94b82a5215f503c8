"""ClickHouse (official packages from packages.clickhouse.com) as a local process.

``clickhouse server --config-file=<home>/config.xml``, started detached by ``LocalRuntime`` and
stopped with SIGTERM. ``initialise`` writes, before the first start, a complete ``config.xml``
(HTTP and native listeners on the allocated loopback ports, everything the server keeps under
``<home>/data/``, server time zone UTC, log level ``warning`` to the console → ``server.log``, no
background system log tables) and ``users.xml`` (user ``default`` with a per-instance password, kept
as SHA-256 only; loopback networks). The password is generated once into ``<home>/client.secret``
(0600) and handed to clients only through ``Endpoint.secrets``.

The configuration is ``config.py``'s (declared once for every runtime; version and tuning from
``definition.py``): complete files here, the ``config.d``/``users.d`` overrides of the stock
configuration in the container and on the cloud VM. The packages cannot be fetched on machines that
reach only language and Debian registries: ``install.sh`` then fails at once with a clear message
(README.md, "What was tested where").
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
import signal
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

from tsbench.runtimes.local import ServerRecipe
from tsbench.targets.base import Endpoint, TargetError
from tsbench.targets.clickhouse.config import Form, config_text, users_text
from tsbench.targets.clickhouse.definition import DEFINITION

CLICKHOUSE_VERSION = DEFINITION.version  # the apt packages, the image tag and the cloud install
HOST = "127.0.0.1"
USER = "default"
DATABASE = "tsbench"
SECRET_FILE = "client.secret"


def clickhouse_binary() -> str:
    """The ``clickhouse`` multi-tool binary of the ``clickhouse-common-static`` package."""
    found = shutil.which("clickhouse") or "/usr/bin/clickhouse"
    if not os.access(found, os.X_OK):
        raise TargetError("clickhouse: /usr/bin/clickhouse is missing; run targets/clickhouse/install.sh")
    return found


def password_sha256(password: str) -> str:
    return hashlib.sha256(password.encode()).hexdigest()


class ClickHouseServer(ServerRecipe):
    name = "clickhouse"
    definition = DEFINITION
    # http: HTTP interface (clickhouse-connect, /ping); native: TCP protocol (clickhouse-client).
    port_roles = ("http", "native")
    stop_signal = signal.SIGTERM  # finishes running queries and in-flight inserts, then exits
    start_timeout_s = 120.0
    stop_timeout_s = 120.0

    @property
    def config_path(self) -> Path:
        return self.home / "config.xml"

    @property
    def users_path(self) -> Path:
        return self.home / "users.xml"

    @property
    def secret_path(self) -> Path:
        return self.home / SECRET_FILE

    def password(self) -> str:
        """The instance's password for user ``default`` (created by ``initialise``)."""
        if not self.secret_path.is_file():
            raise TargetError(f"clickhouse: {self.secret_path} is missing; initialise() first")
        return self.secret_path.read_text().strip()

    def _write(self, path: Path, text: str, mode: int) -> None:
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)

    def initialise(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if not self.secret_path.is_file():
            self._write(self.secret_path, secrets.token_urlsafe(24) + "\n", 0o600)
        self._write(self.config_path, self.config_text(), 0o644)
        self._write(self.users_path, self.users_text(), 0o600)

    @property
    def form(self) -> Form:
        """A complete configuration: loopback at the allocated ports, everything under ``data/``."""
        ports = {role: int(port) for role, port in self.ports.items()}
        return Form(False, HOST, ports, str(self.data_dir), str(self.users_path), ("127.0.0.1", "::1"))

    def config_text(self) -> str:
        return config_text(self.form, DEFINITION.settings(), "targets/clickhouse/server.py")

    def users_text(self) -> str:
        return users_text(self.form, password_sha256(self.password()))

    def command(self) -> list[str]:
        return [clickhouse_binary(), "server", f"--config-file={self.config_path}"]

    def ready(self) -> bool:
        try:
            url = f"http://{HOST}:{self.ports['http']}/ping"
            with urllib.request.urlopen(url, timeout=1.0) as response:
                return response.status == 200 and response.read().startswith(b"Ok.")
        except (OSError, urllib.error.URLError):
            return False

    def endpoint(self) -> Endpoint:
        return Endpoint(
            host=HOST,
            ports=dict(self.ports),
            user=USER,
            database=DATABASE,
            data_dirs=tuple(str(p) for p in self.data_dirs()),
            extra={"ingest": "HTTP, INSERT … FORMAT Arrow", "query": "HTTP (clickhouse-connect)"},
            secrets={"password": self.password()},
        )

    def data_dirs(self) -> list[Path]:
        """Tables (parts), metadata and temporary files all live under ``data/``."""
        return [self.data_dir]

    def version(self) -> str:
        try:
            result = subprocess.run(
                [clickhouse_binary(), "--version"], capture_output=True, text=True, timeout=30
            )
        except (TargetError, OSError, subprocess.TimeoutExpired):
            return f"{CLICKHOUSE_VERSION} (pinned; binary not installed)"
        match = re.search(r"\d+\.\d+\.\d+\.\d+", result.stdout)
        return match.group(0) if match else result.stdout.strip()
