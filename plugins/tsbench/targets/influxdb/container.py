"""InfluxDB as a container: official image ``influxdb``, flavours ``"1.8"`` (default) and ``"2.7"``.

``1.8`` is the newest 1.x image; it runs the one configuration (``config.py``, in the image's own
directories) as ``INFLUXDB_<SECTION>_<KEY>`` variables, which 1.x reads over its configuration file,
and speaks the same HTTP API (``/write``, ``/query``) as the local server (the same version), with
authentication on: the image's first start creates the admin ``INFLUXDB_ADMIN_USER`` with
``INFLUXDB_ADMIN_PASSWORD`` (generated per instance, the client's password too) on loopback before it
serves. ``2.7``
is InfluxDB 2: the image's setup mode creates the organisation, the ``benchmark`` bucket and an
all-access token (generated per instance, handed to the target as ``Endpoint.secrets["token"]``); the
target talks to it through the 1.x compatibility API (``/write``, ``/query`` with ``Authorization:
Token …``), the bucket being reachable as database ``benchmark`` through its virtual DBRP mapping
(``benchmark/autogen``). 2.x has only the TSI index (no ``inmem``) and no series limits; its storage
settings are ``INFLUXD_*`` variables (``V2_TUNING``)."""

from __future__ import annotations

from tsbench.runtimes.container_spec import ContainerSpec, HealthCheck
from tsbench.targets.influxdb.auth import USER
from tsbench.targets.influxdb.config import CONTAINER, influxdb_config, v1_environment
from tsbench.targets.influxdb.config import v1_variable as v1_variable
from tsbench.targets.influxdb.definition import DEFINITION
from tsbench.targets.influxdb.server import DATABASE, TUNING

V1_VERSION = DEFINITION.version
V2_VERSION = "2.7.12"
ORG = "tsbench"
ADMIN = USER  # InfluxDB 2's setup user: the same name as 1.x's admin
TOKEN_VARIABLE = "TSBENCH_INFLUXDB_TOKEN"
PASSWORD_VARIABLE = "TSBENCH_INFLUXDB_PASSWORD"


# InfluxDB 2 storage settings mirroring TUNING where 2.x has the key (sizes in bytes).
V2_TUNING: dict[str, str] = {
    "storage-cache-max-memory-size": str(4 * 1024**3),
    "storage-cache-snapshot-memory-size": str(25 * 1024**2),
    "storage-wal-fsync-delay": "0s",
    "storage-max-concurrent-compactions": "0",
    "storage-write-timeout": "60s",
    "reporting-disabled": "true",
}


def v2_variable(option: str) -> str:
    return "INFLUXD_" + option.upper().replace("-", "_")


def ping_check(command: tuple[str, ...]) -> HealthCheck:
    return HealthCheck(command, interval_s=2.0, retries=60, start_period_s=5.0)


CONTAINERS: dict[str, ContainerSpec] = {
    "1.8": ContainerSpec(
        image=f"influxdb:{V1_VERSION}",
        ports={"http": 8086, "rpc": 8088},
        data_paths=("/var/lib/influxdb",),  # meta/, data/ (TSM, series file), wal/
        healthcheck=ping_check(("curl", "-sf", "http://127.0.0.1:8086/ping")),
        environment={
            "GOGC": DEFINITION.process_settings()["gogc"],
            **v1_environment(influxdb_config(CONTAINER, TUNING)),
            # The image's first start creates this admin (and the database) before it serves.
            "INFLUXDB_ADMIN_USER": USER,
            "INFLUXDB_DB": DATABASE,
        },
        secret_env={"INFLUXDB_ADMIN_PASSWORD": PASSWORD_VARIABLE},
        client_database=DATABASE,
        client_secrets={"password": PASSWORD_VARIABLE},
        note=(
            f"official image influxdb:{V1_VERSION} (the local runtime builds the same version from its Go "
            "module with a current Go); the local configuration as INFLUXDB_* variables, HTTP "
            "authentication on (admin created by the image's first start with a password generated per "
            "instance); GOMEMLIMIT not set (the image's influxd is built with a Go older than 1.19, which "
            "ignores it)"
        ),
    ),
    "2.7": ContainerSpec(
        image=f"influxdb:{V2_VERSION}",
        ports={"http": 8086},
        data_paths=("/var/lib/influxdb2",),  # bolt metadata, engine/data (TSM, TSI), engine/wal
        healthcheck=ping_check(("influx", "ping", "--host", "http://127.0.0.1:8086")),
        environment={
            "DOCKER_INFLUXDB_INIT_MODE": "setup",
            "DOCKER_INFLUXDB_INIT_USERNAME": ADMIN,
            "DOCKER_INFLUXDB_INIT_ORG": ORG,
            "DOCKER_INFLUXDB_INIT_BUCKET": DATABASE,
            "GOGC": DEFINITION.process_settings()["gogc"],
            **{v2_variable(option): value for option, value in V2_TUNING.items()},
        },
        secret_env={
            "DOCKER_INFLUXDB_INIT_PASSWORD": PASSWORD_VARIABLE,
            "DOCKER_INFLUXDB_INIT_ADMIN_TOKEN": TOKEN_VARIABLE,
        },
        client_database=DATABASE,
        client_extra={"api": "v2", "org": ORG, "bucket": DATABASE},
        client_secrets={"token": TOKEN_VARIABLE},
        note=(
            f"official image influxdb:{V2_VERSION} (InfluxDB 2 OSS) used through its 1.x compatibility API "
            "with a token; TSI index only (no inmem), no series limits; storage settings as INFLUXD_* "
            "variables; GOMEMLIMIT not set"
        ),
    ),
}
