"""Apache IoTDB (the ``iotdb-server`` and ``iotdb-confignode`` jars from Maven Central, with their
dependencies: ``install.sh``) as a local process: ``run.sh`` runs a ConfigNode and a DataNode, the
two processes of an IoTDB, as one server.

``<home>/conf/iotdb-system.properties`` (written by ``initialise``) configures both: every listener
on loopback at an allocated port, every directory under ``<home>/data`` (the ConfigNode's system
and consensus state; the DataNode's system state, schema and data regions, WAL and TsFiles), then
``definition.py``'s table. IoTDB ignores the listening address it is given (its Thrift services bind
every address); ``run.sh`` preloads tsbench's loopback-bind library
(``runtimes/native/loopback_bind.c``), which keeps them on loopback, and the local runtime checks
every listener. A fresh server's administrator ``root`` has the password ``root``: ``after_start``
replaces it with the instance's own password (a 0600 file, never logged) at the first start, so a
stock login is refused from then on. One client path: the session protocol on ``rpc``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import ClassVar

from tsbench.runtimes.definition import ServerDefinition, opt_dir
from tsbench.runtimes.instance_secret import instance_password
from tsbench.runtimes.local import ServerRecipe
from tsbench.runtimes.loopback_shim import installed_library
from tsbench.targets.base import Endpoint, TargetError
from tsbench.targets.iotdb.client import DEFAULT_PASSWORD, USER, open_session, refused_login
from tsbench.targets.iotdb.definition import DEFINITION

FOLDER = Path(__file__).resolve().parent
SECRET = "password"  # the instance secret's name: <home>/.secret-password

# Port roles: the client RPC, then IoTDB's internal listeners (each a loopback port of its own).
PORT_KEYS = {
    "rpc": "dn_rpc_port",
    "confignode": "cn_internal_port",
    "confignode_consensus": "cn_consensus_port",
    "datanode": "dn_internal_port",
    "exchange": "dn_mpp_data_exchange_port",
    "schema_consensus": "dn_schema_region_consensus_port",
    "data_consensus": "dn_data_region_consensus_port",
}
ADDRESS_KEYS = ("cn_internal_address", "dn_rpc_address", "dn_internal_address")
# Directories, each under <home>/data (relative paths in IoTDB's defaults resolve against the home).
DIRECTORY_KEYS = {
    "cn_system_dir": "confignode/system",
    "cn_consensus_dir": "confignode/consensus",
    "cn_pipe_receiver_file_dir": "confignode/system/pipe/receiver",
    "dn_system_dir": "datanode/system",
    "dn_data_dirs": "datanode/data",
    "dn_consensus_dir": "datanode/consensus",
    "dn_wal_dirs": "datanode/wal",
    "dn_tracing_dir": "datanode/tracing",
    "dn_sync_dir": "datanode/sync",
    "sort_tmp_dir": "datanode/tmp",
    "dn_pipe_receiver_file_dirs": "datanode/system/pipe/receiver",
}


def install_dir(version: str) -> Path:
    """Where ``install.sh`` puts the jars (``lib/``) and the shim of ``version``."""
    return opt_dir() / "iotdb" / version


def properties(ports: dict[str, int], data_dir: Path, definition: ServerDefinition = DEFINITION) -> str:
    """``iotdb-system.properties`` of one local server: listeners, directories, then the table."""
    lines = [f"{key}=127.0.0.1" for key in ADDRESS_KEYS]
    lines += [f"{key}={ports[role]}" for role, key in PORT_KEYS.items()]
    seed = f"127.0.0.1:{ports['confignode']}"
    lines += [f"cn_seed_config_node={seed}", f"dn_seed_config_node={seed}"]
    lines += [f"{key}={data_dir / relative}" for key, relative in DIRECTORY_KEYS.items()]
    lines += [f"{key}={value}" for key, value in definition.settings().items()]
    return "\n".join(lines) + "\n"


class IoTDBServer(ServerRecipe):
    name = "iotdb"
    definition: ClassVar[ServerDefinition] = DEFINITION
    port_roles = tuple(PORT_KEYS)
    start_timeout_s = 180.0  # the ConfigNode starts, then the DataNode registers and recovers its WAL
    stop_timeout_s = 120.0  # the DataNode flushes its memtables to TsFiles at shutdown

    @property
    def install_dir(self) -> Path:
        return install_dir(self.definition.pinned_version())

    @property
    def password(self) -> str:
        return instance_password(self.home, SECRET)

    def initialise(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        (self.home / "conf").mkdir(parents=True, exist_ok=True)
        (self.home / "conf" / "iotdb-system.properties").write_text(self.config_text())
        instance_password(self.home, SECRET)

    def config_text(self) -> str:
        return properties(self.ports, self.data_dir, self.definition)

    def command(self) -> list[str]:
        if not (self.install_dir / "VERSION").is_file():
            raise TargetError(f"iotdb: {self.install_dir} is not installed; run scripts/install.sh iotdb")
        shim = installed_library(self.install_dir, "iotdb")
        java = shutil.which("java")
        if java is None:
            raise TargetError("iotdb: java (17+) is not on PATH")
        heaps = self.definition.process_settings()
        return [
            "bash",
            str(FOLDER / "run.sh"),
            java,
            str(self.install_dir / "lib"),
            str(shim),
            str(self.home),
            f"-Xms{heaps['confignode_heap']} -Xmx{heaps['confignode_heap']}",
            f"-Xms{heaps['datanode_heap']} -Xmx{heaps['datanode_heap']}",
        ]

    def _login(self, password: str) -> bool:
        """True when a session opens as root with ``password``; False when the server refuses it.
        Any other failure (not listening yet, not registered) is raised."""
        try:
            open_session("127.0.0.1", self.ports["rpc"], USER, password).close()
        except TargetError as error:
            if refused_login(error):
                return False
            raise
        return True

    def ready(self) -> bool:
        """True once the DataNode takes sessions (with the instance's password, or a fresh
        server's default one before ``after_start`` replaces it)."""
        try:
            return self._login(self.password) or self._login(DEFAULT_PASSWORD)
        except TargetError:
            return False

    def after_start(self) -> None:
        """At the first start, root's default password becomes the instance's own (idempotent)."""
        if self._login(self.password):
            return
        session = open_session("127.0.0.1", self.ports["rpc"], USER, DEFAULT_PASSWORD)
        try:
            session.execute_non_query_statement(f"ALTER USER {USER} SET PASSWORD '{self.password}'")
        except Exception as error:  # the client raises RuntimeError("<status>: <message>")
            raise TargetError(f"iotdb: could not set root's password: {error}") from None
        finally:
            session.close()
        if not self._login(self.password) or self._login(DEFAULT_PASSWORD):
            raise TargetError("iotdb: root's password did not change")

    def endpoint(self) -> Endpoint:
        return Endpoint(
            host="127.0.0.1",
            ports=dict(self.ports),
            user=USER,
            data_dirs=(str(self.data_dir),),
            secrets={"password": self.password},
        )

    def version(self) -> str:
        """The version the installed server jar declares (``install.sh`` checked it)."""
        return (self.install_dir / "VERSION").read_text().strip()
