"""QuestDB (the ``org.questdb:questdb`` jar from Maven Central) as a local Java process.

The QuestDB root directory is ``<home>/data``: ``conf/server.conf`` (written by ``initialise`` before
the first start — QuestDB only writes its default one when none exists), ``db/`` (tables: column
files, symbol maps, indexes and each table's WAL segments ``<table>~<id>/wal*/``), plus ``public/``
(web console) and ``import/`` that QuestDB unpacks itself. Every listener is moved onto the
allocated loopback ports; telemetry is off. See ``scripts/install_questdb.sh`` for the verified keys.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import urllib.error
import urllib.request
from pathlib import Path
from typing import ClassVar

from tsbench.runtimes.local import ServerRecipe
from tsbench.targets.base import Endpoint, TargetError

DEFAULT_VERSION = "9.3.4"  # the pin in scripts/lib.sh (QUESTDB_VERSION overrides it, as there)

# PostgreSQL wire credentials of a stock QuestDB (documented defaults for a local server). They are
# handed to the target through Endpoint.secrets only, never logged or written to results.
PG_USER = "admin"
PG_PASSWORD = "quest"
PG_DATABASE = "qdb"

# Tuning for our 2-core / 24 GiB machines; reasons in README.md ("Configuration and tuning").
TUNING: dict[str, str] = {
    # Idle worker threads (network, query, O3 write) yield-spin for 7,000 empty loops by default before
    # they nap 1 ms; every ILP request, WAL apply or O3 job restarts that spin, and on 2 cores the
    # sched_yield storm takes CPU from the parsing thread and the client. 1,000 loops still cover the
    # gap between back-to-back queries (a few ms), so query latency keeps QuestDB's behaviour.
    "shared.worker.nap.threshold": "1000",
    # A whole ILP/HTTP request (10,000 cpu rows with tags ≈ 3.4 MB) fits the receive buffer and the
    # socket buffer: the client sends it in one go and the server parses it in one pass.
    "http.recv.buffer.size": "16m",
    "http.net.connection.rcvbuf": "16m",
    # WAL apply is light (≈2 ms per 10,000-row transaction): one apply thread and one O3 write
    # thread instead of one per core, and the apply thread sleeps soon after it runs out of work.
    "wal.apply.worker.count": "1",
    "shared.write.worker.count": "1",
    "wal.apply.worker.yield.threshold": "10",
    "wal.apply.worker.nap.threshold": "20",
    "wal.apply.worker.sleep.threshold": "100",
    # Append pages of open table writers are preallocated on disk: 16 MiB per column file and per
    # symbol-index value file by default (≈ 0.5 GB for one open cpu partition). Smaller pages keep the
    # footprint of a just-loaded table close to its data; idle writers are closed (files truncated)
    # after 30 s instead of 10 min.
    "cairo.writer.data.append.page.size": "2m",
    "cairo.writer.data.index.value.append.page.size": "1m",
    "cairo.inactive.writer.ttl": "30s",
    "cairo.idle.check.interval": "10s",
}

# conf/log.conf: QuestDB's default logs every query (2 lines) and every WAL apply at INFO level to
# stdout; its logging thread then busy-waits after each message. Errors, critical messages and
# advisories (start-up banner, listeners, shutdown) still reach server.log.
LOG_CONF = """writers=stdout
w.stdout.class=io.questdb.log.LogConsoleWriter
w.stdout.level=ERROR,CRITICAL,ADVISORY
"""

JAVA_OPTIONS = (
    # QuestDB keeps table data off-heap (mmap); the heap only holds query/ingest state.
    "-Xms1g",
    "-Xmx2g",
    # Throughput collector: cheaper write barriers in the JIT-compiled ingest path and no concurrent
    # GC threads competing for the 2 cores (the small heap makes its pauses irrelevant).
    "-XX:+UseParallelGC",
)


def questdb_version() -> str:
    return os.environ.get("QUESTDB_VERSION") or DEFAULT_VERSION


def questdb_jar() -> Path:
    """Where scripts/install_questdb.sh puts the jar (same TSBENCH_OPT rule as scripts/lib.sh)."""
    opt = os.environ.get("TSBENCH_OPT") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tsbench", "opt"
    )
    return Path(opt) / "questdb" / f"questdb-{questdb_version()}.jar"


def java_binary() -> str:
    found = shutil.which("java")
    if not found:
        raise TargetError("questdb: java (17+) is not on PATH")
    return found


def http_get(port: int, path: str, timeout: float = 1.0) -> tuple[int, bytes]:
    """GET ``http://127.0.0.1:<port><path>``; returns ``(status, body)`` (status 0 when unreachable)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, b""
    except (OSError, urllib.error.URLError):
        return 0, b""


class QuestDBServer(ServerRecipe):
    name = "questdb"
    install_script = "install_questdb.sh"
    # http: REST /exec + ILP over HTTP /write; min: health server (/status); pg: PostgreSQL wire;
    # ilp: ILP over TCP (unused by tsbench, moved off 9009 so it never clashes).
    port_roles = ("http", "min", "pg", "ilp")
    stop_signal: ClassVar[int] = signal.SIGTERM  # closes writers and WAL cleanly in well under 1 s
    start_timeout_s = 120.0
    tuning: ClassVar[dict[str, str]] = TUNING

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

    def initialise(self) -> None:
        self.config_path.parent.mkdir(parents=True, exist_ok=True)
        for path, text in ((self.config_path, self.config_text()), (self.log_config_path, LOG_CONF)):
            tmp = path.with_suffix(".tmp")
            tmp.write_text(text)
            os.replace(tmp, path)

    def config_text(self) -> str:
        lines = [
            "# written by tsbench (targets/questdb/server.py); QuestDB's defaults apply to every other key",
            f"http.net.bind.to=127.0.0.1:{self.ports['http']}",
            f"http.min.net.bind.to=127.0.0.1:{self.ports['min']}",
            f"pg.net.bind.to=127.0.0.1:{self.ports['pg']}",
            f"line.tcp.net.bind.to=127.0.0.1:{self.ports['ilp']}",
            "line.udp.enabled=false",
            "telemetry.enabled=false",
            *(f"{key}={value}" for key, value in self.tuning.items()),
        ]
        return "\n".join(lines) + "\n"

    def command(self) -> list[str]:
        jar = questdb_jar()
        if not jar.is_file():
            raise TargetError(f"questdb: {jar} is missing; run scripts/install_questdb.sh")
        return [
            java_binary(),
            *JAVA_OPTIONS,
            "-p",
            str(jar),
            "-m",
            "io.questdb/io.questdb.ServerMain",
            "-d",
            str(self.root),
        ]

    def ready(self) -> bool:
        status, _ = http_get(self.ports["http"], "/exec?query=select%201")
        return status == 200

    def endpoint(self) -> Endpoint:
        return Endpoint(
            host="127.0.0.1",
            ports=dict(self.ports),
            user=PG_USER,
            database=PG_DATABASE,
            data_dirs=tuple(str(p) for p in self.data_dirs()),
            extra={"ingest": "ILP over HTTP", "query": "PostgreSQL wire"},
            secrets={"password": PG_PASSWORD},
        )

    def data_dirs(self) -> list[Path]:
        """Tables, their symbol maps/indexes and their WAL segments all live under ``db/``."""
        return [self.root / "db"]

    def version(self) -> str:
        match = re.search(r"questdb-(.+)\.jar$", questdb_jar().name)
        return match.group(1) if match else questdb_version()
