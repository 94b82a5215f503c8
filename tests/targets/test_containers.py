"""Every target's container specs (``targets/<name>/container.py``): pinned official images, the local
recipe's port roles and tuning, secrets only by name, and what the docker runtime would ask of an engine."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tsbench.runtimes.container_spec import ContainerSpec, target_containers
from tsbench.runtimes.docker_arguments import healthcheck_arguments, labels, run_arguments, volume_names
from tsbench.targets.registry import load_target, target_names

TARGETS = Path(__file__).resolve().parents[2] / "plugins" / "tsbench" / "targets"
WITH_CONTAINERS = [name for name in target_names() if target_containers(name)]
SPECS = [(name, flavour) for name in WITH_CONTAINERS for flavour in target_containers(name)]
EXACT_VERSION = re.compile(r"\d+\.\d+")  # at least major.minor in the tag (e.g. 15.18, 2.19.3-pg15)


def spec_of(name: str, flavour: str) -> ContainerSpec:
    return target_containers(name)[flavour]


def test_every_target_has_a_container_py() -> None:
    missing = [name for name in target_names() if not (TARGETS / name / "container.py").is_file()]
    assert not missing, f"targets without container.py (runtime=docker cannot run them): {missing}"


@pytest.mark.parametrize(("name", "flavour"), SPECS)
def test_spec_is_fit_to_run(name: str, flavour: str) -> None:
    spec = spec_of(name, flavour)
    assert spec.problems() == []
    assert EXACT_VERSION.search(spec.tag), f"{spec.image}: pin an exact version, not a moving tag"
    assert spec.note, "say which edition/version the image is and what differs from the local runtime"


@pytest.mark.parametrize("name", WITH_CONTAINERS)
def test_ports_are_the_local_recipes_roles(name: str) -> None:
    roles = set(load_target(name).server_recipe().port_roles)
    specs = list(target_containers(name).items())
    default_flavour, default = specs[0]
    assert set(default.ports) == roles, f"default flavour {default_flavour}: {sorted(default.ports)}"
    for flavour, spec in specs[1:]:  # another server generation may lack a listener (InfluxDB 2: no RPC)
        assert spec.ports and set(spec.ports) <= roles, f"flavour {flavour}: {sorted(spec.ports)}"


@pytest.mark.parametrize(("name", "flavour"), SPECS)
def test_secrets_are_named_never_written(name: str, flavour: str) -> None:
    spec = spec_of(name, flavour)
    for variable in spec.secret_names():
        assert re.fullmatch(r"TSBENCH_[A-Z0-9_]+", variable), variable
    assert not set(spec.secret_env) & set(spec.environment)
    assert set(spec.client_secrets.values()) <= set(spec.secret_env.values()), (
        "a client secret must be the one the server was given"
    )


@pytest.mark.parametrize(("name", "flavour"), SPECS)
def test_run_arguments_of_each_spec(name: str, flavour: str) -> None:
    spec = spec_of(name, flavour)
    instance = f"run1-cmp-{name}"
    values = {variable: f"secret-of-{variable}" for variable in spec.secret_names()}
    host_ports = {role: 20000 + i for i, role in enumerate(spec.ports)}
    arguments = run_arguments(
        spec, instance, values, host_ports, "127.0.0.1", labels(instance, name, flavour)
    )

    assert arguments["image"] == spec.image and arguments["name"] == f"tsbench-{instance}"
    assert arguments["ports"] == {
        f"{spec.ports[role]}/tcp": ("127.0.0.1", port) for role, port in host_ports.items()
    }
    assert {v["bind"] for v in arguments["volumes"].values()} == set(spec.data_paths)
    assert set(arguments["volumes"]) == set(volume_names(spec, instance).values())
    assert arguments["healthcheck"] == healthcheck_arguments(spec.healthcheck)
    assert arguments["healthcheck"]["test"][0] == "CMD" and arguments["healthcheck"]["interval"] >= 10**9
    assert arguments["labels"]["tsbench.instance"] == instance
    assert [(u.name, u.soft, u.hard) for u in arguments.get("ulimits", [])] == [
        (n, s, h) for n, (s, h) in sorted(spec.ulimits.items())
    ]
    environment = arguments["environment"]
    secret_values = set(values.values())
    for variable, value in environment.items():
        if value in secret_values:
            assert variable in spec.secret_env, f"{variable} carries a secret but is not a secret_env entry"
    assert {environment[v] for v in spec.secret_env} == {values[n] for n in spec.secret_env.values()}
    assert arguments.get("command", []) == list(spec.command)


@pytest.mark.parametrize("name", WITH_CONTAINERS)
def test_readme_documents_the_images(name: str) -> None:
    readme = (TARGETS / name / "README.md").read_text()
    for spec in target_containers(name).values():
        assert spec.image in readme, f"targets/{name}/README.md does not name {spec.image}"


# -- what each spec carries over from its local recipe ----------------------------------------------
def test_questdb_container_has_the_local_tuning_and_log_config() -> None:
    from tsbench.targets.questdb.container import CONTAINERS, qdb_variable
    from tsbench.targets.questdb.definition import DEFINITION
    from tsbench.targets.questdb.server import LOG_CONF

    spec = CONTAINERS[DEFINITION.version]
    assert spec.image == f"questdb/questdb:{DEFINITION.version}"
    assert {qdb_variable(k): v for k, v in DEFINITION.settings().items()}.items() <= spec.environment.items()
    assert qdb_variable("cairo.writer.data.append.page.size") == "QDB_CAIRO_WRITER_DATA_APPEND_PAGE_SIZE"
    assert spec.files == {"/var/lib/questdb/conf/log.conf": LOG_CONF}
    assert spec.environment["QDB_TELEMETRY_ENABLED"] == "false"
    assert spec.data_paths == ("/var/lib/questdb/db",)


@pytest.mark.parametrize("name", ["postgres", "timescaledb", "timescaledb_tsl"])
def test_postgres_family_runs_the_local_settings(name: str) -> None:
    recipe = load_target(name).server_recipe()
    spec = next(iter(target_containers(name).values()))
    settings = recipe(Path("/x"), {"pg": 5432}).settings()
    arguments = spec.command[1:]
    assert spec.command[0] == "postgres"
    assert [arguments[i + 1] for i in range(0, len(arguments), 2)] == [
        f"{k}={v}" for k, v in settings.items()
    ]
    assert spec.environment["POSTGRES_DB"] == "tsbench" and spec.client_secrets == {
        "password": "TSBENCH_POSTGRES_PASSWORD"
    }
    assert spec.stop_timeout_s == recipe.stop_timeout_s and spec.shm_size


@pytest.mark.parametrize(
    ("name", "image", "licence"),
    [
        ("timescaledb", "timescale/timescaledb:2.19.3-pg15-oss", None),
        ("timescaledb_tsl", "timescale/timescaledb:2.19.3-pg15", "timescaledb.license=timescale"),
    ],
)
def test_timescaledb_containers_run_the_local_edition(name: str, image: str, licence: str | None) -> None:
    """The Apache-2 target runs the image's -oss tag, the full edition's target its plain tag with
    the licence setting: each the edition its local runtime builds."""
    spec = next(iter(target_containers(name).values()))
    assert spec.image == image
    assert "shared_preload_libraries=timescaledb" in spec.command
    assert [arg for arg in spec.command if arg.startswith("timescaledb.license")] == (
        [licence] if licence else []
    )
    assert spec.environment["NO_TS_TUNE"] == "true"
    assert ("Apache-2 edition" in spec.note) == (licence is None)


def test_influxdb_flavours() -> None:
    from tsbench.targets.influxdb.container import CONTAINERS, PASSWORD_VARIABLE, v1_variable
    from tsbench.targets.influxdb.server import TUNING

    assert list(CONTAINERS) == ["1.8", "2.7"]
    v1, v2 = CONTAINERS["1.8"], CONTAINERS["2.7"]
    assert v1.image == "influxdb:1.8.10" and v2.image.startswith("influxdb:2.7.")
    for key, value in TUNING.items():
        assert v1.environment[v1_variable("data", key)] == str(value)
    assert v1_variable("shard-precreation", "enabled") == "INFLUXDB_SHARD_PRECREATION_ENABLED"
    assert v1.environment["INFLUXDB_HTTP_BIND_ADDRESS"] == ":8086"
    assert v1.environment["INFLUXDB_HTTP_AUTH_ENABLED"] == "true" and v1.environment["INFLUXDB_ADMIN_USER"]
    assert (
        v1.secret_env
        == {"INFLUXDB_ADMIN_PASSWORD": PASSWORD_VARIABLE}
        == {"INFLUXDB_ADMIN_PASSWORD": v1.client_secrets["password"]}
    )
    assert v2.environment["DOCKER_INFLUXDB_INIT_MODE"] == "setup"
    assert v2.environment["DOCKER_INFLUXDB_INIT_BUCKET"] == v2.client_database == "benchmark"
    assert v2.client_secrets == {"token": v2.secret_env["DOCKER_INFLUXDB_INIT_ADMIN_TOKEN"]}
    assert (
        v2.client_extra["api"] == "v2"
        and v2.client_extra["org"] == v2.environment["DOCKER_INFLUXDB_INIT_ORG"]
    )


def _flat(body: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in body.items():
        out.update(_flat(value, f"{prefix}{key}.") if isinstance(value, dict) else {prefix + key: value})
    return out


def test_influxdb_18_variables_give_the_local_configuration(tmp_path: Path) -> None:
    """A real 1.x ``influxd config`` (the local 1.8.10, the container's version): the container's
    variables over an empty file give the local recipe's configuration, but for the listeners (all
    interfaces) and directories."""
    from tsbench.targets.influxdb.container import CONTAINERS
    from tsbench.targets.influxdb.server import InfluxDBServer

    recipe = InfluxDBServer(tmp_path, {"http": 8086, "rpc": 8088})
    recipe.initialise()
    influxd = recipe.command()[0]  # TargetError when install.sh has not built it
    empty = tmp_path / "empty.conf"
    empty.write_text("")

    def effective(config: Path, env: dict[str, str]) -> dict[str, Any]:
        run = subprocess.run(
            [influxd, "config", "-config", str(config)], capture_output=True, text=True, env=env
        )
        assert run.returncode == 0, run.stderr
        return _flat(tomllib.loads(run.stdout))

    local = effective(recipe.config_path, {})
    container = effective(empty, dict(CONTAINERS["1.8"].environment))
    differ = {key for key in local.keys() | container.keys() if local.get(key) != container.get(key)}
    places = {"bind-address", "http.bind-address", "meta.dir", "data.dir", "data.wal-dir"}
    assert differ == places
    assert local["http.auth-enabled"] is container["http.auth-enabled"] is True  # both ask who calls
    assert (container["bind-address"], container["http.bind-address"]) == (":8088", ":8086")
