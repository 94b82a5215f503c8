"""One server definition per target (``targets/<name>/definition.py``): the local configuration, the
container's arguments and the cloud host's settings all carry the values of its one tuning table.

Each runtime's output is rendered for real and read back: the local recipe's configuration text, the
docker runtime's configuration of the default container (environment, command, files) and the
cloud install script's ``tsbench_settings`` run by bash on the same machine figures. Configuration
texts are read as ``key=value`` / ``key = value`` (conf, TOML, arguments), ``"key": value`` (JSON),
``key: value`` (YAML) and ``<key>value</key>`` (XML); a nested format names only the last parts of a
dotted table key (``dataStore.concurrency`` is ``"concurrency": 2`` inside ``"dataStore"``)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tsbench.runtimes.cloud_install import render_install_script
from tsbench.runtimes.container_spec import pick_container
from tsbench.runtimes.definition import Machine, Scaled, ServerDefinition, load_definition
from tsbench.runtimes.docker_arguments import config_text
from tsbench.targets.registry import load_target, target_names

DEFINED = [name for name in target_names() if load_definition(name) is not None]
MACHINES = [Machine.this_host(), Machine(cores=1, memory_mib=1500), Machine(cores=16, memory_mib=131072)]


def definition_of(name: str) -> ServerDefinition:
    found = load_definition(name)
    assert found is not None
    return found


def normalised(key: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")


# key=value, "key": value and key: value; or <key>value</key>
ASSIGNMENT = re.compile(
    r"\"?([A-Za-z_][\w.-]*)\"?[ \t]*[=:][ \t]*(\"[^\"]*\"|'[^']*'|[^\s,{}]+)"
    r"|<([A-Za-z_][\w.-]*)>([^<]*)</\3>"  # <key>value</key>
)


def assignments(text: str) -> list[tuple[str, str]]:
    """Every ``(name, value)`` assignment in ``text`` (lines and ``-c``-style words), names
    normalised (``QDB_WAL_APPLY_WORKER_COUNT``, ``wal.apply.worker.count`` → ``…wal_apply_worker_count``),
    values without quotes."""
    found = []
    for match in ASSIGNMENT.finditer(text):
        name, value = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
        found.append((normalised(name), value.strip("\"'")))
    return found


def names_key(name: str, key: str) -> bool:
    """``name`` (normalised, as found) stands for table key ``key``: the same, the key with a prefix
    (``QDB_…``), or the key's last parts (a nested format)."""
    key = normalised(key)
    return name == key or name.endswith("_" + key) or key.endswith("_" + name)


def carries(text: str, settings: dict[str, str]) -> dict[str, str]:
    """Settings ``text`` does not carry: (key, value) pairs missing or with another value."""
    given = assignments(text)
    missing = {}
    for key, value in settings.items():
        values = [found for name, found in given if names_key(name, key)]
        if value not in values:
            missing[key] = f"{value} (found {values})"
    return missing


def local_text(name: str, tmp_path: Path) -> str:
    recipe_type = load_target(name).server_recipe()
    recipe = recipe_type(tmp_path, {role: 10000 + i for i, role in enumerate(recipe_type.port_roles)})
    return recipe.config_text()


def docker_text(name: str) -> str:
    flavour, spec = pick_container(name)
    return config_text(spec, flavour)


def cloud_settings(definition: ServerDefinition, machine: Machine) -> tuple[dict[str, str], dict[str, str]]:
    """``tsbench_settings`` and the ``process_*`` variables of the rendered cloud script, run by bash
    with the machine's cores and memory (the header alone: nothing is installed)."""
    header = render_install_script(definition).split("# --- runtimes/cloud_lib.sh ---")[0]
    probe = (
        'tsbench_settings\necho ---\nfor name in "${!process_@}"; do\n'
        '    printf "%s\\t%s\\n" "${name#process_}" "${!name}"\ndone'
    )
    machine_env = {"TSBENCH_CORES": str(machine.cores), "TSBENCH_MEMORY_MIB": str(machine.memory_mib)}
    result = subprocess.run(
        ["bash", "-c", header + "\n" + probe],
        capture_output=True,
        text=True,
        check=True,
        env={**machine_env, "PATH": "/usr/bin:/bin"},
    )
    settings, process = result.stdout.split("---\n")
    return table_lines(settings), table_lines(process)


def table_lines(text: str) -> dict[str, str]:
    return dict(line.split("\t", 1) for line in text.splitlines())


def test_every_target_has_a_definition() -> None:
    assert set(DEFINED) == set(target_names()) >= {"questdb", "clickhouse", "griddb", "mongodb_naive"}


def test_the_reading_of_configuration_texts_is_not_vacuous() -> None:
    settings = {"dataStore.concurrency": "2", "logger.level": "warning", "wal.apply.worker.count": "1"}
    text = '{"dataStore": {"concurrency": 2}}\n<logger><level>warning</level></logger>\n'
    text += "QDB_WAL_APPLY_WORKER_COUNT=1"
    assert carries(text, settings) == {}
    wrong = text.replace("warning", "trace").replace(": 2", ": 4").replace("=1", "=2")
    assert set(carries(wrong, settings)) == set(settings)
    assert set(carries("setParameter:\n  other: false\n", {"setParameter.x": "false"})) == {"setParameter.x"}


@pytest.mark.parametrize("name", DEFINED)
@pytest.mark.parametrize("machine", MACHINES, ids=lambda m: f"{m.cores}c-{m.memory_mib}MiB")
def test_cloud_settings_are_the_table_on_that_machine(name: str, machine: Machine) -> None:
    definition = definition_of(name)
    settings, process = cloud_settings(definition, machine)
    assert settings == definition.settings(machine)
    assert list(settings) == list(definition.tuning), "in table order"
    assert process == definition.process_settings(machine)


@pytest.mark.parametrize("name", DEFINED)
def test_local_docker_and_cloud_carry_the_same_tuning(name: str, tmp_path: Path) -> None:
    definition = definition_of(name)
    here = Machine.this_host()
    settings = definition.settings(here)
    assert carries(local_text(name, tmp_path), settings) == {}, "local configuration"
    assert carries(docker_text(name), settings) == {}, "docker container"
    assert cloud_settings(definition, here)[0] == settings, "cloud host"
    body = "".join(path.read_text() for path in definition.cloud_scripts)
    if definition.tuning:  # as the header prints it, or in a file rendered from the table (cloud_files)
        writers = ["tsbench_settings", *definition.cloud_files]
        assert any(writer in body for writer in writers), "the cloud script writes the table"
    for key in definition.process:
        assert f"$process_{key}" in body or f"${{process_{key}}}" in body, f"the cloud script uses {key}"


@pytest.mark.parametrize("name", DEFINED)
def test_scaled_values_follow_the_machine(name: str) -> None:
    definition = definition_of(name)
    tables = {**definition.tuning, **definition.process}
    for key, rule in tables.items():
        if isinstance(rule, Scaled):
            small, large = (rule.amount(machine) for machine in MACHINES[1:])
            assert rule.minimum // rule.scale_by <= small <= large <= rule.maximum // rule.scale_by, key


@pytest.mark.parametrize("name", DEFINED)
def test_version_is_the_one_pin(name: str) -> None:
    definition = definition_of(name)
    _, spec = pick_container(name)
    assert definition.version in spec.image, "the default image is the definition's version"
    rendered = render_install_script(definition)
    assert f"\nexport {definition.version_variable}={definition.version}\n" in rendered
    for path in (*definition.cloud_scripts, definition.install_path):
        assert definition.version not in path.read_text(), f"{path.name} restates the version"
