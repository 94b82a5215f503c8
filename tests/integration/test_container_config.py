"""Container specs against the real servers the local runtime installs: the variables a container
spec sets are the ones the server reads, with the local recipe's values (no Docker engine needed)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar

import psycopg
import pytest

from tsbench.runtimes.local import LocalRuntime, LocalServer
from tsbench.targets.questdb.container import CONTAINERS, PASSWORD_VARIABLE
from tsbench.targets.questdb.definition import DEFINITION
from tsbench.targets.questdb.server import DEFAULT_PASSWORD, PG_DATABASE, PG_USER, QuestDBServer

pytestmark = pytest.mark.integration

SPEC = next(iter(CONTAINERS.values()))
PASSWORD = "container-password-0123456789"


class QuestDBTunedByEnvironment(QuestDBServer):
    """The local QuestDB with nothing tuned in server.conf: the container's ``QDB_*`` variables (and a
    PG-wire password as the Docker runtime passes it) do all of it."""

    name = "questdb-env"
    tuning: ClassVar[Mapping[str, object]] = {}

    @property
    def password(self) -> str:
        return PASSWORD  # as the Docker runtime passes it (below), so that the recipe's ready check logs in

    def environment(self) -> dict[str, str]:
        env = super().environment()
        env.update({key: value for key, value in SPEC.environment.items() if key.startswith("QDB_")})
        env.update({variable: PASSWORD for variable in SPEC.secret_env})
        return env


@pytest.fixture(scope="module")
def questdb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    runtime = LocalRuntime(Path(tmp_path_factory.mktemp("state")))
    server = runtime.provision_recipe(QuestDBTunedByEnvironment, "questdb-env")
    try:
        yield server
    finally:
        runtime.teardown("questdb-env")


def connect(server: LocalServer, password: str) -> psycopg.Connection:
    port = server.recipe.ports["pg"]
    return psycopg.connect(
        host="127.0.0.1", port=port, user=PG_USER, password=password, dbname=PG_DATABASE, autocommit=True
    )


def test_questdb_reads_every_container_variable(questdb: LocalServer) -> None:
    expected = {**DEFINITION.settings(), "telemetry.enabled": "false", "line.udp.enabled": "false"}
    keys = ", ".join(f"'{key}'" for key in expected)
    with connect(questdb, PASSWORD) as conn:
        query = "SELECT property_path, value, value_source FROM (SHOW PARAMETERS) WHERE property_path IN "
        rows = conn.execute(f"{query}({keys})").fetchall()
    assert {path: (value, source) for path, value, source in rows} == {
        key: (value, "env") for key, value in expected.items()
    }


def test_questdb_pg_password_comes_from_the_secret_variable(questdb: LocalServer) -> None:
    assert SPEC.secret_env == {"QDB_PG_PASSWORD": PASSWORD_VARIABLE, "QDB_HTTP_PASSWORD": PASSWORD_VARIABLE}
    with connect(questdb, PASSWORD) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    with pytest.raises(psycopg.OperationalError):
        connect(questdb, DEFAULT_PASSWORD)  # QuestDB's default no longer logs in
