"""The shell scripts a cloud VM runs: each target's install script — as the AWS runtime renders it from
the target's ``definition.py`` and ``cloud_install.sh`` (``runtimes/cloud_install.py``) — and the
benchmark host's first-boot script. They need root, systemd and the internet on a fresh Debian 12 VM,
so here they are checked statically: ``bash -n``, shellcheck, and the contract every install script
promises (strict mode, DATA_DIR, the ``tsbench-db.service`` unit, a pinned version)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tsbench.runtimes.cloud_install import render_install_script
from tsbench.runtimes.definition import load_definition

REPO = Path(__file__).resolve().parents[2]
TARGETS = REPO / "plugins" / "tsbench" / "targets"
INSTALL_SCRIPTS = sorted(TARGETS.glob("*/cloud_install.sh"))
BOOTSTRAP = REPO / "infra" / "modules" / "benchmark_host" / "files" / "bootstrap.sh"
SCRIPTS = [*INSTALL_SCRIPTS, BOOTSTRAP]
# A pinned version, e.g. export QUESTDB_VERSION=9.3.4 (rendered from the target's definition.py),
# PG_MAJOR=15 or X_VERSION="${X_VERSION:-8.0.20}".
PIN = re.compile(r'^(export )?[A-Z_]*(VERSION|MAJOR)="?(\$\{[A-Z_]+:-)?[0-9]+(\.[0-9]+)*\b', re.MULTILINE)


def script_id(path: Path) -> str:
    return str(path.relative_to(REPO))


def as_run(script: Path) -> str:
    """The text the host runs: rendered from the target's definition when it has one."""
    definition = load_definition(script.parent.name) if script in INSTALL_SCRIPTS else None
    return render_install_script(definition) if definition else script.read_text()


@pytest.fixture
def runnable(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """``script`` as the host runs it, in a file (shellcheck and bash read files)."""
    path = tmp_path / request.node.callspec.params["script"].name
    path.write_text(as_run(request.node.callspec.params["script"]))
    return path


def test_the_four_targets_have_a_cloud_install_script() -> None:
    assert {path.parent.name for path in INSTALL_SCRIPTS} >= {
        "questdb",
        "postgres",
        "timescaledb",
        "influxdb",
    }


@pytest.mark.parametrize("script", SCRIPTS, ids=script_id)
def test_script_parses(script: Path, runnable: Path) -> None:
    result = subprocess.run(["bash", "-n", str(runnable)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(
    shutil.which("shellcheck") is None, reason="shellcheck not installed (apt-get install shellcheck)"
)
@pytest.mark.parametrize("script", SCRIPTS, ids=script_id)
def test_shellcheck_finds_nothing(script: Path, runnable: Path) -> None:
    result = subprocess.run(
        ["shellcheck", "--shell=bash", "--severity=style", str(runnable)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("script", INSTALL_SCRIPTS, ids=script_id)
def test_install_script_contract(script: Path) -> None:
    text = as_run(script)
    assert text.startswith("#!/usr/bin/env bash\n")
    assert re.search(r"^set -E?euo pipefail$", text, re.MULTILINE), "strict mode"
    assert "DATA_DIR" in text and "DB_PASSWORD" in text
    assert "/etc/systemd/system/tsbench-db.service" in text
    assert re.search(r"systemctl enable\b.*(tsbench-db|\$UNIT|\$\{UNIT)", text), "the unit is enabled"
    assert "WantedBy=multi-user.target" in text
    assert PIN.search(text), "the server version is pinned in the script"
    assert not re.search(r"^\s*set -[a-zA-Z]*x", text, re.MULTILINE), "set -x would echo DB_PASSWORD"


def test_bootstrap_finds_the_volume_by_its_id_and_starts_the_agent_as_specified() -> None:
    text = BOOTSTRAP.read_text()
    assert "nvme-Amazon_Elastic_Block_Store_" in text and "lsblk" in text
    assert (
        "python3 /opt/tsbench/node_agent.py --port $TSBENCH_AGENT_PORT --token-file /etc/tsbench/agent.token"
        " --unit tsbench-db.service --data-dir $TSBENCH_DB_DIR"
    ) in text
    assert "tsbench-node-agent.service" in text


@pytest.mark.parametrize(
    ("target", "package", "licence"),
    [
        ("timescaledb", "timescaledb-2-oss-postgresql-15", False),
        ("timescaledb_tsl", "timescaledb-2-postgresql-15", True),
    ],
)
def test_each_timescaledb_edition_installs_its_own_package(target: str, package: str, licence: bool) -> None:
    """The cloud host gets the edition the local runtime runs: the Apache-2 target the -oss package
    and no licence setting, the full edition's target the full package with licence 'timescale'."""
    definition = load_definition(target)
    assert definition is not None
    rendered = render_install_script(definition)
    assert ("timescaledb.license timescale" in rendered) == licence  # the settings table's row
    # The package the hooks choose, from the edition rendered into the header.
    edition = definition.install_environment()["TIMESCALEDB_EDITION"]
    hooks = TARGETS / "timescaledb" / "cloud_install.sh"
    probe = f'die() {{ echo "died: $*"; exit 1; }}; source {hooks}; echo "$extension_pkg"'
    env = {"PATH": "/usr/bin:/bin", "TIMESCALEDB_VERSION": "2.19.3", "PG_MAJOR": "15"}
    chosen = subprocess.run(
        ["bash", "-c", probe],
        env={**env, "TIMESCALEDB_EDITION": edition},
        text=True,
        capture_output=True,
        check=True,
    ).stdout.strip()
    assert chosen == package
    refused = subprocess.run(
        ["bash", "-c", probe],
        env={**env, "TIMESCALEDB_EDITION": "enterprise"},
        text=True,
        capture_output=True,
    )
    assert refused.returncode == 1 and "must be apache or tsl" in refused.stdout
