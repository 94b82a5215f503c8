"""GridDB CE (built from the pinned source: ``build.sh``) as a local process: one node, one cluster.

GridDB's home (``GS_HOME``) is ``<home>/data``: ``conf/gs_node.json`` and ``conf/gs_cluster.json``
(written by ``initialise``: every path absolute, every service on 127.0.0.1 on its allocated port),
``conf/password`` (users ``admin`` and ``system``, sha256 of a per-instance random password kept in
``<home>/admin.password``, mode 600), then ``data/`` (checkpointed data files), ``txnlog/``
(transaction log = WAL), ``log/`` (event logs), ``backup/``, ``sync/``, ``swap/`` (SQL swap).

``gsserver --conf <GS_HOME>/conf`` runs in the foreground (what ``gs_startnode`` starts in the
background). Ready = ``GET /node/stat`` on the system port answers with recovery done; then
``after_start`` joins the node to cluster ``tsbench`` (fixed-list mode, one member: what
``gs_joincluster -n 1`` does) and waits for ``clusterStatus`` MASTER and ``partitionStatus`` NORMAL.

The configuration is ``config.py``'s (the same for every runtime), version and
``dataStore``/``checkpoint`` tuning ``definition.py``'s. Every service address is 127.0.0.1 in the
configuration, but GridDB 5.9.0 binds every listening socket to the wildcard address regardless
(server/event_engine.cpp: ``resolveListenAddress`` binds a NULL host on the service's port; no
service ever sets a listen address), so the node runs with tsbench's loopback-bind library
(``runtimes/native/loopback_bind.c``) preloaded; the local runtime checks the sockets the process
holds after each start.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import signal
import time
from pathlib import Path
from typing import Any, ClassVar

from tsbench.runtimes.definition import opt_dir
from tsbench.runtimes.local import ServerRecipe
from tsbench.runtimes.loopback_shim import installed_library
from tsbench.runtimes.process_env import server_environment
from tsbench.targets.base import Endpoint, TargetError
from tsbench.targets.griddb import rest
from tsbench.targets.griddb.client import CLUSTER, DATABASE, USER
from tsbench.targets.griddb.config import Form, by_section, cluster_config, json_text, json_value, node_config
from tsbench.targets.griddb.definition import DEFINITION

HOST = "127.0.0.1"
JOIN_TIMEOUT_S = 120.0


def tuning_json() -> dict[str, Any]:
    """The definition's table on this host, values as ``gs_node.json`` takes them."""
    return {key: json_value(value) for key, value in DEFINITION.settings().items()}


def tuning_sections() -> dict[str, dict[str, Any]]:
    """That table in ``gs_node.json``'s sections (``{"dataStore": {"concurrency": 2}, …}``)."""
    return by_section(tuning_json())


def build_prefix() -> Path:
    """Where ``build.sh`` installs the pinned release (``bin/gsserver``, ``BUILD``)."""
    return opt_dir() / f"griddb-{DEFINITION.pinned_version()}"


def gsserver_binary() -> str:
    """``gsserver`` of the pinned release, as ``build.sh`` installed it."""
    binary = build_prefix() / "bin" / "gsserver"
    if not (build_prefix() / "BUILD").is_file() or not os.access(binary, os.X_OK):
        raise TargetError(
            f"griddb: {binary} is not built; run scripts/install.sh griddb (builds GridDB "
            f"{DEFINITION.pinned_version()} from its pinned source, ≈ 30 min once per machine)"
        )
    return str(binary)


def loopback_shim() -> Path:
    """The loopback-bind library install.sh compiled, preloaded into the node: GridDB binds every
    service to the wildcard address (this module's docstring says where)."""
    return installed_library(build_prefix() / "lib", "griddb")


def build_facts() -> dict[str, str]:
    """``build.sh``'s record of the build (archive, tree_sha256, built, seconds, cores, compiler)."""
    record = build_prefix() / "BUILD"
    if not record.is_file():
        return {}
    pairs = (line.split("=", 1) for line in record.read_text().splitlines() if "=" in line)
    return {key: value for key, value in pairs}


def password_digest(password: str) -> str:
    """What ``gs_passwd`` stores for a password: its sha256, hex."""
    return hashlib.sha256(password.encode()).hexdigest()


class GridDBServer(ServerRecipe):
    name = "griddb"
    definition = DEFINITION
    # transaction: the client API (fixed-list notification member); system: REST (/node/stat, join);
    # cluster and sync: node-to-node; sql: the JDBC/SQL service (always on in GridDB CE).
    port_roles = ("transaction", "system", "cluster", "sync", "sql")
    stop_signal: ClassVar[int] = signal.SIGTERM  # what ``gs_stopnode --rc`` (the service script) sends
    start_timeout_s = 180.0
    stop_timeout_s = 120.0  # then SIGKILL; the next start recovers from the transaction log

    @property
    def gs_home(self) -> Path:
        return self.data_dir

    @property
    def conf_dir(self) -> Path:
        return self.gs_home / "conf"

    @property
    def password_file(self) -> Path:
        return self.home / "admin.password"

    def password(self) -> str:
        if not self.password_file.is_file():
            raise TargetError(f"griddb: {self.password_file} is missing (initialise() writes it)")
        return self.password_file.read_text().strip()

    # -- configuration -----------------------------------------------------------------------------

    @property
    def form(self) -> Form:
        """Absolute paths under ``GS_HOME``, every service and the one member on loopback."""
        home = str(self.gs_home)
        return Form(home, home, address=HOST, ports=dict(self.ports), member=HOST)

    def node_config(self) -> dict[str, Any]:
        return node_config(self.form, tuning_json())

    def cluster_config(self) -> dict[str, Any]:
        return cluster_config(self.form)

    def config_text(self) -> str:
        """Both files of the one configuration (``config.py``) as this node writes them."""
        node, cluster = json_text(self.node_config()), json_text(self.cluster_config())
        return f"# conf/gs_node.json\n{node}# conf/gs_cluster.json\n{cluster}"

    def initialise(self) -> None:
        for folder in ("conf", "data", "txnlog", "log", "backup", "sync", "swap"):
            (self.gs_home / folder).mkdir(parents=True, exist_ok=True)
        if not self.password_file.is_file():
            self.password_file.touch(mode=0o600)
            self.password_file.write_text(secrets.token_urlsafe(18) + "\n")
        digest = password_digest(self.password())
        files = {
            "gs_node.json": json_text(self.node_config()),
            "gs_cluster.json": json_text(self.cluster_config()),
            "password": f"{USER},{digest}\nsystem,{digest}\n",
        }
        for name, text in files.items():
            path = self.conf_dir / name
            tmp = path.with_suffix(".tmp")
            tmp.write_text(text)
            os.replace(tmp, path)
        (self.conf_dir / "password").chmod(0o600)

    # -- process -----------------------------------------------------------------------------------

    def command(self) -> list[str]:
        return [gsserver_binary(), "--conf", str(self.conf_dir)]

    def environment(self) -> dict[str, str]:
        env = server_environment()
        env["GS_HOME"] = str(self.gs_home)
        env["GS_LOG"] = str(self.gs_home / "log")
        env["LD_PRELOAD"] = str(loopback_shim())
        return env

    def stat(self, timeout: float = 2.0) -> dict[str, Any]:
        return rest.node_stat(HOST, self.ports["system"], USER, self.password(), timeout)

    def ready(self) -> bool:
        """The node answers on its system port and has finished recovery."""
        try:
            body = self.stat(timeout=1.0)
        except TargetError:
            return False
        return float(body.get("recovery", {}).get("progressRate", 0)) >= 1.0

    def after_start(self) -> None:
        """Join (form) the one-node cluster and wait until it serves every partition."""
        if self.stat().get("cluster", {}).get("nodeStatus") == "INACTIVE":
            rest.join_cluster(HOST, self.ports["system"], USER, self.password(), CLUSTER, 1)
        deadline = time.monotonic() + JOIN_TIMEOUT_S
        while True:
            cluster = self.stat().get("cluster", {})
            if cluster.get("clusterStatus") == "MASTER" and cluster.get("partitionStatus") == "NORMAL":
                return
            if time.monotonic() > deadline:
                raise TargetError(f"griddb: cluster not serving after {JOIN_TIMEOUT_S:.0f} s: {cluster}")
            time.sleep(0.2)

    def endpoint(self) -> Endpoint:
        return Endpoint(
            host=HOST,
            ports=dict(self.ports),
            user=USER,
            database=DATABASE,
            data_dirs=tuple(str(p) for p in self.data_dirs()),
            extra={"cluster": CLUSTER, "ingest": "GridStore.multiPut", "query": "TQL (fetchAll)"},
            secrets={"password": self.password()},
        )

    def data_dirs(self) -> list[Path]:
        """Checkpointed data files and the transaction log (GridDB's WAL)."""
        return [self.gs_home / "data", self.gs_home / "txnlog"]

    def version(self) -> str:
        build = build_facts()
        tree = build.get("tree_sha256", "")  # build.sh records the source tree's hash (issue 43)
        source = f" from {build.get('archive', '?')} (source tree sha256 {tree[:12]}…)" if build else ""
        return f"GridDB CE {DEFINITION.pinned_version()} built{source}"
