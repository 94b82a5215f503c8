"""PostgreSQL's configuration, declared once for the three places its server runs (TimescaleDB's two
targets run it with their longer tuning table): ``server_conf`` (the settings of ``tsbench.conf``,
included from ``postgresql.conf``) and ``hba_lines`` (``pg_hba.conf``). The local recipe writes both
files (``server.py``), the container passes the settings as ``-c key=value`` arguments and keeps the
official entrypoint's ``pg_hba.conf`` (password logins; ``container.py``), and the cloud host writes the
files the AWS runtime rendered from them (``cloud_files``, printed by ``postgres_conf`` and
``postgres_hba_conf`` in ``cloud_install.sh``). A ``Form`` holds all that differs: listener, socket
directory and who may log in how.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from tsbench.runtimes.definition import TuningValue, cloud_tuning


@dataclass(frozen=True)
class Form:
    """What differs where the server runs: ``listen`` (``listen_addresses``), ``port`` and ``sockets``
    (``unix_socket_directories``; empty or 0: the build's default), the socket logins' method
    ``local_auth`` and the TCP logins' ``host_auth`` from each network of ``networks``."""

    listen: str = ""
    port: int = 0
    sockets: str = ""
    local_auth: str = "trust"
    host_auth: str = "trust"
    networks: tuple[str, ...] = ()


# The image's defaults (its entrypoint writes pg_hba.conf: password logins over TCP); the cloud host:
# all interfaces at 5432 (its security group admits only the orchestrator), Debian's socket
# directory, peer logins on the socket and password logins over TCP (its script refuses to run
# without a password).
CONTAINER = Form()
CLOUD = Form("*", 5432, local_auth="peer", host_auth="scram-sha-256", networks=("0.0.0.0/0", "::/0"))


def server_conf(form: Form, tuning: Mapping[str, str]) -> dict[str, str]:
    """The server's settings, in order: ``form``'s listener and sockets, then ``tuning`` (the target's
    table on the machine the server runs on)."""
    places = {"listen_addresses": form.listen, "port": str(form.port) if form.port else ""}
    places["unix_socket_directories"] = form.sockets
    return {**{key: value for key, value in places.items() if value}, **tuning}


# What postgresql.conf reads unquoted: a number with an optional unit, or a word.
PLAIN = re.compile(r"\d+(\.\d+)?[A-Za-z]*|[A-Za-z][A-Za-z0-9_.]*")


def conf_value(value: str) -> str:
    """A value in ``postgresql.conf`` syntax: numbers and plain words as they are, the rest quoted
    (an address too; a ``$(scaled …)`` word expands to a number with a unit on the cloud host)."""
    if PLAIN.fullmatch(value) or value.startswith("$(scaled "):
        return value
    return "'" + value.replace("'", "''") + "'"


def conf_text(settings: Mapping[str, str], writer: str) -> str:
    """``settings`` as ``tsbench.conf`` (``writer``: who wrote it, for its first line)."""
    lines = [f"# written by tsbench ({writer}); see targets/postgres/README.md"]
    return "\n".join(lines + [f"{key} = {conf_value(value)}" for key, value in settings.items()]) + "\n"


def hba_lines(form: Form) -> list[tuple[str, ...]]:
    """``pg_hba.conf``'s records: every database and user on the socket, then from each network."""
    records = [("local", "all", "all", form.local_auth)]
    return records + [("host", "all", "all", network, form.host_auth) for network in form.networks]


def hba_text(form: Form) -> str:
    """``hba_lines`` as ``pg_hba.conf``."""
    lines = ["# written by tsbench from targets/postgres/config.py"]
    return "\n".join(lines + ["\t".join(record) for record in hba_lines(form)]) + "\n"


def cloud_files(tuning: Mapping[str, TuningValue]) -> dict[str, str]:
    """The cloud host's files for a definition with ``tuning`` (``Scaled`` rules as bash arithmetic)."""
    return {
        "postgres_conf": conf_text(server_conf(CLOUD, cloud_tuning(tuning)), "definition.py's cloud_files"),
        "postgres_hba_conf": hba_text(CLOUD),
    }
