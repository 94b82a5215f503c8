"""A server's configuration is written once: InfluxDB's local file, the 1.8 container's variables and
the file the cloud host writes come from ``targets/influxdb/config.py``. Each form is produced as its
runtime produces it (the recipe's file; the container spec; the rendered install script run by bash)
and parsed, so a setting added to one form only fails here."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from pathlib import Path
from typing import Any

from tsbench.runtimes.cloud_install import render_install_script
from tsbench.runtimes.definition import Machine
from tsbench.targets.influxdb.config import v1_variable
from tsbench.targets.influxdb.container import CONTAINERS
from tsbench.targets.influxdb.definition import DEFINITION
from tsbench.targets.influxdb.server import InfluxDBServer

TARGETS = Path(__file__).resolve().parents[2] / "plugins" / "tsbench" / "targets"
# Where the server runs decides these (directories, listeners) and the build names its reporting key.
PLACES = {"meta.dir", "data.dir", "data.wal-dir", "bind-address", "http.bind-address"}
REPORTING = {"reporting-enabled", "reporting-disabled"}


def _flat(body: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in body.items():
        out.update(_flat(value, f"{prefix}{key}.") if isinstance(value, dict) else {prefix + key: value})
    return out


def _cloud_file(function: str, data_dir: str) -> str:
    """What ``function`` of the rendered install script prints on a host like this one."""
    script = render_install_script(DEFINITION)
    header = script[: script.index("# --- runtimes/cloud_lib.sh ---")]
    machine = Machine.this_host()
    env = {
        "PATH": os.environ["PATH"],
        "DATA_DIR": data_dir,
        "TSBENCH_CORES": str(machine.cores),
        "TSBENCH_MEMORY_MIB": str(machine.memory_mib),
    }
    done = subprocess.run(["bash", "-c", f"{header}\n{function}"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_influxdb_local_and_cloud_files_hold_the_same_settings(tmp_path: Path) -> None:
    recipe = InfluxDBServer(tmp_path, {"http": 18086, "rpc": 18088})
    local = _flat(tomllib.loads(recipe.config_text()))
    cloud = _flat(tomllib.loads(_cloud_file("influxdb_conf", "/data/db")))
    assert local.keys() - REPORTING == cloud.keys() - REPORTING
    differ = {key for key in local.keys() & cloud.keys() if local[key] != cloud[key]}
    assert differ == PLACES, differ
    assert (local["reporting-enabled"], cloud["reporting-disabled"]) == (False, True)  # each build's key
    assert cloud["data.wal-dir"] == "/data/db/wal" and cloud["http.bind-address"] == ":8086"
    for key, value in DEFINITION.settings().items():
        assert local[f"data.{key}"] == cloud[f"data.{key}"] == (int(value) if value.isdigit() else value)


def test_influxdb_container_variables_hold_the_local_settings(tmp_path: Path) -> None:
    local = tomllib.loads(InfluxDBServer(tmp_path, {"http": 1, "rpc": 2}).config_text())
    variables = {
        v1_variable("" if "." not in key else key.split(".")[0], key.split(".")[-1]): value
        for key, value in _flat(local).items()
        if key not in PLACES | REPORTING
    }
    environment = CONTAINERS["1.8"].environment
    given = {name for name in environment if name.startswith("INFLUXDB_")}
    places = {v1_variable(*key.split(".")) if "." in key else v1_variable("", key) for key in PLACES}
    assert given - places - {"INFLUXDB_REPORTING_DISABLED"} == variables.keys()
    for name, value in variables.items():
        expected = ("true" if value else "false") if isinstance(value, bool) else str(value)
        assert environment[name] == expected, name


def test_the_cloud_script_writes_the_configuration_only_through_the_rendered_file() -> None:
    script = (TARGETS / "influxdb" / "cloud_install.sh").read_text()
    writes = re.findall(r'^.*>>?\s*"\$CONFIG[^"]*".*$', script, re.MULTILINE)
    assert writes == ['influxdb_conf >"$CONFIG.tmp"'], writes
    assert "tsbench_settings" not in script.split("set -euo pipefail", 1)[1]  # no table restated
