"""Stand-in images for a Docker engine that cannot pull official ones (no registry reachable).

They are built locally from this machine's own servers (PostgreSQL 15 with the TimescaleDB extension
built by scripts/install_timescaledb.sh; InfluxDB 1.8.10 built by targets/influxdb/install.sh;
VictoriaMetrics built by targets/victoriametrics/install.sh) and a statically linked busybox, and
honour the documented contract of the official images that the container specs rely on — ``postgres``:
``POSTGRES_USER``/``_PASSWORD``/``_DB``, ``POSTGRES_INITDB_ARGS``, ``PGDATA``,
``/docker-entrypoint-initdb.d/*.sql``, password (scram) login over TCP, ``STOPSIGNAL SIGINT``, the server
command as arguments; ``influxdb`` 1.x: ``influxd`` reading ``/etc/influxdb/influxdb.conf`` (data under
``/var/lib/influxdb``) under ``INFLUXDB_*`` variables, the first start's admin and database
(``INFLUXDB_ADMIN_USER``/``_PASSWORD``, ``INFLUXDB_DB``), ``curl`` for the healthcheck;
``victoriametrics/victoria-metrics``: ``/victoria-metrics-prod`` as the entrypoint taking the flags as the
command, ``-envflag.enable`` variables, busybox ``wget`` for the healthcheck. Tagged with the
official names in a test engine only, so that the docker runtime runs the real specs unchanged. They
are not the official images: what they prove is the runtime and the specs, not the images.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

from tsbench.targets.influxdb.server import InfluxDBServer, influxd_binary
from tsbench.targets.victoriametrics.server import VictoriaMetricsServer, binary_path

PG = Path("/usr/lib/postgresql/15")
INFLUXD = influxd_binary(InfluxDBServer.definition.version)  # built by targets/influxdb/install.sh
VICTORIA = binary_path(VictoriaMetricsServer.definition.version)  # targets/victoriametrics/install.sh
PG_SHARE = Path("/usr/share/postgresql/15")
BINARIES = ("postgres", "initdb", "pg_ctl", "psql", "pg_isready")
APPLETS = (
    "sh",
    "mktemp",
    "rm",
    "cat",
    "mkdir",
    "printf",
    "echo",
    "[",
    "test",
    "sleep",
    "id",
    "ls",
    "du",
    "sync",
    "wget",
    "base64",
)
UID = 999

POSTGRES_DOCKERFILE = """\
FROM scratch
ADD rootfs.tar /
ENV PATH=/usr/lib/postgresql/15/bin:/bin PGDATA=/var/lib/postgresql/data {env}
LABEL tsbench.standin=true
USER postgres
STOPSIGNAL SIGINT
ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]
CMD ["postgres"]
"""

INFLUXDB_DOCKERFILE = """\
FROM scratch
ADD rootfs.tar /
ENV PATH=/usr/bin:/bin
LABEL tsbench.standin=true
ENTRYPOINT ["/entrypoint.sh"]
CMD ["/usr/bin/influxd"]
"""

# The official 1.x image's first start (its documented contract only): with INFLUXDB_ADMIN_USER set and
# no metadata yet, influxd serves on loopback while the admin (INFLUXDB_ADMIN_PASSWORD) and
# INFLUXDB_DB are created, then it starts for real.
INFLUXDB_ENTRYPOINT = """\
#!/bin/sh
set -e
if [ -n "$INFLUXDB_ADMIN_USER" ] && [ ! -d /var/lib/influxdb/meta ]; then
    INFLUXDB_HTTP_BIND_ADDRESS=127.0.0.1:8086 "$@" &
    pid=$!
    until wget -q -O /dev/null http://127.0.0.1:8086/ping; do sleep 0.2; done
    user=$INFLUXDB_ADMIN_USER
    grant="CREATE USER \\"$user\\" WITH PASSWORD '$INFLUXDB_ADMIN_PASSWORD' WITH ALL PRIVILEGES"
    wget -q -O /dev/null --post-data "q=$grant" http://127.0.0.1:8086/query
    if [ -n "$INFLUXDB_DB" ]; then
        login=$(printf '%s:%s' "$user" "$INFLUXDB_ADMIN_PASSWORD" | base64)
        wget -q -O /dev/null --header "Authorization: Basic $login" \\
            --post-data "q=CREATE DATABASE \\"$INFLUXDB_DB\\"" http://127.0.0.1:8086/query
    fi
    kill "$pid"
    wait "$pid" || true
fi
exec "$@"
"""

ENTRYPOINT = """\
#!/bin/sh
# tsbench test stand-in for the official postgres image's entrypoint (its documented contract only)
set -e
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    pwfile=$(mktemp)
    printf '%s\\n' "$POSTGRES_PASSWORD" > "$pwfile"
    initdb -D "$PGDATA" -U "${POSTGRES_USER:-postgres}" --pwfile="$pwfile" \\
        --auth-local=trust --auth-host=scram-sha-256 $POSTGRES_INITDB_ARGS
    rm -f "$pwfile"
    printf "host all all all scram-sha-256\\n" >> "$PGDATA/pg_hba.conf"
    printf "listen_addresses = '*'\\n" >> "$PGDATA/postgresql.conf"
    if [ -n "$STANDIN_PRELOAD" ]; then
        printf "shared_preload_libraries = '%s'\\n" "$STANDIN_PRELOAD" >> "$PGDATA/postgresql.conf"
    fi
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start
    user=${POSTGRES_USER:-postgres}
    database=${POSTGRES_DB:-postgres}
    if [ "$database" != postgres ]; then
        psql -v ON_ERROR_STOP=1 -U "$user" -d postgres -c "CREATE DATABASE \\"$database\\""
    fi
    for f in /docker-entrypoint-initdb.d/*.sql; do
        if [ -f "$f" ]; then psql -v ON_ERROR_STOP=1 -U "$user" -d "$database" -f "$f"; fi
    done
    pg_ctl -D "$PGDATA" -m fast -w stop
fi
exec "$@"
"""


def shared_libraries(paths: list[Path]) -> set[Path]:
    """Every shared library ``ldd`` lists for ``paths`` (the dynamic loader included)."""
    found: set[Path] = set()
    for path in paths:
        out = subprocess.run(["ldd", str(path)], capture_output=True, text=True).stdout
        for line in out.splitlines():
            words = line.split()
            for word in words:
                if word.startswith("/"):
                    found.add(Path(word))
    return found


def _add_dir(archive: tarfile.TarFile, name: str, mode: int = 0o755, uid: int = 0) -> None:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.uid, info.gid = tarfile.DIRTYPE, mode, uid, uid
    archive.addfile(info)


def _add_bytes(archive: tarfile.TarFile, name: str, data: bytes, mode: int = 0o644) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), mode
    archive.addfile(info, io.BytesIO(data))


def rootfs(
    busybox: Path,
    programs: list[Path],
    trees: list[Path],
    owned_dirs: dict[str, tuple[int, int]],
    files: dict[str, tuple[str, int]],
    placed: dict[str, Path] | None = None,
) -> bytes:
    """A root filesystem as a tar archive: busybox (sh and a few applets), ``programs`` with the shared
    libraries they need, whole ``trees``, directories owned by the service user (``path: (mode,
    uid)``), text ``files`` (``path: (text, mode)``) and ``placed`` programs (image path: this
    machine's path), with their libraries too."""
    placed = placed or {}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for folder in ("bin", "etc", "usr", "usr/local", "usr/local/bin", "var", "var/lib", "var/run"):
            _add_dir(archive, folder)
        _add_dir(archive, "tmp", 0o1777)
        for folder, (mode, uid) in owned_dirs.items():
            _add_dir(archive, folder, mode, uid)
        for path in sorted(shared_libraries([*programs, *placed.values()])):
            archive.add(str(path.resolve()), str(path).lstrip("/"))
        for path in programs:
            archive.add(str(path), str(path).lstrip("/"))
        for name, path in placed.items():
            archive.add(str(path), name.lstrip("/"))
        for tree in trees:
            archive.add(str(tree), str(tree).lstrip("/"))
        archive.add(str(busybox), "bin/busybox")
        for applet in APPLETS:
            info = tarfile.TarInfo(f"bin/{applet}")
            info.type, info.linkname = tarfile.SYMTYPE, "busybox"
            archive.addfile(info)
        for name, (text, mode) in files.items():
            _add_bytes(archive, name, text.encode(), mode)
    return buffer.getvalue()


def postgres_rootfs(busybox: Path) -> bytes:
    """PostgreSQL 15 (+ every extension module installed, TimescaleDB's included), ≈ 100 MB."""
    binaries = [PG / "bin" / name for name in BINARIES]
    modules = [p for p in (PG / "lib").glob("*.so") if p.name != "llvmjit.so"]
    users = f"root:x:0:0::/root:/bin/sh\npostgres:x:{UID}:{UID}::/var/lib/postgresql:/bin/sh\n"
    return rootfs(
        busybox,
        binaries + modules,
        [PG_SHARE, Path("/usr/share/zoneinfo"), Path("/usr/lib/locale/C.utf8")],
        {
            "docker-entrypoint-initdb.d": (0o755, 0),
            "var/lib/postgresql": (0o755, UID),
            "var/lib/postgresql/data": (0o700, UID),
            "var/run/postgresql": (0o2775, UID),
        },
        {
            "etc/passwd": (users, 0o644),
            "etc/group": (f"root:x:0:\npostgres:x:{UID}:\n", 0o644),
            "usr/local/bin/docker-entrypoint.sh": (ENTRYPOINT, 0o755),
        },
    )


def influxdb_rootfs(busybox: Path) -> bytes:
    """This machine's InfluxDB 1.x ``influxd`` with the official 1.x image's ``/etc/influxdb/influxdb.conf``
    layout (data under ``/var/lib/influxdb``) and ``curl`` for the healthcheck."""
    conf = (
        '[meta]\n  dir = "/var/lib/influxdb/meta"\n'
        '[data]\n  dir = "/var/lib/influxdb/data"\n  wal-dir = "/var/lib/influxdb/wal"\n'
    )
    return rootfs(
        busybox,
        [Path("/usr/bin/curl")],
        [Path("/usr/share/zoneinfo"), Path("/etc/ssl/certs")],
        {"var/lib/influxdb": (0o755, 0), "etc/influxdb": (0o755, 0)},
        {
            "etc/passwd": ("root:x:0:0::/root:/bin/sh\n", 0o644),
            "etc/influxdb/influxdb.conf": (conf, 0o644),
            "entrypoint.sh": (INFLUXDB_ENTRYPOINT, 0o755),
        },
        placed={"/usr/bin/influxd": INFLUXD},
    )


VICTORIAMETRICS_DOCKERFILE = """\
FROM scratch
ADD rootfs.tar /
ENV PATH=/bin
LABEL tsbench.standin=true
EXPOSE 8428
ENTRYPOINT ["/victoria-metrics-prod"]
"""


def victoriametrics_rootfs(busybox: Path) -> bytes:
    """This machine's VictoriaMetrics (statically linked) as the official image has it,
    ``/victoria-metrics-prod`` as the entrypoint, and busybox ``wget`` for the healthcheck."""
    return rootfs(
        busybox,
        [],
        [Path("/usr/share/zoneinfo")],
        {"victoria-metrics-data": (0o755, 0)},
        {"etc/passwd": ("root:x:0:0::/root:/bin/sh\n", 0o644)},
        placed={"/victoria-metrics-prod": VICTORIA},
    )


def build_context(dockerfile: str, root: bytes, init_sql: str = "") -> bytes:
    """A docker build context: Dockerfile + rootfs.tar (+ an init script)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        if init_sql:
            dockerfile += "COPY init.sql /docker-entrypoint-initdb.d/000_init.sql\n"
            _add_bytes(archive, "init.sql", init_sql.encode())
        _add_bytes(archive, "Dockerfile", dockerfile.encode())
        _add_bytes(archive, "rootfs.tar", root)
    return buffer.getvalue()


def available() -> str | None:
    """Why the stand-ins cannot be built here (None when they can)."""
    missing = [str(p) for p in (*(PG / "bin" / n for n in BINARIES), PG_SHARE) if not p.exists()]
    if missing:
        return f"PostgreSQL 15 is not installed ({missing[0]})"
    if not (PG / "lib" / "timescaledb.so").exists():
        return "the TimescaleDB extension is not built (scripts/install_timescaledb.sh)"
    if not INFLUXD.exists() or not Path("/usr/bin/curl").exists():
        return f"influxd 1.x ({INFLUXD}: scripts/install.sh influxdb) or curl is not installed"
    if not VICTORIA.exists():
        return f"victoria-metrics ({VICTORIA}: scripts/install.sh victoriametrics) is not built"
    return None
