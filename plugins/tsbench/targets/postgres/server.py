"""PostgreSQL 15 as a local process: a private cluster (own data dir, port and socket dir).

The postmaster runs in the foreground as user ``postgres`` (``run_as``), started directly with
``postgres -D <data>``; SIGINT asks for a *fast* shutdown (open transactions are rolled back, a
shutdown checkpoint is written).

The configuration is ``config.py``'s, on loopback at the allocated port with a private socket
directory; logins over TCP give the instance's own password (``scram-sha-256``; generated, kept 0600
in the instance home, never logged), on the socket only the OS user ``postgres`` logs in (``peer``):
``<data>/tsbench.conf`` (included from
``postgresql.conf``; the definition's table on this host) and ``<data>/pg_hba.conf``, rewritten by
every ``initialise`` so that a changed table applies to an existing cluster. Every setting is
explained in the README. TimescaleDB's recipe
(``targets/timescaledb/server.py``) extends this one with its definition (PostgreSQL's table plus the
preload library and its settings) and an extension; nothing else differs.
"""

from __future__ import annotations

import hashlib
import shutil
import signal
import subprocess
from pathlib import Path
from typing import ClassVar

import psycopg

from tsbench.results.files import write_bytes_atomic
from tsbench.runtimes.definition import ServerDefinition
from tsbench.runtimes.instance_secret import instance_password
from tsbench.runtimes.local import ServerRecipe
from tsbench.runtimes.process_env import server_environment
from tsbench.targets.base import Endpoint, TargetError
from tsbench.targets.postgres.config import Form, conf_text, hba_text, server_conf
from tsbench.targets.postgres.definition import DEFINITION, PG_MAJOR

PG_BIN = Path(f"/usr/lib/postgresql/{PG_MAJOR}/bin")
SUPERUSER = "postgres"
DATABASE = "tsbench"
HOST = "127.0.0.1"
HOST_AUTH = "scram-sha-256"

# The tuning table's keys (values: ``DEFINITION.settings()``, sized to this host).
TUNING = DEFINITION.tuning


def run_as_postgres(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a PostgreSQL tool as the ``postgres`` user (TargetError with its output on failure)."""
    result = subprocess.run(
        argv, cwd=cwd, user=SUPERUSER, group=SUPERUSER, capture_output=True, text=True, check=False
    )
    if result.returncode:
        tail = "\n".join((result.stdout + result.stderr).splitlines()[-15:])
        raise TargetError(f"{Path(argv[0]).name} failed (exit {result.returncode}):\n{tail}")
    return result


class PostgresRecipe(ServerRecipe):
    """Plain PostgreSQL 15 (Debian package) in a private cluster under ``home``."""

    name = "postgres"
    definition: ClassVar[ServerDefinition] = DEFINITION
    port_roles = ("pg",)
    pg_bin: ClassVar[Path] = PG_BIN  # the PostgreSQL installation's binaries (a private copy: TSL)
    run_as = SUPERUSER
    stop_signal = signal.SIGINT  # fast shutdown
    start_timeout_s = 120.0
    stop_timeout_s = 120.0  # the shutdown checkpoint of a large load can take a while

    extensions: ClassVar[tuple[str, ...]] = ()  # CREATE EXTENSION in the benchmark database
    extra_settings: ClassVar[dict[str, str]] = {}  # a subclass's settings beyond PostgreSQL's table

    @property
    def socket_dir(self) -> Path:
        """A short path: PostgreSQL refuses socket paths over 107 bytes, and instance homes under a
        long state root exceed that. Derived from the home, so every process finds the same one."""
        return Path("/tmp") / f"tsbench-pg-{hashlib.sha256(str(self.home).encode()).hexdigest()[:12]}"

    def outside_dirs(self) -> list[Path]:
        return [self.socket_dir]

    @property
    def port(self) -> int:
        return self.ports["pg"]

    def settings(self) -> dict[str, str]:
        """Every server setting this recipe writes: the definition's table on this host."""
        return self.definition.settings()

    @property
    def form(self) -> Form:
        """Loopback at the allocated port, the private socket directory, password logins over TCP."""
        return Form(
            HOST,
            self.port,
            str(self.socket_dir),
            local_auth="peer",
            host_auth=HOST_AUTH,
            networks=(f"{HOST}/32", "::1/128"),
        )

    @property
    def password(self) -> str:
        """The superuser's password: the instance's own (``instance_secret``)."""
        return instance_password(self.home)

    def config_text(self) -> str:
        return conf_text(server_conf(self.form, self.settings()), type(self).__name__)

    def initialise(self) -> None:
        for folder, mode in ((self.data_dir, 0o700), (self.socket_dir, 0o755)):
            folder.mkdir(parents=True, exist_ok=True)
            shutil.chown(folder, SUPERUSER, SUPERUSER)
            folder.chmod(mode)
        if not (self.data_dir / "PG_VERSION").is_file():
            self._initdb()
        for name, text in (("tsbench.conf", self.config_text()), ("pg_hba.conf", hba_text(self.form))):
            (self.data_dir / name).write_text(text)
            shutil.chown(self.data_dir / name, SUPERUSER, SUPERUSER)
        main = self.data_dir / "postgresql.conf"
        text = main.read_text()
        include = "include_if_exists = 'tsbench.conf'"
        if include not in text.splitlines():
            main.write_text(text.rstrip("\n") + f"\n\n# tsbench tuning\n{include}\n")

    def _initdb(self) -> None:
        """A new cluster whose superuser has the instance's password (read by initdb, as user
        postgres, from a file of its own that lives only as long as initdb runs)."""
        password_file = self.data_dir.parent / ".initdb-password"
        write_bytes_atomic(password_file, self.password.encode() + b"\n", mode=0o600)
        try:
            shutil.chown(password_file, SUPERUSER, SUPERUSER)
            initdb = [str(self.pg_bin / "initdb"), "-D", str(self.data_dir), "-U", SUPERUSER]
            logins = ["--auth-local=peer", f"--auth-host={HOST_AUTH}", f"--pwfile={password_file}"]
            options = ["-E", "UTF8", "--locale=C.UTF-8", "--no-instructions"]
            run_as_postgres([*initdb, *logins, *options], cwd=self.home)
        finally:
            password_file.unlink(missing_ok=True)

    def command(self) -> list[str]:
        return [str(self.pg_bin / "postgres"), "-D", str(self.data_dir)]  # the rest: tsbench.conf

    def environment(self) -> dict[str, str]:
        env = server_environment()
        env.pop("PGDATA", None)
        env["LC_ALL"] = "C.UTF-8"
        return env

    def _connect(self, dbname: str, timeout: int = 2) -> psycopg.Connection:
        return psycopg.connect(
            host=HOST,
            port=self.port,
            user=SUPERUSER,
            password=self.password,
            dbname=dbname,
            connect_timeout=timeout,
            autocommit=True,
        )

    def ready(self) -> bool:
        try:
            with self._connect("postgres", timeout=1) as conn:
                conn.execute("SELECT 1")
        except psycopg.OperationalError:
            return False
        return True

    def after_start(self) -> None:
        """Create the benchmark database and its extensions (idempotent)."""
        with self._connect("postgres", timeout=10) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{DATABASE}"')
        if self.extensions:
            with self._connect(DATABASE, timeout=10) as conn:
                for extension in self.extensions:
                    conn.execute(f'CREATE EXTENSION IF NOT EXISTS "{extension}"')

    def endpoint(self) -> Endpoint:
        return Endpoint(
            host=HOST,
            ports={"pg": self.port},
            user=SUPERUSER,
            database=DATABASE,
            data_dirs=tuple(str(p) for p in self.data_dirs()),
            extra={"socket_dir": str(self.socket_dir)},
            secrets={"password": self.password},
        )

    def data_dirs(self) -> list[Path]:
        return [self.data_dir]  # pg_wal lives inside it

    def version(self) -> str:
        result = subprocess.run([str(self.pg_bin / "postgres"), "--version"], capture_output=True, text=True)
        return result.stdout.strip() or f"PostgreSQL {PG_MAJOR} (version unknown: {result.stderr.strip()})"
