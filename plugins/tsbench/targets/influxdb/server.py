"""InfluxDB 1.x (built from its Go module by ``install.sh``) as a local process:
``influxd -config <home>/influxdb.conf``.

Everything the server keeps lives below the instance home: ``meta/`` (databases, retention policies,
shard groups), ``data/`` (TSM files and, with ``tsi1``, the series index) and ``wal/`` (write-ahead
log). Both listeners (HTTP API and the top-level ``bind-address`` backup/restore RPC) are moved onto
the allocated loopback ports; see ``install.sh``. The pinned version runs, or a run's release of it
(``versions``), each built side by side. The configuration: ``config.py``; tuning and Go GC
settings: ``definition.py``.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any, ClassVar

import requests

from tsbench.runtimes.definition import ServerDefinition, opt_dir
from tsbench.runtimes.instance_secret import instance_password
from tsbench.runtimes.local import ServerRecipe
from tsbench.runtimes.process_env import server_environment
from tsbench.targets.base import Endpoint, TargetError
from tsbench.targets.influxdb.auth import USER, basic
from tsbench.targets.influxdb.config import Form, influxdb_config, toml_text, toml_value
from tsbench.targets.influxdb.definition import DEFINITION, HALF_THE_RAM

DATABASE = "benchmark"


# The [data] tuning table on this host, typed as the configuration file writes it (definition.py).
TUNING: dict[str, Any] = {key: toml_value(value) for key, value in DEFINITION.settings().items()}


def influxd_binary(version: str) -> Path:
    """Where ``install.sh`` builds the ``influxd`` of ``version``."""
    return opt_dir() / "influxdb" / version / "influxd"


class InfluxDBServer(ServerRecipe):
    name = "influxdb"
    definition: ClassVar[ServerDefinition] = DEFINITION
    # The Go GC settings as the target reports them (target.py): GOGC and GOMEMLIMIT's share of RAM.
    gogc: ClassVar[int] = int(DEFINITION.process_settings()["gogc"])
    memory_limit_share: ClassVar[float] = HALF_THE_RAM.numerator / HALF_THE_RAM.denominator
    port_roles = ("http", "rpc")
    stop_signal = signal.SIGTERM  # closes shards and the WAL cleanly (well under a second here)
    start_timeout_s = 120.0  # the inmem index is rebuilt from the TSM files at start-up
    tuning: ClassVar[dict[str, Any]] = TUNING
    # HTTP asks for the admin's password. Only bench/vs_tsbs.py's server turns this off: TSBS's
    # InfluxDB tools have no login flags (the bench says so beside its figures).
    http_auth: ClassVar[bool] = True

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
        instance_password(self.home)

    def config_text(self) -> str:
        """``config.py``'s configuration in this instance's home, on its loopback ports."""
        form = Form(
            meta=str(self.meta_dir),
            data=str(self.data_dir),
            wal=str(self.wal_dir),
            http=f"127.0.0.1:{self.ports['http']}",
            rpc=f"127.0.0.1:{self.ports['rpc']}",
        )
        return toml_text(influxdb_config(form, self.tuning, http_auth=self.http_auth))

    @property
    def binary(self) -> Path:
        return influxd_binary(self.definition.pinned_version())

    def command(self) -> list[str]:
        if not os.access(self.binary, os.X_OK):
            raise TargetError(f"influxdb: {self.binary} is missing; run scripts/install.sh influxdb")
        return [str(self.binary), "-config", str(self.config_path)]

    def environment(self) -> dict[str, str]:
        env = server_environment()
        env.pop("INFLUXDB_CONFIG_PATH", None)
        # Environment overrides (INFLUXDB_DATA_DIR, …) would silently win over our file.
        for key in [k for k in env if k.startswith("INFLUXDB_")]:
            env.pop(key)
        # Go GC (definition.py's process table): GOGC, and GOMEMLIMIT, a soft limit (the Go GC works
        # harder near it, never fails; Go >= 1.19: install.sh builds with this machine's Go).
        process = self.definition.process_settings()
        env["GOGC"] = process["gogc"]
        env["GOMEMLIMIT"] = process["gomemlimit"]
        return env

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.ports['http']}"

    def ready(self) -> bool:
        try:
            return requests.get(f"{self.url}/ping", timeout=1).status_code == 204
        except requests.RequestException:
            return False

    @property
    def password(self) -> str:
        """The admin ``auth.USER``'s password: the instance's own (``instance_secret``)."""
        return instance_password(self.home)

    def _statement(self, text: str, headers: dict[str, str]) -> requests.Response:
        return requests.post(f"{self.url}/query", data={"q": text}, headers=headers, timeout=30)

    def after_start(self) -> None:
        """The admin user on the first start (1.x lets anyone create the first admin, and nobody once
        one exists: a restart's attempt is refused, 401), then the database, as that admin."""
        grant = f"CREATE USER {USER} WITH PASSWORD '{self.password}' WITH ALL PRIVILEGES"
        created = self._statement(grant, {})
        if created.status_code != 401 and (created.status_code != 200 or "error" in created.text):
            status, text = created.status_code, created.text[:300].replace(self.password, "***")
            raise TargetError(f"influxdb: CREATE USER {USER} failed: {status} {text}")
        response = self._statement(f'CREATE DATABASE "{DATABASE}"', basic(self.password))
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
            secrets={"password": self.password},
        )

    def data_dirs(self) -> list[Path]:
        return [self.data_dir, self.wal_dir, self.meta_dir]

    def version(self) -> str:
        result = subprocess.run([str(self.binary), "version"], capture_output=True, text=True, timeout=30)
        # "InfluxDB v1.8.10 (git: v1.8.10 unknown)"
        words = result.stdout.split()
        return words[1].removeprefix("v") if len(words) > 1 else result.stdout.strip()
