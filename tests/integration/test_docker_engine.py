"""The docker runtime against a real Docker engine: provision, attach, measure, restart, tear down.

Needs an engine at ``TSBENCH_TEST_DOCKER_HOST`` (e.g. ``unix:///var/tmp/tsbench-dockerd/docker.sock``)
and a statically linked busybox (``TSBENCH_TEST_BUSYBOX``, or ``busybox`` on PATH, e.g. Debian's
``busybox-static``); skipped otherwise. Official images cannot be pulled where these tests were
written (no registry but the package registries), so the server is busybox's ``httpd`` in an image
imported from that binary: the runtime is what is under test, not a database.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import stat
import subprocess
import tarfile
import urllib.request
from pathlib import Path
from typing import Any

import docker
import pytest
from builds import wait_for_build

from tsbench.runtimes.container_spec import ContainerSpec, HealthCheck
from tsbench.runtimes.docker import DockerRuntime
from tsbench.runtimes.docker_arguments import LABEL_INSTANCE
from tsbench.runtimes.handoff import ElsewhereError
from tsbench.targets.base import Capabilities, Footprint, Target, TargetError

pytestmark = pytest.mark.integration
ENGINE = os.environ.get("TSBENCH_TEST_DOCKER_HOST", "")
IMAGE = "tsbench-test/busybox:1.35"
TOKEN = "TSBENCH_TEST_DOCKER_TOKEN"


def static_busybox() -> Path | None:
    given = os.environ.get("TSBENCH_TEST_BUSYBOX")
    if given:  # scripts/install_test_docker_engine.sh names Debian's busybox-static
        return Path(given)
    found = shutil.which("busybox")
    if not found or not shutil.which("file"):
        return None
    described = subprocess.run(["file", "-L", found], capture_output=True, text=True).stdout
    return Path(found) if "statically linked" in described else None


@pytest.fixture(scope="module")
def client() -> docker.DockerClient:
    if not ENGINE:
        pytest.skip("TSBENCH_TEST_DOCKER_HOST is not set (no Docker engine to test against)")
    try:
        client = docker.DockerClient(base_url=ENGINE, version="auto")
        client.ping()
    except docker.errors.DockerException as error:
        pytest.fail(f"TSBENCH_TEST_DOCKER_HOST names {ENGINE}, but no Docker engine answers there: {error}")
    try:
        client.images.get(IMAGE)
    except docker.errors.ImageNotFound:
        busybox = static_busybox()
        if busybox is None:
            pytest.skip("no statically linked busybox to build the test image from")
        client.api.import_image_from_data(
            rootfs(busybox), repository=IMAGE.split(":")[0], tag=IMAGE.split(":")[1], changes=['CMD ["sh"]']
        )
    return client


def rootfs(busybox: Path) -> bytes:
    """A root filesystem: /bin/busybox plus the applets the tests use, /etc/passwd, /tmp."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for folder in ("bin", "tmp", "etc"):
            info = tarfile.TarInfo(folder)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if folder == "tmp" else 0o755
            archive.addfile(info)
        archive.add(str(busybox), "bin/busybox")
        for applet in (
            "sh",
            "du",
            "wget",
            "httpd",
            "mkdir",
            "dd",
            "echo",
            "cat",
            "sync",
            "sleep",
            "true",
            "date",
        ):
            info = tarfile.TarInfo(f"bin/{applet}")
            info.type, info.linkname = tarfile.SYMTYPE, "busybox"
            archive.addfile(info)
        passwd = b"root:x:0:0:root:/root:/bin/sh\n"
        info = tarfile.TarInfo("etc/passwd")
        info.size = len(passwd)
        archive.addfile(info, io.BytesIO(passwd))
    return buffer.getvalue()


def http_spec(command: str | None = None) -> ContainerSpec:
    """busybox httpd serving /data/www; 4 MiB written under the data path at start."""
    serve = (
        "mkdir -p /data/www && echo ok > /data/www/ok.txt"
        " && { [ -f /data/blob ] || dd if=/dev/zero of=/data/blob bs=1M count=4 2>/dev/null; }"
        " && exec httpd -f -p 8080 -h /data/www"
    )
    return ContainerSpec(
        image=IMAGE,
        ports={"http": 8080},
        data_paths=("/data",),
        healthcheck=HealthCheck(
            ("wget", "-q", "-O", "/dev/null", "http://127.0.0.1:8080/ok.txt"),
            interval_s=0.5,
            timeout_s=2,
            retries=20,
            start_period_s=0.5,
        ),
        environment={"GREETING": "hello"},
        secret_env={"SERVER_TOKEN": TOKEN},
        command=("sh", "-c", command or serve),
        files={"/etc/tsbench/greeting.conf": "greeting = hello\n"},
        client_secrets={"token": TOKEN},
        stop_timeout_s=5,
        note="busybox httpd standing in for a database server",
    )


class HttpTarget(Target):
    """Just enough of a target for the runtime's ready check: ``version`` fetches a file."""

    name = "httptest"
    title = "busybox httpd"
    capabilities = Capabilities(durable=False, compression="none")

    @staticmethod
    def server_recipe() -> type:
        raise NotImplementedError

    def version(self) -> str:
        url = f"http://{self.endpoint.host}:{self.endpoint.port('http')}/ok.txt"
        with urllib.request.urlopen(url, timeout=2) as answer:
            return answer.read().decode().strip()

    def create_schema(self) -> None: ...
    def writer(self) -> Any: ...
    def flush(self) -> None: ...
    def row_count(self, measurement: str) -> int:
        return 0

    def render(self, query: Any) -> str:
        return ""

    def session(self) -> Any: ...
    def footprint(self) -> Footprint:
        return Footprint(0, "")


@pytest.fixture()
def runtime(client: docker.DockerClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> DockerRuntime:
    monkeypatch.delenv(TOKEN, raising=False)
    monkeypatch.delenv("TSBENCH_SECRET_KEY", raising=False)
    return DockerRuntime(
        client_factory=lambda: docker.DockerClient(base_url=ENGINE, version="auto"), root=tmp_path, run="r1"
    )


def test_provision_attach_measure_restart_teardown(
    runtime: DockerRuntime, client: docker.DockerClient
) -> None:
    instance = "itest-http"
    server = runtime.provision_spec(HttpTarget, instance, "busybox", http_spec())
    try:
        endpoint = server.endpoint()
        assert endpoint.host == "127.0.0.1"
        with urllib.request.urlopen(f"http://127.0.0.1:{endpoint.port('http')}/ok.txt", timeout=5) as answer:
            assert answer.read() == b"ok\n"

        # secrets: generated, 0600 on disk, in the container's environment, nowhere in state or facts
        home = runtime.root / instance
        stored = json.loads((home / "secrets.json").read_text())
        token = stored[TOKEN]
        assert endpoint.secrets == {"token": token} and len(token) >= 32
        assert stat.S_IMODE((home / "secrets.json").stat().st_mode) == 0o600
        assert stat.S_IMODE(home.stat().st_mode) == 0o700
        assert token not in (home / "container.json").read_text()
        container = client.containers.get(server.state["container"])
        assert f"SERVER_TOKEN={token}" in container.attrs["Config"]["Env"]
        assert container.labels[LABEL_INSTANCE] == instance and container.labels["tsbench.run"] == "r1"
        exit_code, greeting = container.exec_run(["cat", "/etc/tsbench/greeting.conf"])
        assert exit_code == 0 and greeting == b"greeting = hello\n"
        facts = server.facts()
        assert token not in json.dumps(facts)
        assert facts["image"] == IMAGE and facts["image_id"].startswith("sha256:")
        assert facts["engine"]["address"] == ENGINE
        assert facts["engine"]["api_version"] and "<secret from TSBENCH_TEST_DOCKER_TOKEN>" in facts["config"]

        # another process attaches by name (a fresh runtime object over the same state root)
        again = DockerRuntime(client_factory=runtime.client_factory, root=runtime.root).attach(instance)
        assert again.endpoint() == endpoint and again.endpoint().secrets == endpoint.secrets

        # usage: a busy loop inside the container shows as CPU; memory is resident bytes
        probe = again.usage_probe()
        probe.measure()
        container.exec_run(
            ["sh", "-c", "end=$(( $(date +%s) + 2 )); while [ $(date +%s) -lt $end ]; do :; done"]
        )
        cpu, rss = probe.measure()
        # an idle container shows ~0 %; the loop's share depends on the other load (2 cores shared
        # with two more test workers: 13 % once), so only "clearly busy" is asserted
        assert cpu > 5.0 and rss > 0

        # bytes on disk: the 4 MiB blob, by du in the running container and by the engine when stopped
        running = again.disk_bytes()
        assert 4 * 2**20 <= running < 64 * 2**20
        again.stop()
        assert abs(again.disk_bytes() - running) < 2**20

        # cold restart: data kept, page cache dropped (root, engine on this kernel) or the reason given
        again.start()
        result = again.restart_cold()
        assert result["restarted"] and result["was_down"]
        assert result["os_cache_dropped"] == (os.geteuid() == 0), result["os_cache_note"]
        assert again.disk_bytes() >= 4 * 2**20
        volume = server.state["volumes"]["/data"]
        assert client.volumes.get(volume).attrs["Labels"][LABEL_INSTANCE] == instance
    finally:
        runtime.teardown(instance)
    assert not client.containers.list(all=True, filters={"label": f"{LABEL_INSTANCE}={instance}"})
    assert not client.volumes.list(filters={"label": f"{LABEL_INSTANCE}={instance}"})
    assert not (runtime.root / instance).exists()
    runtime.teardown(instance)  # twice: still fine


def test_a_server_that_exits_fails_provision_with_its_log(
    runtime: DockerRuntime, client: docker.DockerClient
) -> None:
    instance = "itest-exits"
    try:
        with pytest.raises(TargetError, match=r"exited \(exit code 3\)[\s\S]*broken on purpose"):
            runtime.provision_spec(
                HttpTarget, instance, "busybox", http_spec("echo broken on purpose; exit 3")
            )
    finally:
        runtime.teardown(instance)
    assert not client.volumes.list(filters={"label": f"{LABEL_INSTANCE}={instance}"})


def test_a_given_secret_is_used_and_not_stored(
    runtime: DockerRuntime, client: docker.DockerClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN, "given-token-value-0123456789")
    instance = "itest-given"
    try:
        server = runtime.provision_spec(HttpTarget, instance, "busybox", http_spec())
        assert server.endpoint().secrets == {"token": "given-token-value-0123456789"}
        assert json.loads((runtime.root / instance / "secrets.json").read_text()) == {}
        env = client.containers.get(server.state["container"]).attrs["Config"]["Env"]
        assert "SERVER_TOKEN=given-token-value-0123456789" in env
    finally:
        runtime.teardown(instance)


def test_airflow_glue_returns_a_client_with_and_without_a_connection(
    client: docker.DockerClient, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tsbench.airflow.docker_client import _ClientOfHook, docker_client

    if "AIRFLOW_HOME" not in os.environ:  # (Airflow keeps the settings of its first import)
        monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow"))
    monkeypatch.delenv("AIRFLOW_CONN_TSBENCH_DOCKER", raising=False)
    monkeypatch.setenv("DOCKER_HOST", ENGINE)
    plain = docker_client()  # no connection: docker.from_env()
    assert plain.ping() and plain.images.get(IMAGE).tags == [IMAGE]
    monkeypatch.delenv("DOCKER_HOST")
    connection = {"conn_type": "docker", "extra": {"base_url": ENGINE}}  # no registry: no login
    monkeypatch.setenv("AIRFLOW_CONN_TSBENCH_DOCKER", json.dumps(connection))
    hooked = docker_client()
    assert isinstance(hooked, _ClientOfHook) and hooked.ping()
    assert hooked.images.get(IMAGE).id == plain.images.get(IMAGE).id


# -- a whole comparison with runtime=docker: the real postgres/timescaledb specs, stand-in images -------
STANDINS = ("postgres", "timescaledb", "influxdb", "victoriametrics")
CONFIG_SEEN = {
    "influxdb": "INFLUXDB_DATA_INDEX_VERSION=inmem",
    "victoriametrics": "-retentionPeriod=100y",
}


STANDIN_DIGEST = "tsbench.standin.context"  # the label naming what a stand-in was built from


@pytest.fixture(scope="module")
def standin_images(client: docker.DockerClient) -> None:
    """Build the stand-ins and tag them with the specs' official names (in the test engine only)."""
    import standin_images as standin

    wait_for_build("TSBENCH_VICTORIAMETRICS_BUILD_STATUS", "victoria-metrics (install.sh)")
    why_not = standin.available()
    busybox = static_busybox()
    if why_not or busybox is None:
        pytest.skip(why_not or "no statically linked busybox")
    postgres: bytes | None = None
    for target in STANDINS:
        image = pick_image(target)
        if target == "influxdb":
            context = standin.build_context(standin.INFLUXDB_DOCKERFILE, standin.influxdb_rootfs(busybox))
        elif target == "victoriametrics":
            root = standin.victoriametrics_rootfs(busybox)
            context = standin.build_context(standin.VICTORIAMETRICS_DOCKERFILE, root)
        else:
            postgres = postgres or standin.postgres_rootfs(busybox)
            timescale = target == "timescaledb"
            dockerfile = standin.POSTGRES_DOCKERFILE.format(
                env="STANDIN_PRELOAD=timescaledb" if timescale else ""
            )
            init_sql = "CREATE EXTENSION IF NOT EXISTS timescaledb;\n" if timescale else ""
            context = standin.build_context(dockerfile, postgres, init_sql)
        # A stand-in is rebuilt when what it is built from changed (the engine outlives a CI run).
        digest = hashlib.sha256(context).hexdigest()[:16]
        try:
            labels = client.images.get(image).labels
            if labels.get("tsbench.standin") != "true":
                pytest.skip(f"the test engine has a real {image}: not replacing it with a stand-in")
            if labels.get(STANDIN_DIGEST) == digest:
                continue
        except docker.errors.ImageNotFound:
            pass
        fileobj, labels = io.BytesIO(context), {STANDIN_DIGEST: digest}
        client.images.build(fileobj=fileobj, custom_context=True, tag=image, rm=True, labels=labels)


def test_a_comparison_runs_with_the_docker_runtime(
    client: docker.DockerClient, standin_images: None, tmp_path: Path, dataset_cache: Path
) -> None:
    from tsbench.results.files import read_json
    from tsbench.run.comparison import parse_comparison
    from tsbench.run.target_phases import run_comparison

    runtime = DockerRuntime(
        client_factory=lambda: docker.DockerClient(base_url=ENGINE, version="auto"), root=tmp_path / "state"
    )
    small = {"start": "2016-01-01T00:00:00Z", "end": "2016-01-01T12:00:00Z", "queries_per_type": 2}
    specs = parse_comparison({**small, "hot_runs": 1, "scales": [10], "targets": list(STANDINS)})
    folder = run_comparison(specs, tmp_path / "results", "dock", dataset_cache, runtime)
    comparison = read_json(folder / "comparison.json")
    assert comparison["failed_targets"] == []
    for name in STANDINS:
        body = comparison["results"]["10"]["targets"][name]
        assert body["status"] == "ok", body.get("error")
        provision = read_json(folder / "scale-10" / "targets" / name / "provision.json")
        assert provision["runtime"] == "docker" and provision["placement"]["engine"]["version"]
        assert provision["server_binary"].startswith(pick_image(name))
        assert CONFIG_SEEN.get(name, "-c shared_buffers=6GB") in provision["config"]
        assert body["load"]["row_count_ok"] and body["load"]["trials"][0]["rows"] == 43_200
        assert body["footprint"]["after_load"]["disk_bytes"] > body["footprint"]["after_load"]["bytes"] > 0
        if name == "influxdb":  # its files are in the container: counted from SHOW STATS alone
            assert "not visible here" in body["footprint"]["after_load"]["note"]
        assert body["cache_reset"]["restarted"] and body["cache_reset"]["was_down"]
        checks = body["queries"]["answer_checks"]
        assert checks["mismatches"] == 0 and checks["agreed"] == checks["checked"] > 0
        assert "password" not in json.dumps(provision["endpoint"])
    labelled = {"label": "tsbench.instance"}
    assert not [c for c in client.containers.list(all=True, filters=labelled) if "dock" in c.name]
    assert not [v for v in client.volumes.list(filters=labelled) if "dock" in v.name]


def pick_image(target: str) -> str:
    from tsbench.runtimes.container_spec import pick_container

    return pick_container(target)[1].image


def test_another_worker_attaches_through_the_run_folder_and_tears_down(
    client: docker.DockerClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two state roots stand for two workers of one machine (one engine): the run folder carries the
    record, the deployment key the secret; nothing secret is stored anywhere."""
    monkeypatch.delenv(TOKEN, raising=False)
    monkeypatch.setenv("TSBENCH_SECRET_KEY", "deployment-key-" + "k" * 32)
    folder = tmp_path / "run" / "targets" / "httptest"

    def worker(name: str) -> DockerRuntime:
        factory = lambda: docker.DockerClient(base_url=ENGINE, version="auto")  # noqa: E731
        return DockerRuntime(client_factory=factory, root=tmp_path / name, run="r1", handoff=folder)

    first, second, instance = worker("worker-1"), worker("worker-2"), "itest-handoff"
    try:
        server = first.provision_spec(HttpTarget, instance, "busybox", http_spec())
        token = server.endpoint().secrets["token"]
        assert not (first.root / instance / "secrets.json").exists(), "a derived secret was stored"
        record_path = folder / "docker_instance.json"
        record = json.loads(record_path.read_text())
        assert token not in record_path.read_text() and record["state"]["stage"] == "provisioned"
        other = second.attach(instance)
        assert other.endpoint() == server.endpoint()
        with urllib.request.urlopen(
            f"http://127.0.0.1:{other.endpoint().port('http')}/ok.txt", timeout=5
        ) as answer:
            assert answer.read() == b"ok\n"

        assert ENGINE.startswith("unix://")  # a local engine: a worker on another machine cannot reach it
        record_path.write_text(json.dumps({**record, "machine": "another-machine"}))
        with pytest.raises(ElsewhereError, match="machine does not have"):
            second.attach(instance)
        record_path.write_text(json.dumps(record))

        second.teardown(instance)
        assert not client.containers.list(all=True, filters={"label": f"{LABEL_INSTANCE}={instance}"})
        assert json.loads(record_path.read_text())["state"]["stage"] == "removed"
        with pytest.raises(TargetError, match="no docker server instance"):
            first.attach(instance)  # its own container.json is stale: the run folder says removed
    finally:
        first.teardown(instance)
    assert not client.volumes.list(filters={"label": f"{LABEL_INSTANCE}={instance}"})
