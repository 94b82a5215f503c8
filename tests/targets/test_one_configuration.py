"""A server's configuration is written once: the local files, the container's form and the files the
cloud host writes come from ``targets/<name>/config.py`` (InfluxDB, QuestDB, GridDB, PostgreSQL with
both TimescaleDB targets, ClickHouse, MongoDB with mongodb_naive). Each form is
produced as its runtime produces it (the recipe's files; the container spec; the rendered install
script run by bash) and parsed, so a setting added to one form only fails here."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from tsbench.runtimes.cloud_install import render_install_script
from tsbench.runtimes.container_spec import pick_container
from tsbench.runtimes.definition import Machine, ServerDefinition, load_definition
from tsbench.targets.clickhouse.config import LISTENERS_REMOVED as LISTENERS_OFF
from tsbench.targets.clickhouse.config import SYSTEM_LOGS_REMOVED as SYSTEM_LOGS
from tsbench.targets.clickhouse.container import CONTAINERS as CLICKHOUSE_CONTAINERS
from tsbench.targets.clickhouse.definition import DEFINITION as CLICKHOUSE
from tsbench.targets.clickhouse.server import ClickHouseServer
from tsbench.targets.griddb.container import CONTAINERS as GRIDDB_CONTAINERS
from tsbench.targets.griddb.definition import DEFINITION as GRIDDB
from tsbench.targets.griddb.server import GridDBServer
from tsbench.targets.influxdb.config import v1_variable
from tsbench.targets.influxdb.container import CONTAINERS
from tsbench.targets.influxdb.definition import DEFINITION
from tsbench.targets.influxdb.server import InfluxDBServer
from tsbench.targets.mongodb.server import MongoServer
from tsbench.targets.postgres.config import hba_text
from tsbench.targets.postgres.server import PostgresRecipe
from tsbench.targets.questdb.config import LISTENERS as QUESTDB_LISTENERS
from tsbench.targets.questdb.config import qdb_variable
from tsbench.targets.questdb.container import CONTAINERS as QUESTDB_CONTAINERS
from tsbench.targets.questdb.container import ROOT as QUESTDB_ROOT
from tsbench.targets.questdb.definition import DEFINITION as QUESTDB
from tsbench.targets.questdb.server import QuestDBServer
from tsbench.targets.timescaledb.server import TimescaleRecipe
from tsbench.targets.timescaledb_tsl.server import TimescaleTslRecipe

TARGETS = Path(__file__).resolve().parents[2] / "plugins" / "tsbench" / "targets"
# Where the server runs decides these (directories, listeners).
PLACES = {"meta.dir", "data.dir", "data.wal-dir", "bind-address", "http.bind-address"}


def _flat(body: dict[str, Any] | list[Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    items = body.items() if isinstance(body, dict) else enumerate(body)
    for key, value in items:
        nested = isinstance(value, dict | list)
        out.update(_flat(value, f"{prefix}{key}.") if nested else {f"{prefix}{key}": value})
    return out


def _cloud_file(
    function: str, data_dir: str, definition: ServerDefinition = DEFINITION, **variables: str
) -> str:
    """What ``function`` of ``definition``'s rendered install script prints on a host like this one
    (``variables``: the shell variables the target's script sets before it calls ``function``)."""
    script = render_install_script(definition)
    header = script[: script.index("# --- runtimes/cloud_lib.sh ---")]
    machine = Machine.this_host()
    env = {
        "PATH": os.environ["PATH"],
        "DATA_DIR": data_dir,
        "TSBENCH_CORES": str(machine.cores),
        "TSBENCH_MEMORY_MIB": str(machine.memory_mib),
        **variables,
    }
    done = subprocess.run(["bash", "-c", f"{header}\n{function}"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_influxdb_local_and_cloud_files_hold_the_same_settings(tmp_path: Path) -> None:
    recipe = InfluxDBServer(tmp_path, {"http": 18086, "rpc": 18088})
    local = _flat(tomllib.loads(recipe.config_text()))
    cloud = _flat(tomllib.loads(_cloud_file("influxdb_conf", "/data/db")))
    assert local.keys() == cloud.keys()
    differ = {key for key in local.keys() & cloud.keys() if local[key] != cloud[key]}
    assert differ == PLACES, differ
    assert local["http.auth-enabled"] is cloud["http.auth-enabled"] is True
    assert local["reporting-disabled"] is cloud["reporting-disabled"] is True
    assert cloud["data.wal-dir"] == "/data/db/wal" and cloud["http.bind-address"] == ":8086"
    for key, value in DEFINITION.settings().items():
        assert local[f"data.{key}"] == cloud[f"data.{key}"] == (int(value) if value.isdigit() else value)


def test_influxdb_container_variables_hold_the_local_settings(tmp_path: Path) -> None:
    local = tomllib.loads(InfluxDBServer(tmp_path, {"http": 1, "rpc": 2}).config_text())
    variables = {
        v1_variable("" if "." not in key else key.split(".")[0], key.split(".")[-1]): value
        for key, value in _flat(local).items()
        if key not in PLACES
    }
    environment = CONTAINERS["1.8"].environment
    given = {name for name in environment if name.startswith("INFLUXDB_")}
    places = {v1_variable(*key.split(".")) if "." in key else v1_variable("", key) for key in PLACES}
    image_setup = {"INFLUXDB_ADMIN_USER", "INFLUXDB_DB"}  # the image's first start: admin and database
    assert given - places - image_setup == variables.keys()
    assert environment["INFLUXDB_HTTP_AUTH_ENABLED"] == "true"
    for name, value in variables.items():
        expected = ("true" if value else "false") if isinstance(value, bool) else str(value)
        assert environment[name] == expected, name


def _config_writes(name: str, path: str) -> list[str]:
    """The lines of ``name``'s cloud script writing under ``path`` (a shell word); ValueError if the
    script prints the tuning table itself."""
    script = (TARGETS / name / "cloud_install.sh").read_text()
    if "tsbench_settings" in script.split("set -euo pipefail", 1)[1]:
        raise ValueError(f"{name}: the cloud script restates the tuning table")
    return re.findall(rf'^.*>>?\s*"\{path}[^"]*".*$', script, re.MULTILINE)


def test_the_cloud_scripts_write_the_configuration_only_through_the_rendered_files() -> None:
    assert _config_writes("influxdb", "$CONFIG") == ['influxdb_conf >"$CONFIG.tmp"']
    assert _config_writes("questdb", "$ROOT/conf/") == [
        '} >"$ROOT/conf/server.conf.tmp"',  # questdb_server_conf, then the host's own password
        'questdb_log_conf >"$ROOT/conf/log.conf.tmp"',
    ]
    questdb = (TARGETS / "questdb" / "cloud_install.sh").read_text()
    block = questdb.split('} >"$ROOT/conf/server.conf.tmp"')[0].rsplit("\n{\n", 1)[1]
    assert block.rstrip("\n").split("\n") == [  # the rendered file, then this host's own password
        "    questdb_server_conf",
        '    printf \'pg.password=%s\\nhttp.password=%s\\n\' "$escaped_password" "$escaped_password"',
    ]
    assert _config_writes("griddb", "$GS_HOME/conf/") == [
        'griddb_node_json >"$GS_HOME/conf/gs_node.json.tmp"',
        'griddb_cluster_json >"$GS_HOME/conf/gs_cluster.json.tmp"',
        'printf \'admin,%s\\nsystem,%s\\n\' "$digest" "$digest" >"$GS_HOME/conf/password.tmp"',
    ]
    postgres = _config_writes("postgres", "$DATA_DIR/")
    assert [line for line in postgres if "postgresql.conf" not in line] == [  # and the include line
        'postgres_conf >"$DATA_DIR/tsbench.conf"',
        'postgres_hba_conf >"$DATA_DIR/pg_hba.conf"',
    ]
    assert len(postgres) == 3
    _config_writes("clickhouse", "$CONFIG")  # it writes through its own write(): every call of it
    clickhouse = (TARGETS / "clickhouse" / "cloud_install.sh").read_text()
    assert re.findall(r"^.*\bwrite \"\$.*$", clickhouse, re.MULTILINE) == [
        'clickhouse_config | write "$CONFIG" 0640',
        'clickhouse_users | write "$USERS" 0640',
        'write "$UNIT" 0644 <<EOF',
    ]
    assert _config_writes("mongodb", "$conf_tmp") == ['mongodb_conf >"$conf_tmp"']  # then installed as it is
    _config_writes("timescaledb", "$DATA_DIR/")  # its hooks only (timescaledb_tsl's is a link to it)


def _properties(text: str) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))
    return {key: value for key, value in pairs}


QUESTDB_PLACES = {"cairo.root", *QUESTDB_LISTENERS.values()}
QUESTDB_LOG = f"{QUESTDB_ROOT}/conf/log.conf"


def test_questdb_local_container_and_cloud_forms_hold_the_same_settings(tmp_path: Path) -> None:
    recipe = QuestDBServer(tmp_path, {"http": 19000, "min": 19003, "pg": 18812, "ilp": 19009})
    recipe.initialise()
    local = _properties(recipe.config_path.read_text())
    cloud = _properties(_cloud_file("questdb_server_conf", "/data/db", QUESTDB))
    spec = QUESTDB_CONTAINERS[QUESTDB.version]
    container = {k: v for k, v in spec.environment.items() if k.startswith("QDB_")}
    assert local.keys() - QUESTDB_PLACES == cloud.keys() - QUESTDB_PLACES
    assert {key for key in local.keys() & cloud.keys() if local[key] != cloud[key]} <= QUESTDB_PLACES
    assert (cloud["cairo.root"], cloud["pg.net.bind.to"], local["pg.net.bind.to"]) == (
        "/data/db",
        "0.0.0.0:8812",
        "127.0.0.1:18812",
    )
    settings = {qdb_variable(key): value for key, value in local.items() if key not in QUESTDB_PLACES}
    assert container == settings  # the image's own listeners and directories
    assert {key: local[key] for key in QUESTDB.settings()} == QUESTDB.settings()
    logs = (recipe.log_config_path.read_text(), _cloud_file("questdb_log_conf", "", QUESTDB))
    assert [_properties(text) for text in logs] == [_properties(spec.files[QUESTDB_LOG])] * 2


# Directories and ports: where the node runs decides them (local: loopback and allocated ports).
GRIDDB_PLACES = re.compile(r"(Path|servicePort|serviceAddress|\.address|\.port)$")


def _griddb_settings(body: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in _flat(body).items() if not GRIDDB_PLACES.search(key)}


def test_griddb_local_container_and_cloud_forms_hold_the_same_settings(tmp_path: Path) -> None:
    ports = {"transaction": 1, "system": 2, "cluster": 3, "sync": 4, "sql": 5}
    recipe = GridDBServer(tmp_path, ports)
    recipe.initialise()
    local = {
        name: json.loads((recipe.conf_dir / f"{name}.json").read_text()) for name in ("gs_node", "gs_cluster")
    }
    shell = {"GS_HOME": "/var/lib/gridstore", "address": "10.0.0.5", "public_transaction": ""}
    cloud = {
        name: json.loads(_cloud_file(f"griddb_{name[3:]}_json", "/data/db", GRIDDB, **shell))
        for name in ("gs_node", "gs_cluster")
    }
    container = json.loads(GRIDDB_CONTAINERS[GRIDDB.version].files["/var/lib/gridstore/conf/gs_node.json"])
    for name in ("gs_node", "gs_cluster"):
        assert _griddb_settings(local[name]) == _griddb_settings(cloud[name]), name
    assert _griddb_settings(container) == _griddb_settings(local["gs_node"])
    places = {key for key in _flat(local["gs_node"]) if GRIDDB_PLACES.search(key)}
    assert places - {key for key in places if key.endswith("serviceAddress")} == {
        key for key in _flat(cloud["gs_node"]) if GRIDDB_PLACES.search(key)
    }
    assert cloud["gs_node"]["dataStore"]["dbPath"] == "/data/db/data"
    assert cloud["gs_cluster"]["cluster"]["notificationMember"][0]["sql"] == {
        "address": "10.0.0.5",
        "port": 20001,
    }


def test_griddb_cloud_node_takes_the_public_address_in_its_transaction_section() -> None:
    tail = ', "publicServiceAddress": "203.0.113.7"'
    shell = {"GS_HOME": "/g", "address": "10.0.0.5", "public_transaction": tail}
    node = json.loads(_cloud_file("griddb_node_json", "/d", GRIDDB, **shell))
    assert node["transaction"] == {
        "servicePort": 10001,
        "connectionLimit": 5000,
        "publicServiceAddress": "203.0.113.7",
    }


PG_PLACES = {"listen_addresses", "port", "unix_socket_directories"}
PG_RECIPES = {
    "postgres": PostgresRecipe,
    "timescaledb": TimescaleRecipe,
    "timescaledb_tsl": TimescaleTslRecipe,
}


def _pg_conf(text: str) -> dict[str, str]:
    pairs = (line.split(" = ", 1) for line in text.splitlines() if line and not line.startswith("#"))
    return {key: value.strip("'") for key, value in pairs}


def _hba(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line and not line.startswith("#")]


@pytest.mark.parametrize("name", sorted(PG_RECIPES))
def test_postgres_family_local_container_and_cloud_forms_hold_the_same_settings(
    name: str, tmp_path: Path
) -> None:
    definition = load_definition(name)
    assert definition is not None
    recipe = PG_RECIPES[name](tmp_path, {"pg": 15432})
    local = _pg_conf(recipe.config_text())
    cloud = _pg_conf(_cloud_file("postgres_conf", "/data/db", definition))
    command = pick_container(name)[1].command
    assert command[0] == "postgres" and set(command[1::2]) == {"-c"}
    container = dict(word.split("=", 1) for word in command[2::2])
    assert {key: local[key] for key in local.keys() - PG_PLACES} == {
        key: cloud[key] for key in cloud.keys() - PG_PLACES
    }
    assert container == {key: value for key, value in local.items() if key not in PG_PLACES}
    assert {key: local[key] for key in definition.tuning} == definition.settings()
    assert (local["listen_addresses"], local["port"], cloud["listen_addresses"], cloud["port"]) == (
        "127.0.0.1",
        "15432",
        "*",
        "5432",
    )
    assert "unix_socket_directories" not in cloud  # Debian's /run/postgresql, which the script uses
    local_hba = _hba(hba_text(recipe.form))
    cloud_hba = _hba(_cloud_file("postgres_hba_conf", "/data/db", definition))
    assert [record[:3] for record in local_hba] == [record[:3] for record in cloud_hba]
    assert [record[-1] for record in cloud_hba] == ["peer", "scram-sha-256", "scram-sha-256"]
    assert [record[-1] for record in local_hba] == [record[-1] for record in cloud_hba]  # no trust anywhere


CH_PLACES = {"listen_host", "http_port", "tcp_port", "path", "tmp_path", "user_files_path"}
CH_PLACES |= {
    "format_schema_path",
    "user_directories.users_xml.path",
    "user_directories.local_directory.path",
}
CH_COMPLETE = {"logger.console", "default_profile", "default_database"}  # a complete file's (stock defaults)


def _xml(text: str) -> tuple[dict[str, str], set[str]]:
    """Leaf elements by dotted path (one per path), and the paths an override removes."""
    values: dict[str, str] = {}
    removed: set[str] = set()

    def walk(node: ET.Element, prefix: str) -> None:
        for child in node:
            path = prefix + child.tag
            if child.get("remove") == "1":
                removed.add(path)
            elif len(child):
                walk(child, path + ".")
            else:
                values[path] = child.text or ""

    walk(ET.fromstring(text), "")
    return values, removed


def test_clickhouse_local_container_and_cloud_forms_hold_the_same_settings(tmp_path: Path) -> None:
    recipe = ClickHouseServer(tmp_path, {"http": 18123, "native": 19000})
    recipe.initialise()
    local, local_removed = _xml(recipe.config_path.read_text())
    cloud, cloud_removed = _xml(_cloud_file("clickhouse_config", "/data/db", CLICKHOUSE))
    spec = CLICKHOUSE_CONTAINERS["26.8"]
    container, container_removed = _xml(spec.files["/etc/clickhouse-server/config.d/tsbench.xml"])
    settings = {key: value for key, value in local.items() if key not in CH_PLACES | CH_COMPLETE}
    assert settings == {key: value for key, value in cloud.items() if key not in CH_PLACES} == container
    assert {key: settings[key] for key in CLICKHOUSE.tuning} == CLICKHOUSE.settings()
    assert not local_removed and cloud_removed == container_removed == {*SYSTEM_LOGS, *LISTENERS_OFF}
    assert (cloud["listen_host"], cloud["http_port"], cloud["tcp_port"], cloud["path"]) == (
        "0.0.0.0",
        str(spec.ports["http"]),
        str(spec.ports["native"]),
        "/data/db/",
    )
    local_user = _xml(recipe.users_path.read_text())[0]
    cloud_user, cloud_user_removed = _xml(_cloud_file("clickhouse_users", "/d", CLICKHOUSE, hash="ab12"))
    assert cloud_user == {
        "users.default.password_sha256_hex": "ab12",
        "users.default.networks.ip": "::/0",
        "users.default.access_management": "1",
    }
    assert cloud_user_removed == {"users.default.password"}  # the stock user's empty password
    assert {key: local_user[key] for key in cloud_user.keys() - {"users.default.password_sha256_hex"}} == {
        "users.default.networks.ip": "::1",  # the last of loopback's two
        "users.default.access_management": "1",
    }


MONGO_PLACES = {"storage.dbPath", "net.bindIp", "net.bindIpAll", "net.port", "net.unixDomainSocket.enabled"}
MONGO_PLACES |= {"security.authorization"}


@pytest.mark.parametrize("name", ["mongodb", "mongodb_naive"])
def test_mongodb_local_container_and_cloud_forms_hold_the_same_settings(name: str, tmp_path: Path) -> None:
    definition = load_definition(name)
    assert definition is not None
    recipe = MongoServer(tmp_path, {"mongo": 27018})
    recipe.initialise()
    local = _flat(yaml.safe_load(recipe.config_path.read_text()))
    shell = {"DB_DIR": "/data/db/mongodb", "authorization": "enabled"}
    cloud = _flat(yaml.safe_load(_cloud_file("mongodb_conf", "/data/db", definition, **shell)))
    command = pick_container(name)[1].command
    assert set(command[::2]) == {"--setParameter"}
    container = {f"setParameter.{word.split('=')[0]}": word.split("=", 1)[1] for word in command[1::2]}
    settings = {key: value for key, value in local.items() if key not in MONGO_PLACES}
    assert settings == {key: value for key, value in cloud.items() if key not in MONGO_PLACES}
    assert {key: str(value).lower() for key, value in settings.items()} == container
    assert {key: str(settings[key]).lower() for key in definition.tuning} == definition.settings()
    assert {key: cloud[key] for key in MONGO_PLACES & cloud.keys()} == {
        "storage.dbPath": "/data/db/mongodb",
        "net.bindIpAll": True,
        "net.port": 27017,
        "security.authorization": "enabled",
    }
    assert (local["net.bindIp"], local["net.port"], local["net.unixDomainSocket.enabled"]) == (
        "127.0.0.1",
        27018,
        False,
    )
