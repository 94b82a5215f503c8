"""The InfluxDB target against a real InfluxDB 2.7 through its 1.x compatibility API (the ``2.7``
container flavour's client settings: token, organisation, bucket as database).

Needs an ``influxd`` 2.7 binary at ``TSBENCH_INFLUXD2`` (the official image cannot be pulled where these
tests were written; ``scripts/install_influxdb2.sh`` builds it from its Go module into
``$TSBENCH_OPT/influxdb2/influxd``); skipped otherwise. The server runs as a local process with the
container's ``INFLUXD_*`` settings and is set up as the image's setup mode does it (``/api/v2/setup``:
organisation, bucket, admin token).
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from builds import wait_for_build
from conftest import check_all_queries, load_all
from iot_checks import answered_types, check_iot_queries

from tsbench.runtimes.ports import free_port
from tsbench.targets.base import Endpoint, TargetError
from tsbench.targets.influxdb.container import (
    ADMIN,
    CONTAINERS,
    ORG,
    PASSWORD_VARIABLE,
    TOKEN_VARIABLE,
    V2_TUNING,
)
from tsbench.targets.influxdb.target import InfluxDBTarget
from tsbench.workload.dataset import Dataset
from tsbench.workload.query_types import QUERY_TYPES

pytestmark = pytest.mark.integration
INFLUXD2 = os.environ.get("TSBENCH_INFLUXD2", "")
SPEC = CONTAINERS["2.7"]


@pytest.fixture(scope="module")
def influxd2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    # scripts/test.sh builds influxd in the background (≈ 8 min on a fresh machine).
    wait_for_build("TSBENCH_INFLUXD2_BUILD_STATUS", "influxd 2.7 (install_v2.sh)")
    if not (INFLUXD2 and os.access(INFLUXD2, os.X_OK)):
        pytest.skip("TSBENCH_INFLUXD2 does not name an influxd 2.7 binary")
    home = tmp_path_factory.mktemp("influxd2")
    port = free_port()
    env = {k: v for k, v in SPEC.environment.items() if not k.startswith("DOCKER_INFLUXDB_INIT_")}
    command = [
        INFLUXD2,
        f"--bolt-path={home / 'influxd.bolt'}",
        f"--engine-path={home / 'engine'}",
        f"--http-bind-address=127.0.0.1:{port}",
        "--log-level=error",
    ]
    with open(home / "influxd.log", "wb") as log:
        server = subprocess.Popen(
            command, env={**env, "HOME": str(home)}, stdout=log, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert server.poll() is None and time.monotonic() < deadline, (home / "influxd.log").read_text()
            time.sleep(0.2)
        values = {TOKEN_VARIABLE: secrets.token_urlsafe(24), PASSWORD_VARIABLE: secrets.token_urlsafe(24)}
        setup = {
            "username": ADMIN,
            "password": values[PASSWORD_VARIABLE],
            "org": ORG,
            "bucket": SPEC.environment["DOCKER_INFLUXDB_INIT_BUCKET"],
            "token": values[TOKEN_VARIABLE],
        }
        assert requests.post(f"{url}/api/v2/setup", json=setup, timeout=30).status_code == 201
        yield SPEC.endpoint("127.0.0.1", {"http": port}, values)
    finally:
        server.terminate()
        server.wait(30)


@pytest.fixture(scope="module")
def influx(influxd2: Endpoint, small_dataset: Dataset) -> Iterator[InfluxDBTarget]:
    target = InfluxDBTarget(influxd2, small_dataset.use_case, small_dataset.tags())
    try:
        yield target
    finally:
        target.close()


def test_load_through_the_compatibility_api_is_exact_and_retry_safe(
    influx: InfluxDBTarget, small_dataset: Dataset
) -> None:
    assert influx.v2 and influx.endpoint.secrets["token"]
    influx.create_schema()
    writer = influx.writer()  # a half-done attempt that the recreated bucket must forget
    first = next(small_dataset.iter_batches("cpu", 7_000))
    assert writer.write("cpu", first) == first.num_rows
    writer.close()
    assert load_all(influx, small_dataset) == small_dataset.rows["cpu"]  # create_schema recreates the bucket
    assert influx.row_count("cpu") == small_dataset.rows["cpu"] == 103_680


def test_every_query_type_matches_the_oracle(influx: InfluxDBTarget, small_dataset: Dataset) -> None:
    families = small_dataset.use_case.query_families  # devops, YCSB-TS
    types = {name for name, qtype in QUERY_TYPES.items() if qtype.family in families}
    nonempty = check_all_queries(influx, small_dataset, per_type=2)
    assert set(nonempty) == types
    assert sum(count > 0 for count in nonempty.values()) >= len(types) - 1, nonempty


def test_iot_queries_answer_as_the_oracle(influxd2: Endpoint, iot_dataset: Dataset) -> None:
    """The iot types through the compatibility API's InfluxQL (the same texts as 1.x), in a
    bucket of their own (reached as a database of its name through its virtual DBRP mapping)."""
    endpoint = dataclasses.replace(influxd2, database="iot", extra={**influxd2.extra, "bucket": "iot"})
    target = InfluxDBTarget(endpoint, iot_dataset.use_case, iot_dataset.tags())
    try:
        assert load_all(target, iot_dataset) > 0
        nonempty = check_iot_queries(target, iot_dataset)
        assert set(nonempty) == answered_types(target), nonempty  # 12 types less 3 unsupported, their probes
    finally:
        target.close()


def test_facts_from_the_2x_api(influx: InfluxDBTarget) -> None:
    footprint = influx.footprint()
    assert footprint.bytes == sum(footprint.parts.values()) > 1_000_000 and "bucket" in footprint.note
    assert influx.version().lstrip("v").startswith("2.7")
    settings = influx.settings()
    assert settings["storage-wal-fsync-delay"] == "0s" and settings["GOGC"] == 1000


def test_the_token_is_required(influxd2: Endpoint, small_dataset: Dataset) -> None:
    anonymous = Endpoint(influxd2.host, influxd2.ports, database=influxd2.database, extra=influxd2.extra)
    target = InfluxDBTarget(anonymous, small_dataset.use_case, small_dataset.tags())
    try:
        with pytest.raises(TargetError, match="401"):
            target.row_count("cpu")
    finally:
        target.close()


def test_the_container_spec_names_the_bucket_as_database() -> None:
    assert SPEC.client_database == SPEC.environment["DOCKER_INFLUXDB_INIT_BUCKET"]
    assert Path(SPEC.data_paths[0]) == Path("/var/lib/influxdb2")


def test_the_containers_influxd_variables_are_in_effect(influxd2: Endpoint) -> None:
    """The server (started with the 2.7 spec's ``INFLUXD_*`` variables) reports them as its config."""
    url = f"http://{influxd2.host}:{influxd2.port('http')}/api/v2/config"
    answer = requests.get(url, headers={"Authorization": f"Token {influxd2.secrets['token']}"}, timeout=10)
    config = answer.json()["config"]
    assert {key: config[key] for key in V2_TUNING} == {
        "storage-cache-max-memory-size": 4 * 1024**3,
        "storage-cache-snapshot-memory-size": 25 * 1024**2,
        "storage-wal-fsync-delay": "0s",
        "storage-max-concurrent-compactions": 0,
        "storage-write-timeout": 60 * 10**9,  # ns
        "reporting-disabled": True,
    }
