"""The docker runtime without an engine: the arguments it would send, the readings it would compute,
and the clear errors it gives where no engine runs (as on the machines these tests were written on).
The runtime against a real engine: tests/integration/test_docker_engine.py."""

from __future__ import annotations

import io
import json
import os
import stat
import tarfile
from pathlib import Path
from typing import Any

import pytest
from docker.types import Ulimit

from tsbench.results.files import write_private_json
from tsbench.runtimes.container_spec import ContainerSpec, HealthCheck, pick_container, secret_values
from tsbench.runtimes.docker import DockerRuntime, engine_address, redact
from tsbench.runtimes.docker_arguments import (
    LABEL_INSTANCE,
    config_text,
    container_name,
    files_archive,
    health_deadline_s,
    healthcheck_arguments,
    labels,
    resource_name,
    run_arguments,
    spec_from_json,
    spec_to_json,
    volume_names,
)
from tsbench.runtimes.docker_stats import cpu_percent, read_time_ns, resident_bytes
from tsbench.targets.base import TargetError
from tsbench.targets.registry import load_target

NOWHERE = "unix:///nonexistent/tsbench/docker.sock"

SPEC = ContainerSpec(
    image="example/db:1.2.3",
    ports={"http": 8080, "pg": 5432},
    data_paths=("/var/lib/db/data", "/var/lib/db/wal"),
    healthcheck=HealthCheck(("curl", "-sf", "http://127.0.0.1:8080/ping"), 1.5, 3.0, 10, 4.0),
    environment={"DB_MODE": "bench"},
    secret_env={"DB_PASSWORD": "TSBENCH_EXAMPLE_PASSWORD"},
    command=("db", "--fast"),
    files={"/etc/db/db.conf": "a = 1\n", "/etc/db/log.conf": "level = warn\n"},
    ulimits={"nofile": (65536, 65536)},
    shm_size="1g",
    client_user="bench",
    client_secrets={"password": "TSBENCH_EXAMPLE_PASSWORD"},
)


# -- names, labels, healthcheck ------------------------------------------------------------------
def test_names_keep_only_what_docker_accepts() -> None:
    assert resource_name("2026-11-22T10:00:00Z/run 1-questdb") == "tsbench-2026-11-22T10-00-00Z-run-1-questdb"
    assert container_name("r1-cmp-questdb") == "tsbench-r1-cmp-questdb"
    assert volume_names(SPEC, "r1") == {
        "/var/lib/db/data": "tsbench-r1-var-lib-db-data",
        "/var/lib/db/wal": "tsbench-r1-var-lib-db-wal",
    }


def test_labels_name_the_instance_target_flavour_and_run() -> None:
    assert labels("i1", "influxdb", "2.7", run="r9") == {
        LABEL_INSTANCE: "i1",
        "tsbench.target": "influxdb",
        "tsbench.flavour": "2.7",
        "tsbench.run": "r9",
    }
    assert "tsbench.run" not in labels("i1", "influxdb", "2.7")


def test_healthcheck_in_nanoseconds_and_exec_form() -> None:
    assert healthcheck_arguments(SPEC.healthcheck) == {
        "test": ["CMD", "curl", "-sf", "http://127.0.0.1:8080/ping"],
        "interval": 1_500_000_000,
        "timeout": 3_000_000_000,
        "retries": 10,
        "start_period": 4_000_000_000,
    }
    shell = HealthCheck(("CMD-SHELL", "pg_isready || exit 1"))
    assert healthcheck_arguments(shell)["test"] == ["CMD-SHELL", "pg_isready || exit 1"]
    assert health_deadline_s(SPEC.healthcheck) == 4.0 + 10 * 4.5


# -- secrets -------------------------------------------------------------------------------------
def test_secrets_come_from_the_source_else_are_generated() -> None:
    values, generated = secret_values(SPEC, {}.get)
    assert generated == {"TSBENCH_EXAMPLE_PASSWORD"} and len(values["TSBENCH_EXAMPLE_PASSWORD"]) >= 32
    again, _ = secret_values(SPEC, {}.get)
    assert again != values  # per instance
    given, generated = secret_values(SPEC, {"TSBENCH_EXAMPLE_PASSWORD": "from-airflow"}.get)
    assert given == {"TSBENCH_EXAMPLE_PASSWORD": "from-airflow"} and not generated


def test_private_files_are_0600_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "secrets.json"
    write_private_json(path, {"A": "b"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and json.loads(path.read_text()) == {"A": "b"}


def test_redact_hides_secret_values_in_logs() -> None:
    assert redact("login with s3cr3t-value failed", {"X": "s3cr3t-value"}) == "login with *** failed"


# -- run arguments -------------------------------------------------------------------------------
def test_run_arguments_of_a_spec() -> None:
    arguments = run_arguments(
        SPEC,
        "r1-cmp-db",
        {"TSBENCH_EXAMPLE_PASSWORD": "pw-123"},
        {"http": 18080, "pg": None},
        "127.0.0.1",
        labels("r1-cmp-db", "db", "1"),
    )
    assert arguments == {
        "image": "example/db:1.2.3",
        "name": "tsbench-r1-cmp-db",
        "environment": {"DB_MODE": "bench", "DB_PASSWORD": "pw-123"},
        "ports": {"8080/tcp": ("127.0.0.1", 18080), "5432/tcp": ("127.0.0.1", None)},
        "volumes": {
            "tsbench-r1-cmp-db-var-lib-db-data": {"bind": "/var/lib/db/data", "mode": "rw"},
            "tsbench-r1-cmp-db-var-lib-db-wal": {"bind": "/var/lib/db/wal", "mode": "rw"},
        },
        "healthcheck": healthcheck_arguments(SPEC.healthcheck),
        "labels": {LABEL_INSTANCE: "r1-cmp-db", "tsbench.target": "db", "tsbench.flavour": "1"},
        "restart_policy": {"Name": "no"},
        "command": ["db", "--fast"],
        "ulimits": [Ulimit(name="nofile", soft=65536, hard=65536)],
        "shm_size": "1g",
    }


def test_run_arguments_need_every_secret() -> None:
    with pytest.raises(KeyError, match="TSBENCH_EXAMPLE_PASSWORD"):
        run_arguments(SPEC, "i", {}, {}, "127.0.0.1", {})


def test_files_archive_extracts_at_the_root() -> None:
    with tarfile.open(fileobj=io.BytesIO(files_archive(SPEC.files))) as archive:
        members = {m.name: m for m in archive.getmembers()}
        assert set(members) == {"etc/db/db.conf", "etc/db/log.conf"}
        assert members["etc/db/db.conf"].mode == 0o644
        assert archive.extractfile("etc/db/log.conf").read() == b"level = warn\n"


def test_config_text_names_secrets_but_never_holds_them() -> None:
    text = config_text(SPEC, "1")
    assert "env DB_PASSWORD=<secret from TSBENCH_EXAMPLE_PASSWORD>" in text
    assert "env DB_MODE=bench" in text and "--- file /etc/db/db.conf\na = 1" in text
    assert "ulimit nofile=65536:65536" in text


def test_spec_survives_the_instance_state() -> None:
    assert spec_from_json(json.loads(json.dumps(spec_to_json(SPEC)))) == SPEC


# -- readings ------------------------------------------------------------------------------------
def test_reading_times_keep_nanoseconds() -> None:
    assert read_time_ns("2026-11-22T13:41:47.708665094Z") == 1_795_354_907_708_665_094
    assert read_time_ns("2026-11-22T14:41:47.5+01:00") == 1_795_354_907_500_000_000
    assert read_time_ns("0001-01-01T00:00:00Z") is None and read_time_ns(None) is None


def test_cpu_percent_between_readings() -> None:
    assert cpu_percent((0, 0), (2_000_000_000, 3_000_000_000)) == 150.0  # 1.5 cores for 2 s
    assert cpu_percent((5, 7), (5, 9)) == 0.0


@pytest.mark.parametrize(
    ("memory_stats", "expected"),
    [
        ({"usage": 900, "stats": {"anon": 500, "file_mapped": 100, "inactive_file": 200}}, 600),  # v2
        ({"usage": 900, "stats": {"total_rss": 400, "total_mapped_file": 50, "rss": 1}}, 450),  # v1
        ({"usage": 900, "stats": {"inactive_file": 300}}, 600),  # what docker stats shows
        ({}, 0),
    ],
)
def test_resident_memory_of_a_container(memory_stats: dict, expected: int) -> None:
    assert resident_bytes(memory_stats) == expected


# -- no engine here ------------------------------------------------------------------------------
def test_no_engine_is_a_clear_early_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path))  # no CLI context pointing elsewhere
    if Path("/var/run/docker.sock").exists():
        pytest.skip("a Docker engine socket exists on this machine")
    runtime = DockerRuntime(root=tmp_path)
    with pytest.raises(TargetError, match=r"no Docker engine at unix:///var/run/docker\.sock: .*DOCKER_HOST"):
        runtime.provision(load_target("questdb"), "r1-noengine-questdb")
    assert not (tmp_path / "r1-noengine-questdb").exists()  # nothing was written before the check


def test_the_engine_named_by_base_url_or_docker_host_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(TargetError, match=f"no Docker engine at {NOWHERE}"):
        DockerRuntime(base_url=NOWHERE).client()
    monkeypatch.setenv("DOCKER_HOST", NOWHERE)
    assert engine_address() == NOWHERE
    with pytest.raises(TargetError, match=f"no Docker engine at {NOWHERE}"):
        DockerRuntime().client()


def test_unknown_flavour_fails_before_the_engine_is_asked(tmp_path: Path) -> None:
    runtime = DockerRuntime(base_url=NOWHERE, root=tmp_path, flavours={"influxdb": "0.9"})
    with pytest.raises(TargetError, match=r"unknown container flavour '0\.9'; known: 1\.8, 2\.7"):
        runtime.provision(load_target("influxdb"), "i")
    assert pick_container("influxdb") == ("1.8", pick_container("influxdb", "1.8")[1])


def test_teardown_without_engine_or_instance_is_fine(tmp_path: Path) -> None:
    DockerRuntime(base_url=NOWHERE, root=tmp_path).teardown("never-provisioned")


def test_teardown_of_a_known_instance_without_engine_says_so(tmp_path: Path) -> None:
    (tmp_path / "i1").mkdir()
    (tmp_path / "i1" / "container.json").write_text(json.dumps({"container": "tsbench-i1"}))
    with pytest.raises(TargetError, match="no Docker engine"):
        DockerRuntime(base_url=NOWHERE, root=tmp_path).teardown("i1")
    assert (tmp_path / "i1" / "container.json").is_file()  # kept: the containers still need removing


def test_attach_to_an_unknown_instance(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="no docker server instance 'nope'"):
        DockerRuntime(base_url=NOWHERE, root=tmp_path).attach("nope")


# -- Airflow glue --------------------------------------------------------------------------------
@pytest.fixture()
def airflow_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """A private AIRFLOW_HOME unless the session has one (``tests/dags/conftest.py`` sets it at
    collection): Airflow keeps the settings of its first import, so a home of this test's own would
    leave later tests in this process with an unmigrated database."""
    if "AIRFLOW_HOME" not in os.environ:
        monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow"))
    monkeypatch.delenv("AIRFLOW_CONN_TSBENCH_DOCKER", raising=False)
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path))
    return monkeypatch


def test_glue_without_a_connection_uses_the_environment(airflow_env: pytest.MonkeyPatch) -> None:
    from tsbench.airflow.docker_client import docker_client, docker_connection

    assert docker_connection() is None
    airflow_env.setenv("DOCKER_HOST", NOWHERE)
    with pytest.raises(TargetError, match=f"no Docker engine at {NOWHERE}: .*No such file"):
        docker_client()  # docker.from_env(): DOCKER_HOST names an engine that does not exist
    with pytest.raises(TargetError, match=f"no Docker engine at {NOWHERE}"):
        DockerRuntime(client_factory=docker_client).client()


def test_glue_with_a_connection_goes_through_the_docker_hook(airflow_env: pytest.MonkeyPatch) -> None:
    from tsbench.airflow.docker_client import docker_client_factory

    engine = "unix:///nonexistent/from-connection.sock"
    connection = {"conn_type": "docker", "extra": {"base_url": engine, "timeout": 5}}
    airflow_env.setenv("AIRFLOW_CONN_TSBENCH_DOCKER", json.dumps(connection))
    with pytest.raises(
        TargetError, match=f"no Docker engine at {engine} \\(Airflow connection tsbench_docker\\)"
    ):
        docker_client_factory()()


def test_built_from_the_run_specs_docker_options(tmp_path: Path) -> None:
    from tsbench.runtimes.options import DockerOptions
    from tsbench.runtimes.select import runtime_for
    from tsbench.spec import RunSpec

    options = DockerOptions(flavours={"influxdb": "2.7"}, base_url=NOWHERE)
    runtime = DockerRuntime.from_options(
        options, environment={"TSBENCH_INFLUXDB_TOKEN": "t0k"}, root=tmp_path
    )
    assert runtime.flavours == {"influxdb": "2.7"} and runtime.address == NOWHERE
    assert runtime.secret_source("TSBENCH_INFLUXDB_TOKEN") == "t0k"
    spec = RunSpec.parse(targets=["influxdb"], runtime="docker", docker={"flavours": {"influxdb": "2.7"}})
    assert isinstance(runtime_for(spec), DockerRuntime) and runtime_for(spec).flavours == {"influxdb": "2.7"}


def test_runtime_options_give_the_docker_runtime_its_client_factory() -> None:
    from tsbench.runtimes.select import RuntimeOptions, runtime_for
    from tsbench.spec import RunSpec

    asked: list[str | None] = []

    def client() -> None:
        raise AssertionError("not called: building the runtime makes no client")

    def factory(base_url: str | None) -> Any:
        asked.append(base_url)
        return client

    spec = RunSpec.parse(targets=["influxdb"], runtime="docker", docker={"base_url": NOWHERE})
    runtime = runtime_for(spec, options=RuntimeOptions(docker_client_factory=factory))
    assert isinstance(runtime, DockerRuntime) and runtime.client_factory is client and asked == [NOWHERE]
