"""InfluxDB 1.6.7 (Debian package) as a local process: ``influxd -config <home>/influxdb.conf``.

Everything the server keeps lives below the instance home: ``meta/`` (databases, retention policies,
shard groups), ``data/`` (TSM files and, with ``tsi1``, the series index) and ``wal/`` (write-ahead
log). Both listeners (HTTP API and the top-level ``bind-address`` backup/restore RPC) are moved onto
the allocated loopback ports. Config keys follow the Debian build (``reporting-enabled = false``);
see ``scripts/install_influxdb.sh``.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any, ClassVar

import psutil
import requests

from tsbench.runtimes.local import ServerRecipe
from tsbench.targets.base import Endpoint, TargetError

DATABASE = "benchmark"

# Tuning for our 2-core / 24 GiB machines (reasons in README.md, "Configuration").
TUNING: dict[str, Any] = {
    # inmem: the series index lives in the Go heap (rebuilt from the TSM files at start-up). Faster
    # writes and queries than tsi1 at the cardinalities we run (up to a few million series fit in
    # 24 GiB); tsi1 only pays off when the index no longer fits in memory.
    "index-version": "inmem",
    # Writes are refused once the in-memory cache reaches cache-max-memory-size (default 1g): 4g
    # leaves headroom for two writers while a snapshot is being written. Snapshots to TSM files
    # start at cache-snapshot-memory-size; InfluxDB's default (25m) keeps the data moving into
    # compressed TSM files during the load, as in TSBS's runs (256m measured no faster here).
    "cache-max-memory-size": "4g",
    "cache-snapshot-memory-size": "25m",
    # 0: fsync the WAL on every write before answering 204 (durable per request).
    "wal-fsync-delay": "0s",
    # 0 = unlimited: high-cardinality scales (100k+ hosts × measurements × extra tags) must load.
    "max-series-per-database": 0,
    "max-values-per-tag": 0,
    # 0 = default (half the cores, i.e. 1 here).
    "max-concurrent-compactions": 0,
}


GOGC = 1000


def influxd_binary() -> str:
    """Path recorded by scripts/install_influxdb.sh, else ``influxd`` on PATH."""
    opt = os.environ.get("TSBENCH_OPT") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tsbench", "opt"
    )
    recorded = Path(opt) / "influxdb" / "influxd.path"
    if recorded.is_file():
        path = recorded.read_text().strip()
        if path and os.access(path, os.X_OK):
            return path
    found = shutil.which("influxd") or "/usr/bin/influxd"
    if not os.access(found, os.X_OK):
        raise TargetError("influxd not found: run scripts/install_influxdb.sh")
    return found


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return f'"{value}"'


class InfluxDBServer(ServerRecipe):
    name = "influxdb"
    install_script = "install_influxdb.sh"
    port_roles = ("http", "rpc")
    stop_signal = signal.SIGTERM  # closes shards and the WAL cleanly (well under a second here)
    start_timeout_s = 120.0  # the inmem index is rebuilt from the TSM files at start-up
    tuning: ClassVar[dict[str, Any]] = TUNING
    # Go GC target: with Go's default (100) the write path spends about a quarter of its CPU in GC.
    # The live heap is small next to 24 GiB, so let it grow 10x between collections, capped by a
    # soft memory limit at half the machine's RAM (GOMEMLIMIT; Go >= 1.19, the Debian binary is
    # built with 1.19): near the cap the GC simply runs more often. Measured server CPU per 864k cpu
    # rows: GOGC 100 → 10.7 s, 400 → 9.7 s, 1000 → 8.9 s.
    gogc: ClassVar[int] = GOGC
    memory_limit_share: ClassVar[float] = 0.5

    @property
    def config_path(self) -> Path:
        return self.home / "influxdb.conf"

    @property
    def meta_dir(self) -> Path:
        return self.home / "meta"

    @property
    def wal_dir(self) -> Path:
        return self.home / "wal"

    def initialise(self) -> None:
        for folder in (self.meta_dir, self.data_dir, self.wal_dir):
            folder.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(self.config_text())

    def config_text(self) -> str:
        data = "\n".join(f"  {key} = {_toml(value)}" for key, value in self.tuning.items())
        return f"""\
# written by tsbench (targets/influxdb/server.py); Debian 1.6.7 key names
reporting-enabled = false
bind-address = "127.0.0.1:{self.ports["rpc"]}"

[meta]
  dir = "{self.meta_dir}"
  logging-enabled = false

[data]
  dir = "{self.data_dir}"
  wal-dir = "{self.wal_dir}"
  query-log-enabled = false
{data}

[coordinator]
  write-timeout = "60s"

[retention]
  enabled = false

[shard-precreation]
  enabled = false

[monitor]
  store-enabled = false

[subscriber]
  enabled = false

[continuous_queries]
  enabled = false

[http]
  enabled = true
  bind-address = "127.0.0.1:{self.ports["http"]}"
  log-enabled = false
  pprof-enabled = false
  max-row-limit = 0
  max-body-size = 0

[logging]
  level = "warn"
  suppress-logo = true
"""

    def command(self) -> list[str]:
        return [influxd_binary(), "-config", str(self.config_path)]

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("INFLUXDB_CONFIG_PATH", None)
        # Environment overrides (INFLUXDB_DATA_DIR, …) would silently win over our file.
        for key in [k for k in env if k.startswith("INFLUXDB_")]:
            env.pop(key)
        env["GOGC"] = str(self.gogc)
        env["GOMEMLIMIT"] = str(self.memory_limit())
        return env

    def memory_limit(self) -> int:
        """GOMEMLIMIT in bytes (a soft limit: the Go GC works harder near it, never fails)."""
        return int(psutil.virtual_memory().total * self.memory_limit_share)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.ports['http']}"

    def ready(self) -> bool:
        try:
            return requests.get(f"{self.url}/ping", timeout=1).status_code == 204
        except requests.RequestException:
            return False

    def after_start(self) -> None:
        response = requests.post(f"{self.url}/query", data={"q": f'CREATE DATABASE "{DATABASE}"'}, timeout=30)
        if response.status_code != 200 or "error" in response.text:
            raise TargetError(
                f"influxdb: CREATE DATABASE failed: {response.status_code} {response.text[:300]}"
            )

    def endpoint(self) -> Endpoint:
        return Endpoint(
            host="127.0.0.1",
            ports=dict(self.ports),
            database=DATABASE,
            data_dirs=tuple(str(p) for p in self.data_dirs()),
        )

    def data_dirs(self) -> list[Path]:
        return [self.data_dir, self.wal_dir, self.meta_dir]

    def version(self) -> str:
        result = subprocess.run([influxd_binary(), "version"], capture_output=True, text=True, timeout=30)
        # "InfluxDB v1.6.7~rc0 (git: unknown unknown)"
        words = result.stdout.split()
        return words[1].removeprefix("v") if len(words) > 1 else result.stdout.strip()
