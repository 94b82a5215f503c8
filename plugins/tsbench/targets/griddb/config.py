"""GridDB's configuration, declared once for the three places its node runs: ``node_config``
(``conf/gs_node.json``) and ``cluster_config`` (``conf/gs_cluster.json``). The local recipe writes
both (``server.py``), the container mounts ``gs_node.json`` (``container.py``; the image's entry
script writes ``gs_cluster.json`` from its variables) and the cloud host writes the files the AWS
runtime rendered from them (``definition.py``'s ``cloud_files``). A ``Form`` holds all that differs:
directories, service addresses and ports, the cluster member's address.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tsbench.runtimes.definition import Scaled, TuningValue

CLUSTER = "tsbench"  # cluster name of every tsbench GridDB server
# GridDB's default port of each service (transaction: clients; system: REST; cluster and sync:
# node-to-node; sql: JDBC/SQL).
PORTS = {"transaction": 10001, "system": 10040, "cluster": 10010, "sync": 10020, "sql": 20001}


@dataclass(frozen=True)
class Raw:
    """A value written into JSON as it is (a bash word the cloud host expands)."""

    text: str


@dataclass(frozen=True)
class Form:
    """What differs where the node runs: ``data`` (parent of ``data/`` and ``txnlog/``) and ``home``
    (``GS_HOME``: ``backup/``, ``sync/``, ``log/``, ``swap/``), both empty for paths relative to
    ``GS_HOME``; ``address`` of every service (empty: none stated, GridDB's default) and their
    ``ports``; ``member``, the fixed list's one address; ``transaction_tail``, text the cloud host
    appends to the transaction section (its optional public address)."""

    data: str = ""
    home: str = ""
    address: str = ""
    ports: Mapping[str, int] = field(default_factory=lambda: dict(PORTS))
    member: str = ""
    transaction_tail: str = ""


# The image's GS_HOME (relative paths, default ports); the cloud host: data on the data volume,
# GS_HOME and the VM's own address set by its install script.
CONTAINER = Form()
CLOUD = Form("$DATA_DIR", "$GS_HOME", member="$address", transaction_tail="$public_transaction")


def json_value(text: str) -> int | str:
    """A tuning value as ``gs_node.json`` takes it: whole numbers as numbers, the rest as strings."""
    return int(text) if re.fullmatch(r"-?[0-9]+", text) else text


def cloud_value(value: TuningValue) -> int | str | Raw:
    """A tuning value for the cloud host's file: ``Scaled`` rules as the host's bash arithmetic (a
    JSON string when the rule has a suffix, else a number)."""
    if isinstance(value, Scaled):
        return Raw(f'"{value.bash()}"' if value.suffix else value.bash())
    return json_value(value)


def by_section(tuning: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``<section>.<key>`` settings as ``gs_node.json`` sections (``dataStore.concurrency`` →
    ``{"dataStore": {"concurrency": …}}``)."""
    sections: dict[str, dict[str, Any]] = {}
    for key, value in tuning.items():
        section, name = key.split(".", 1)
        sections.setdefault(section, {})[name] = value
    return sections


def _path(base: str, name: str) -> str:
    return f"{base}/{name}" if base else name


def node_config(form: Form, tuning: Mapping[str, Any]) -> dict[str, Any]:
    """``gs_node.json``: ``tuning`` (``<section>.<key>``, values as JSON takes them) in its sections."""
    sections = by_section(tuning)
    address = {"serviceAddress": form.address} if form.address else {}
    service = {role: {**address, "servicePort": port} for role, port in form.ports.items()}
    service["system"]["eventLogPath"] = _path(form.home, "log")
    tail = form.transaction_tail
    service["transaction"]["connectionLimit"] = Raw(f"5000{tail}") if tail else 5000
    service["sql"]["storeSwapFilePath"] = _path(form.home, "swap")
    return {
        **sections,
        "dataStore": {
            "dbPath": _path(form.data, "data"),
            "transactionLogPath": _path(form.data, "txnlog"),
            "backupPath": _path(form.home, "backup"),
            "syncTempPath": _path(form.home, "sync"),
            **sections.get("dataStore", {}),
        },
        **service,
    }


def cluster_config(form: Form) -> dict[str, Any]:
    """``gs_cluster.json``: cluster ``CLUSTER`` with one fixed member, ``form.member``."""
    member = {role: {"address": form.member, "port": form.ports[role]} for role in PORTS}
    return {
        "dataStore": {"partitionNum": 128, "storeBlockSize": "64KB"},
        "cluster": {
            "clusterName": CLUSTER,
            "replicationNum": 1,
            "notificationMember": [member],
            "heartbeatInterval": "5s",
            "loadbalanceCheckInterval": "180s",
        },
        "sync": {"timeoutInterval": "30s"},
        "transaction": {"replicationMode": 0, "replicationTimeoutInterval": "10s"},
    }


def json_text(config: Mapping[str, Any]) -> str:
    """``config`` as JSON, ``Raw`` values written as they are."""
    raw: list[str] = []

    def mark(value: Any) -> Any:
        if isinstance(value, Raw):
            raw.append(value.text)
            return f"\0raw{len(raw) - 1}\0"
        if isinstance(value, dict):
            return {key: mark(item) for key, item in value.items()}
        return [mark(item) for item in value] if isinstance(value, list) else value

    text = json.dumps(mark(config), indent=2)
    for index, word in enumerate(raw):
        text = text.replace(json.dumps(f"\0raw{index}\0"), word)
    return text + "\n"
