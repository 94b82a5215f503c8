"""InfluxDB 1.x's configuration, declared once (``influxdb_config``) for the three places its server
runs: the local recipe writes it as ``influxdb.conf`` (``toml_text``), the 1.8 container receives it
as ``INFLUXDB_<SECTION>_<KEY>`` variables (``v1_environment``) and the cloud host writes the file the
AWS runtime rendered from it (``definition.py``'s ``cloud_files``). A ``Form`` holds all that differs:
directories and listeners; the tuning table is ``definition.py``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tsbench.runtimes.definition import Scaled, TuningValue


@dataclass(frozen=True)
class Raw:
    """A value written into TOML as it is (a bash arithmetic word the cloud host expands)."""

    text: str


@dataclass(frozen=True)
class Form:
    """What differs where the server runs: its ``meta``, ``data`` and ``wal`` directories and the HTTP
    and backup-RPC listeners. HTTP asks who is calling everywhere (``auth-enabled``: the admin
    ``auth.USER``, whom each runtime creates with its own password)."""

    meta: str
    data: str
    wal: str
    http: str
    rpc: str


# The image's own directories (``/var/lib/influxdb``) and listeners on all of the container's interfaces.
CONTAINER = Form(
    "/var/lib/influxdb/meta", "/var/lib/influxdb/data", "/var/lib/influxdb/wal", ":8086", ":8088"
)
# The cloud host: DATA_DIR, set by its first-boot script, expanded there.
CLOUD = Form("$DATA_DIR/meta", "$DATA_DIR/data", "$DATA_DIR/wal", ":8086", ":8088")


def toml_value(text: str) -> int | str:
    """A tuning value as the configuration types it: digits are integers, the rest strings."""
    return int(text) if text.isdigit() else text


def cloud_value(value: TuningValue) -> int | str | Raw:
    """A tuning value for the cloud host's file: ``Scaled`` rules as the host's bash arithmetic."""
    if isinstance(value, Scaled):
        return value.bash() if value.suffix else Raw(value.bash())
    return toml_value(value)


def influxdb_config(
    form: Form, tuning: Mapping[str, Any], *, http_auth: bool = True
) -> dict[str, dict[str, Any]]:
    """The configuration by section (``""``: top-level keys), ``tuning`` in ``[data]``. Every runtime
    keeps ``http_auth``; only a bench server for tools that cannot log in goes without."""
    return {
        "": {"reporting-disabled": True, "bind-address": form.rpc},
        "meta": {"dir": form.meta, "logging-enabled": False},
        "data": {"dir": form.data, "wal-dir": form.wal, "query-log-enabled": False, **tuning},
        "coordinator": {"write-timeout": "60s"},
        "retention": {"enabled": False},
        "shard-precreation": {"enabled": False},
        "monitor": {"store-enabled": False},
        "subscriber": {"enabled": False},
        "continuous_queries": {"enabled": False},
        "http": {
            "enabled": True,
            "bind-address": form.http,
            "auth-enabled": http_auth,
            "log-enabled": False,
            "pprof-enabled": False,
            "max-row-limit": 0,
            "max-body-size": 0,
        },
        "logging": {"level": "warn", "suppress-logo": True},
    }


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Raw):
        return value.text
    return f'"{value}"'


def toml_text(config: Mapping[str, Mapping[str, Any]]) -> str:
    """``config`` as ``influxdb.conf``."""
    lines = ["# written by tsbench from targets/influxdb/config.py (tuning: definition.py)"]
    for section, keys in config.items():
        if section:
            lines += ["", f"[{section}]"]
        lines += [f"{'  ' if section else ''}{key} = {_toml(value)}" for key, value in keys.items()]
    return "\n".join(lines) + "\n"


def v1_variable(section: str, key: str) -> str:
    """The variable InfluxDB 1.x reads for ``key`` of ``[section]`` (top-level keys: section ``""``)."""
    parts = ("INFLUXDB", section, key)
    return "_".join(p.upper().replace("-", "_") for p in parts if p)


def v1_environment(config: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """``config`` as the variables 1.x reads over its configuration file."""
    return {
        v1_variable(section, key): ("true" if value else "false") if isinstance(value, bool) else str(value)
        for section, keys in config.items()
        for key, value in keys.items()
    }
