"""ClickHouse (official packages from packages.clickhouse.com) as a local process.

``clickhouse server --config-file=<home>/config.xml``, started detached by ``LocalRuntime`` and
stopped with SIGTERM. ``initialise`` writes, before the first start, a complete ``config.xml``
(HTTP and native listeners on the allocated loopback ports, everything the server keeps under
``<home>/data/``, server time zone UTC, log level ``warning`` to the console → ``server.log``, no
background system log tables) and ``users.xml`` (user ``default`` with a per-instance password, kept
as SHA-256 only; loopback networks). The password is generated once into ``<home>/client.secret``
(0600) and handed to clients only through ``Endpoint.secrets``.

Version and tuning come from ``definition.py`` (one pin and one table for every runtime); the
table's elements go into ``config.xml`` here and into the ``config.d`` override of the container and
the cloud VM. The packages cannot be fetched on machines that reach only language and Debian
registries: ``install.sh`` then fails at once with a clear message (README.md, "What was tested
where").
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
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from tsbench.runtimes.local import ServerRecipe
from tsbench.targets.base import Endpoint, TargetError
from tsbench.targets.clickhouse.definition import DEFINITION

CLICKHOUSE_VERSION = DEFINITION.version  # the apt packages, the image tag and the cloud install
HOST = "127.0.0.1"
USER = "default"
DATABASE = "tsbench"
SECRET_FILE = "client.secret"

# Background system log tables of ClickHouse's stock configuration. They flush every few seconds and
# would add CPU, memory and disk use (counted in the data directory's footprint) that has nothing to
# do with the workload: the local config.xml never configures them; the container and cloud configs
# remove them (``stock_config_override``).
SYSTEM_LOGS_REMOVED = (
    "query_log",
    "query_thread_log",
    "query_views_log",
    "part_log",
    "trace_log",
    "text_log",
    "metric_log",
    "latency_log",
    "query_metric_log",
    "asynchronous_metric_log",
    "asynchronous_insert_log",
    "processors_profile_log",
    "opentelemetry_span_log",
    "session_log",
    "error_log",
    "crash_log",
    "backup_log",
    "blob_storage_log",
    "s3queue_log",
    "zookeeper_log",
)
# Listeners of the stock configuration that tsbench does not use (MySQL and PostgreSQL wire
# protocols, replication): only HTTP and native stay open.
LISTENERS_REMOVED = ("mysql_port", "postgresql_port", "interserver_http_port")


def xml_elements(settings: Mapping[str, str], indent: str = "    ") -> list[str]:
    """Settings with dotted paths as nested elements (``logger.level`` → ``<logger><level>``), one
    per line; settings sharing a parent element go into one element, in first-seen order."""
    tree: dict[str, Any] = {}
    for path, value in settings.items():
        *parents, leaf = path.split(".")
        node = tree
        for name in parents:
            node = node.setdefault(name, {})
        node[leaf] = value
    return _element_lines(tree, indent)


def _element_lines(tree: Mapping[str, Any], indent: str) -> list[str]:
    lines = []
    for name, value in tree.items():
        if isinstance(value, Mapping):
            lines += [f"{indent}<{name}>", *_element_lines(value, indent + "    "), f"{indent}</{name}>"]
        else:
            lines.append(f"{indent}<{name}>{escape(value)}</{name}>")
    return lines


def stock_config_override() -> str:
    """A ``config.d`` file for the stock configuration (container image, cloud VM): the definition's
    tuning table, and the removal of the background system log tables and the unused listeners."""
    removed = [f'    <{name} remove="1"/>' for name in (*SYSTEM_LOGS_REMOVED, *LISTENERS_REMOVED)]
    header = "<!-- written by tsbench (targets/clickhouse/server.py; tuning from definition.py) -->"
    body = "\n".join([*xml_elements(DEFINITION.settings()), *removed])
    return f"{header}\n<clickhouse>\n{body}\n</clickhouse>\n"


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

    def config_text(self) -> str:
        data = str(self.data_dir)
        elements = {
            "logger.console": "1",  # to stdout: the runtime's server.log
            "listen_host": HOST,
            "http_port": str(int(self.ports["http"])),
            "tcp_port": str(int(self.ports["native"])),
            "path": f"{data}/",
            "tmp_path": f"{data}/tmp/",
            "user_files_path": f"{data}/user_files/",
            "format_schema_path": f"{data}/format_schemas/",
            "user_directories.users_xml.path": str(self.users_path),
            "default_profile": "default",
            "default_database": "default",
            **DEFINITION.settings(),
        }
        header = "<!-- written by tsbench (targets/clickhouse/server.py); ClickHouse's defaults elsewhere -->"
        return "\n".join([header, "<clickhouse>", *xml_elements(elements), "</clickhouse>"]) + "\n"

    def users_text(self) -> str:
        return f"""<!-- written by tsbench (targets/clickhouse/server.py) -->
<clickhouse>
    <profiles>
        <default/>
    </profiles>
    <quotas>
        <default/>
    </quotas>
    <users>
        <{USER}>
            <password_sha256_hex>{password_sha256(self.password())}</password_sha256_hex>
            <networks>
                <ip>127.0.0.1</ip>
                <ip>::1</ip>
            </networks>
            <profile>default</profile>
            <quota>default</quota>
            <access_management>1</access_management>
        </{USER}>
    </users>
</clickhouse>
"""

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
