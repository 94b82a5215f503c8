"""QuestDB (the ``org.questdb:questdb`` jar from Maven Central) as a local Java process.

The QuestDB root directory is ``<home>/data``: ``conf/server.conf`` (written by ``initialise`` before
the first start — QuestDB only writes its default one when none exists), ``db/`` (tables: column
files, symbol maps, indexes and each table's WAL segments ``<table>~<id>/wal*/``), plus ``public/``
(web console) and ``import/`` that QuestDB unpacks itself. Every listener is moved onto the
allocated loopback ports. The configuration is ``config.py``'s (the same for every runtime), the version,
tuning and heap ``definition.py``'s; ``install.sh`` fetches the jar and lists the verified keys.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from tsbench.runtimes.basic_auth import basic_auth
from tsbench.runtimes.definition import ServerDefinition, opt_dir
from tsbench.runtimes.instance_secret import instance_password
from tsbench.runtimes.local import ServerRecipe
from tsbench.targets.base import Endpoint, TargetError
from tsbench.targets.questdb.config import (
    HTTP_USER,
    LOG_CONF,
    PG_USER,
    Form,
    known_to,
    properties_text,
    qdb_variable,
    server_conf,
)
from tsbench.targets.questdb.definition import DEFINITION

PG_DATABASE = "qdb"
DEFAULT_PASSWORD = "quest"  # a stock QuestDB's: refused by every QuestDB tsbench runs


def java_options(definition: ServerDefinition = DEFINITION) -> tuple[str, ...]:
    """Heap from the definition's ``process`` table (sized to this host); the throughput collector:
    cheaper write barriers in the JIT-compiled ingest path and no concurrent GC threads competing
    for the cores (the small heap makes its pauses irrelevant)."""
    process = definition.process_settings()
    return (f"-Xms{process['heap_min']}", f"-Xmx{process['heap_max']}", "-XX:+UseParallelGC")


def questdb_jar(version: str) -> Path:
    """Where ``install.sh`` puts the jar of ``version`` (same TSBENCH_OPT rule as scripts/lib.sh)."""
    return opt_dir() / "questdb" / f"questdb-{version}.jar"


def java_binary() -> str:
    found = shutil.which("java")
    if not found:
        raise TargetError("questdb: java (17+) is not on PATH")
    return found


def http_get(
    port: int, path: str, timeout: float = 1.0, headers: dict[str, str] | None = None
) -> tuple[int, bytes]:
    """GET ``http://127.0.0.1:<port><path>`` with ``headers``; returns ``(status, body)`` (status 0
    when unreachable)."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, b""
    except (OSError, urllib.error.URLError):
        return 0, b""


class QuestDBServer(ServerRecipe):
    """QuestDB at its pinned version; ``at_release(version)`` (a run's ``versions``) the same recipe
    with that release's jar, its configuration the keys that release knows (``config.py``)."""

    name = "questdb"
    definition: ClassVar[ServerDefinition] = DEFINITION
    tuning: ClassVar[Mapping[str, object]] = DEFINITION.tuning  # the keys the recipe sets
    # http: REST /exec + ILP over HTTP /write; min: health server (/status); pg: PostgreSQL wire;
    # ilp: ILP over TCP (unused by tsbench, moved off 9009 so it never clashes).
    port_roles = ("http", "min", "pg", "ilp")
    stop_signal: ClassVar[int] = signal.SIGTERM  # closes writers and WAL cleanly in well under 1 s
    start_timeout_s = 120.0

    @property
    def root(self) -> Path:
        """QuestDB's root directory (``-d``)."""
        return self.data_dir

    @property
    def config_path(self) -> Path:
        return self.root / "conf" / "server.conf"

    @property
    def log_config_path(self) -> Path:
        return self.root / "conf" / "log.conf"

    @property
    def password(self) -> str:
        """The login's password (PG wire and HTTP): the instance's own (``instance_secret``)."""
        return instance_password(self.home)

    def environment(self) -> dict[str, str]:
        """The password reaches QuestDB as the variables it reads over server.conf (``QDB_*``), so it
        is in no file the report shows."""
        env = super().environment()
        env.update({qdb_variable("pg.password"): self.password, qdb_variable("http.password"): self.password})
        return env

    def initialise(self) -> None:
        instance_password(self.home)
        self.config_path.parent.mkdir(parents=True, exist_ok=True)
        for path, text in ((self.config_path, self.config_text()), (self.log_config_path, LOG_CONF)):
            tmp = path.with_suffix(".tmp")
            tmp.write_text(text)
            os.replace(tmp, path)

    def config_text(self) -> str:
        """The one configuration (``config.py``) on loopback at the allocated ports, with the keys of
        the tuning table this recipe sets."""
        tuning = {key: value for key, value in self.definition.settings().items() if key in self.tuning}
        known = known_to(self.definition.pinned_version(), tuning)
        return properties_text(server_conf(Form("127.0.0.1", self.ports), known))

    @property
    def jar(self) -> Path:
        return questdb_jar(self.definition.pinned_version())

    def command(self) -> list[str]:
        jar = self.jar
        if not jar.is_file():
            raise TargetError(f"questdb: {jar} is missing; run targets/questdb/install.sh")
        return [
            java_binary(),
            *java_options(self.definition),
            "-p",
            str(jar),
            "-m",
            "io.questdb/io.questdb.ServerMain",
            "-d",
            str(self.root),
        ]

    def ready(self) -> bool:
        login = basic_auth(HTTP_USER, self.password)
        status, _ = http_get(self.ports["http"], "/exec?query=select%201", headers=login)
        return status == 200

    def endpoint(self) -> Endpoint:
        return Endpoint(
            host="127.0.0.1",
            ports=dict(self.ports),
            user=PG_USER,
            database=PG_DATABASE,
            data_dirs=tuple(str(p) for p in self.data_dirs()),
            extra={"ingest": "ILP over HTTP", "query": "PostgreSQL wire"},
            secrets={"password": self.password},
        )

    def data_dirs(self) -> list[Path]:
        """Tables, their symbol maps/indexes and their WAL segments all live under ``db/``."""
        return [self.root / "db"]

    def version(self) -> str:
        match = re.search(r"questdb-(.+)\.jar$", self.jar.name)
        return match.group(1) if match else self.definition.pinned_version()
