"""PostgreSQL as a container: the official image ``postgres`` at the local runtime's exact minor.

The configuration is ``config.py``'s on the image's listener and sockets, with the local recipe's
tuning (``PostgresRecipe.settings()``), passed as ``-c key=value`` arguments to ``postgres`` (they
override the image's ``postgresql.conf``); ``pg_hba.conf`` is the entrypoint's (password logins).
The image's entrypoint runs ``initdb`` (UTF8, locale C.UTF-8 as locally), sets the superuser's
password (generated per instance) and creates the benchmark database. ``PGDATA`` (including
``pg_wal``) is the volume that counts on disk.
"""

from __future__ import annotations

from pathlib import Path

from tsbench.runtimes.container_spec import ContainerSpec, HealthCheck
from tsbench.targets.postgres.config import CONTAINER, server_conf
from tsbench.targets.postgres.definition import DEFINITION, PG_MAJOR
from tsbench.targets.postgres.server import DATABASE, SUPERUSER, PostgresRecipe

PG_VERSION = DEFINITION.version  # the Debian 12 package the local runtime uses
PGDATA = "/var/lib/postgresql/data"
PASSWORD_VARIABLE = "TSBENCH_POSTGRES_PASSWORD"


def postgres_command(recipe_type: type[PostgresRecipe]) -> tuple[str, ...]:
    """``postgres -c key=value …``: the configuration with the tuning the local recipe writes."""
    settings = server_conf(CONTAINER, recipe_type(Path(PGDATA), {"pg": 5432}).settings())
    return ("postgres", *(arg for key, value in settings.items() for arg in ("-c", f"{key}={value}")))


def pg_healthcheck() -> HealthCheck:
    """``pg_isready`` over TCP: the entrypoint's temporary init server listens on the socket only, so
    this passes for the final server alone."""
    command = ("pg_isready", "-h", "127.0.0.1", "-p", "5432", "-U", SUPERUSER, "-d", DATABASE)
    return HealthCheck(command, interval_s=2.0, retries=90, start_period_s=10.0)


def postgres_spec(
    image: str, recipe_type: type[PostgresRecipe], note: str, environment: dict[str, str] | None = None
) -> ContainerSpec:
    """A PostgreSQL-family server (also TimescaleDB's) in an image that follows the official entrypoint."""
    return ContainerSpec(
        image=image,
        ports={"pg": 5432},
        data_paths=(PGDATA,),
        healthcheck=pg_healthcheck(),
        environment={
            "POSTGRES_USER": SUPERUSER,
            "POSTGRES_DB": DATABASE,
            "PGDATA": PGDATA,
            "POSTGRES_INITDB_ARGS": "-E UTF8 --locale=C.UTF-8",
            **(environment or {}),
        },
        secret_env={"POSTGRES_PASSWORD": PASSWORD_VARIABLE},
        command=postgres_command(recipe_type),
        # dynamic shared memory (parallel query) lives in /dev/shm, which Docker caps at 64 MB by default
        shm_size="1g",
        client_user=SUPERUSER,
        client_database=DATABASE,
        client_secrets={"password": PASSWORD_VARIABLE},
        stop_timeout_s=recipe_type.stop_timeout_s,  # the shutdown checkpoint after a large load
        note=note,
    )


CONTAINERS: dict[str, ContainerSpec] = {
    PG_MAJOR: postgres_spec(
        f"postgres:{PG_VERSION}",
        PostgresRecipe,
        note=(
            f"official image postgres:{PG_VERSION} (Debian), the local runtime's minor and tuning "
            "(settings as -c arguments); password authentication (scram-sha-256) over TCP"
        ),
    ),
}
