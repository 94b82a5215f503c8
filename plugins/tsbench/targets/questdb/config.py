"""QuestDB's configuration, declared once for the three places its server runs: ``server_conf`` (the
keys of ``conf/server.conf``) and ``LOG_CONF`` (``conf/log.conf``). The local recipe writes both
files (``server.py``), the container receives ``server.conf``'s keys as ``QDB_*`` variables and
``log.conf`` as a file (``container.py``), and the cloud host writes the files the AWS runtime rendered
from them (``definition.py``'s ``cloud_files``). A ``Form`` holds all that differs: the listeners and
the table directory. The password (PostgreSQL wire and HTTP alike) is no setting here: each runtime
passes its own secret.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

PG_USER = "admin"  # QuestDB's default PostgreSQL-wire user, stated
HTTP_USER = PG_USER  # HTTP Basic (REST /exec, ILP over HTTP /write): the same login as the PG wire

# conf/log.conf: QuestDB's default logs every query (2 lines) and every WAL apply at INFO level to
# stdout; its logging thread then busy-waits after each message. Errors, critical messages and
# advisories (start-up banner, listeners, shutdown) still reach server.log.
LOG_CONF = """writers=stdout
w.stdout.class=io.questdb.log.LogConsoleWriter
w.stdout.level=ERROR,CRITICAL,ADVISORY
"""

# Listener keys by port role (http: REST + ILP over HTTP; min: health; pg: PostgreSQL wire; ilp: TCP).
LISTENERS = {
    "http": "http.net.bind.to",
    "min": "http.min.net.bind.to",
    "pg": "pg.net.bind.to",
    "ilp": "line.tcp.net.bind.to",
}
DEFAULT_PORTS = {"http": 9000, "min": 9003, "pg": 8812, "ilp": 9009}


@dataclass(frozen=True)
class Form:
    """What differs where the server runs: ``host`` and ``ports`` of the listeners by role (no
    ``host``: QuestDB's defaults, all interfaces on its default ports) and ``root``, the table
    directory (``cairo.root``; empty: QuestDB's ``<root>/db``)."""

    host: str = ""
    ports: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_PORTS))
    root: str = ""


# The image's defaults; the cloud host: all interfaces, tables on the data volume ($DATA_DIR).
CONTAINER = Form()
CLOUD = Form("0.0.0.0", root="$DATA_DIR")


def server_conf(form: Form, tuning: Mapping[str, str]) -> dict[str, str]:
    """``server.conf``'s keys, in order: ``form``'s, then the fixed ones, then ``tuning`` (the
    definition's table on the machine the server runs on)."""
    places = {"cairo.root": form.root} if form.root else {}
    if form.host:
        places |= {key: f"{form.host}:{form.ports[role]}" for role, key in LISTENERS.items()}
    return {
        **places,
        "line.udp.enabled": "false",
        "telemetry.enabled": "false",
        "pg.user": PG_USER,
        "http.user": HTTP_USER,
        **tuning,
    }


# The release that first reads a tuning key, for the keys an older release of ``definition.py``'s
# ``releases`` lists as "not recognized, probable typos" at its start (it ignores them): such a
# release runs without the key, and its server.conf shows what it reads.
KEY_SINCE: dict[str, str] = {"shared.write.worker.count": "9.0.2"}


def release_key(version: str) -> tuple[int, ...]:
    """``"9.2.3"`` → ``(9, 2, 3)``, for ordering releases."""
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def known_to(version: str, tuning: Mapping[str, str]) -> dict[str, str]:
    """``tuning`` without the keys ``version`` does not read (``KEY_SINCE``)."""
    return {
        key: value
        for key, value in tuning.items()
        if release_key(version) >= release_key(KEY_SINCE.get(key, "0"))
    }


def properties_text(config: Mapping[str, str]) -> str:
    """``config`` as ``server.conf`` (Java properties; values carry no backslash)."""
    lines = ["# written by tsbench from targets/questdb/config.py (tuning: definition.py)"]
    return "\n".join(lines + [f"{key}={value}" for key, value in config.items()]) + "\n"


def qdb_variable(key: str) -> str:
    """The environment variable QuestDB reads for a ``server.conf`` key."""
    return "QDB_" + key.upper().replace(".", "_")
