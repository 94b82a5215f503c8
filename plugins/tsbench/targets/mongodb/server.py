"""MongoDB Community Server (``mongod`` from the official repo.mongodb.org apt repository) as a local
process, shared by both MongoDB targets (the layouts differ, the server does not).

``initialise`` writes ``<home>/mongod.conf`` (YAML), the configuration ``config.py`` declares for
every runtime: dbPath ``<home>/data``, the allocated port on loopback, no Unix socket (it would live
in /tmp), authorization on (the root user ``tsbench`` with the instance's 0600 password, created by
``after_start`` through the localhost exception), and the tuning table of ``definition.py`` (no
diagnostic data capture: FTDC would add files under dbPath that are not data). Everything else is
mongod's default: WiredTiger, snappy block compression, journal commit interval 100 ms, cache 50 % of
(RAM − 1 GB). Logs go to stdout (the runtime's ``server.log``). ``install.sh`` installs the pinned
version; where repo.mongodb.org is unreachable it fails at once, saying so.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from pathlib import Path
from typing import ClassVar

from pymongo import MongoClient
from pymongo.errors import OperationFailure, PyMongoError

from tsbench.runtimes.definition import opt_dir
from tsbench.runtimes.instance_secret import instance_password
from tsbench.runtimes.local import ServerRecipe
from tsbench.targets.base import Endpoint, TargetError
from tsbench.targets.mongodb.config import Form, conf_text, mongod_options
from tsbench.targets.mongodb.definition import DEFINITION

DATABASE = "tsbench"  # prefix of the targets' database names (client.database_name)
USER = "tsbench"  # the root user every runtime creates (local: after_start; image: its entrypoint)
UNAUTHORIZED = 13  # MongoDB's error code once a user exists and the caller has not logged in


def mongodb_version() -> str:
    """The pinned version (definition.py), or the ``MONGODB_VERSION`` override."""
    return DEFINITION.pinned_version()


def mongod_binary() -> str:
    """The mongod that install.sh recorded (same TSBENCH_OPT rule as scripts/lib.sh)."""
    recorded = opt_dir() / "mongodb" / "mongod.path"
    if recorded.is_file():
        return recorded.read_text().strip()
    found = shutil.which("mongod")
    if not found:
        raise TargetError("mongodb: mongod is not installed; run targets/mongodb/install.sh")
    return found


def ping(port: int, timeout_ms: int = 500) -> bool:
    """True when a mongod answers ``ping`` on 127.0.0.1:``port``."""
    client: MongoClient = MongoClient(
        "127.0.0.1",
        port,
        directConnection=True,
        serverSelectionTimeoutMS=timeout_ms,
        connectTimeoutMS=timeout_ms,
    )
    try:
        return client.admin.command("ping").get("ok") == 1
    except PyMongoError:
        return False
    finally:
        client.close()


class MongoServer(ServerRecipe):
    name = "mongodb"
    definition = DEFINITION
    port_roles = ("mongo",)
    stop_signal: ClassVar[int] = signal.SIGTERM  # clean shutdown: final checkpoint, journal closed
    start_timeout_s = 120.0
    stop_timeout_s = 120.0

    @property
    def config_path(self) -> Path:
        return self.home / "mongod.conf"

    def initialise(self) -> None:
        instance_password(self.home)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.config_path.with_suffix(".tmp")
        tmp.write_text(self.config_text())
        os.replace(tmp, self.config_path)

    def config_text(self) -> str:
        """The one configuration (``config.py``): dbPath ``data/``, loopback at the allocated port, no
        Unix socket, authorization on, with the definition's tuning on this host."""
        form = Form(
            str(self.data_dir), "127.0.0.1", str(self.ports["mongo"]), socket=False, authorization="enabled"
        )
        return conf_text(mongod_options(form, DEFINITION.settings()), "targets/mongodb/server.py")

    def command(self) -> list[str]:
        return [mongod_binary(), "--config", str(self.config_path)]

    def ready(self) -> bool:
        return ping(self.ports["mongo"])

    @property
    def password(self) -> str:
        """The root ``USER``'s password: the instance's own (``instance_secret``)."""
        return instance_password(self.home)

    def after_start(self) -> None:
        """The root user on the first start, through mongod's localhost exception (a server with
        authorization on and no user yet lets a loopback client create the first one); a restart's
        attempt is refused (Unauthorized) and ignored."""
        client: MongoClient = MongoClient("127.0.0.1", self.ports["mongo"], directConnection=True)
        try:
            client.admin.command(
                "createUser", USER, pwd=self.password, roles=[{"role": "root", "db": "admin"}]
            )
        except OperationFailure as error:
            if error.code != UNAUTHORIZED:
                raise TargetError(
                    f"mongodb: createUser {USER} failed: {error.code} {error.details}"
                ) from None
        finally:
            client.close()

    def endpoint(self) -> Endpoint:
        return Endpoint(
            host="127.0.0.1",
            ports=dict(self.ports),
            user=USER,
            database=DATABASE,
            data_dirs=tuple(str(p) for p in self.data_dirs()),
            extra={"ingest": "pymongo bulk writes", "query": "aggregation pipeline", "auth_source": "admin"},
            secrets={"password": self.password},
        )

    def version(self) -> str:
        """``mongod --version`` ("db version v8.0.20" → "8.0.20")."""
        try:
            output = subprocess.run(
                [mongod_binary(), "--version"], capture_output=True, text=True, timeout=30
            ).stdout
        except (OSError, subprocess.SubprocessError, TargetError):
            return mongodb_version()
        match = re.search(r"db version v(\S+)", output)
        return match.group(1) if match else mongodb_version()
