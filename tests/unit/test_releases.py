"""Releases as an axis: a run's ``versions`` runs other releases of a target as instances
``<target>@<version>`` (``tsbench.targets.releases``), declared in the target folder's definition,
checked before any work, kept apart by name everywhere and named by version in the report."""

from __future__ import annotations

import copy
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from unit.test_cli import tsbench
from unit.test_report import synthetic_result

from tsbench.changes.series import run_facts
from tsbench.report.sections.target_view import target_views
from tsbench.results.model import RunResult
from tsbench.runtimes.local import LocalRuntime, LocalServer
from tsbench.spec import RunSpec, SpecError
from tsbench.targets.questdb.config import known_to
from tsbench.targets.questdb.definition import DEFINITION, RELEASES
from tsbench.targets.questdb.server import QuestDBServer
from tsbench.targets.registry import load_target, target_colour, target_names, target_title
from tsbench.targets.releases import Releases, split_instance

ROOT = Path(__file__).resolve().parents[2]
OLDER = "9.2.3"
INSTANCE = f"questdb@{OLDER}"


def test_an_instance_is_its_folders_target_at_that_release() -> None:
    pinned, older = load_target("questdb"), load_target(INSTANCE)
    assert issubclass(older, pinned) and older is load_target(INSTANCE)
    assert (older.name, older.title) == (INSTANCE, f"QuestDB {OLDER}")
    assert older.capabilities == pinned.capabilities and pinned.name == "questdb"
    assert re.fullmatch(r"#[0-9A-F]{6}", older.colour) and older.colour != pinned.colour
    shades = {target_colour(f"questdb@{version}") for version in RELEASES}
    folders = {load_target(name).colour.upper() for name in target_names()}
    assert len(shades) == len(RELEASES) and not shades & folders
    assert (target_title(INSTANCE), target_colour(INSTANCE)) == (older.title, older.colour)
    assert INSTANCE not in target_names()  # the registry lists folders; instances are asked for by name


def test_the_release_reaches_the_install_recipe_and_its_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUESTDB_VERSION", "9.3.4")  # a local override of the pin never moves a release
    recipe = load_target(INSTANCE).server_recipe()
    assert issubclass(recipe, QuestDBServer) and recipe.definition.release == OLDER
    assert recipe.definition.install_environment()["QUESTDB_VERSION"] == OLDER
    server = recipe(Path("/nonexistent"), {"http": 1, "min": 2, "pg": 3, "ilp": 4})
    assert server.jar.name == f"questdb-{OLDER}.jar" and server.version() == OLDER
    assert QuestDBServer(Path("/x"), {}).jar.name == "questdb-9.3.4.jar"


def test_an_instances_state_names_its_release_for_a_later_attach(tmp_path: Path) -> None:
    recipe = load_target(INSTANCE).server_recipe()
    home = tmp_path / "run-scale-10-questdb@9.2.3"
    home.mkdir()
    LocalServer(home.name, home, recipe(home, {"http": 1, "min": 2, "pg": 3, "ilp": 4})).save()
    attached = LocalRuntime(tmp_path).attach(home.name)
    assert type(attached.recipe) is recipe and attached.recipe.definition.pinned_version() == OLDER


def test_an_older_release_gets_only_the_keys_it_reads() -> None:
    tuning = DEFINITION.settings()
    assert "shared.write.worker.count" not in known_to("9.0.1", tuning)
    assert known_to("9.0.2", tuning) == tuning == known_to("9.3.4", tuning)
    oldest = load_target("questdb@9.0.1").server_recipe()(
        Path("/x"), {"http": 1, "min": 2, "pg": 3, "ilp": 4}
    )
    assert "shared.write.worker.count" not in oldest.config_text()
    assert "wal.apply.worker.count=" in oldest.config_text()


def test_versions_add_an_instance_per_release_after_its_target() -> None:
    spec = RunSpec.parse(targets=["questdb", "postgres"], versions={"questdb": [OLDER, "9.1.1"]}, scale=10)
    assert spec.targets == ["questdb", INSTANCE, "questdb@9.1.1", "postgres"]
    assert RunSpec.parse(**spec.model_dump(mode="json")) == spec  # a recorded spec parses to itself
    direct = RunSpec.parse(targets=["postgres", INSTANCE], scale=10)  # an instance named directly
    assert direct.targets == ["postgres", INSTANCE] and direct.versions == {}


def test_releases_a_recipe_cannot_install_are_refused_naming_the_installable_ones() -> None:
    with pytest.raises(SpecError) as refused:
        RunSpec.parse(
            targets=["questdb", "postgres"],
            versions={"questdb": ["9.9.9", "9.3.4", OLDER], "postgres": ["16"], "influxdb": ["1.8.10"]},
            workers=0,
            scale=10,
        )
    problems = str(refused.value)
    assert "workers: Input should be greater than or equal to 1" in problems  # every field at once
    assert (
        f"versions.questdb: cannot install 9.9.9; installable: {', '.join(RELEASES)} (pinned: 9.3.4)"
        in problems
    )
    assert "versions.questdb: 9.3.4 is the pinned version, which target questdb runs already" in problems
    assert "versions.postgres: postgres's recipe installs only its pinned version 15.18" in problems
    assert "versions.influxdb: not one of the run's targets (questdb, postgres)" in problems
    with pytest.raises(SpecError, match=re.escape("targets: cannot install 9.9.9; installable: 9.3.2")):
        RunSpec.parse(targets=["questdb@9.9.9"], scale=10)


@pytest.mark.parametrize("runtime", ["docker", "aws"])
def test_releases_run_on_the_runtimes_their_definition_names(runtime: str) -> None:
    with pytest.raises(
        SpecError,
        match=f"versions.questdb: questdb's releases run side by side on runtime local, not {runtime}",
    ):
        RunSpec.parse(targets=["questdb"], versions={"questdb": [OLDER]}, runtime=runtime, scale=10)
    assert Releases.of(load_target("postgres")).others == ()


def test_the_cli_takes_versions_as_json_and_refuses_a_bad_one_before_any_work(tmp_path: Path) -> None:
    out = tmp_path / "out" / "runs"
    where = [
        "--results-dir",
        str(out),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--state-dir",
        str(tmp_path / "s"),
    ]
    result = tsbench("run", "--targets", "questdb", "--versions", '{"questdb": ["8.0.0"]}', *where)
    assert (
        result.returncode == 2
        and "versions.questdb: cannot install 8.0.0; installable: 9.3.2" in result.stderr
    )
    result = tsbench("run", "--targets", "questdb", "--versions", "questdb=9.2.3", *where)
    assert result.returncode == 2 and "argument --versions: not JSON" in result.stderr
    assert not out.exists()


def _run_with_a_release() -> RunResult:
    body = synthetic_result()
    body["targets"]["questdb"]["provision"]["version"] = "9.3.4"  # as QuestDB reports it
    older = copy.deepcopy(body["targets"]["questdb"])
    older["provision"]["version"] = OLDER
    body["targets"] = {"questdb": body["targets"]["questdb"], INSTANCE: older}
    body["spec"] = {**body["spec"], "targets": ["questdb", INSTANCE], "versions": {"questdb": [OLDER]}}
    return RunResult.from_json(body)


def test_the_report_and_the_change_series_name_each_release() -> None:
    run = _run_with_a_release()
    views = target_views(run.targets)
    assert [(v.name, v.label, v.version) for v in views] == [
        ("questdb", "QuestDB 9.3.4", "9.3.4"),
        (INSTANCE, f"QuestDB {OLDER}", OLDER),
    ]
    assert run_facts(run, INSTANCE).facts[f"{INSTANCE} version"] == OLDER
    assert run_facts(run, "questdb").facts["questdb version"] == "9.3.4"
    alone = target_views({"questdb": run.targets["questdb"]})
    assert alone[0].label == "QuestDB"  # no release beside it: the title alone
    assert split_instance(INSTANCE) == ("questdb", OLDER) and split_instance("questdb") == ("questdb", "")


def test_a_release_follows_its_folders_capabilities_in_the_runs_options() -> None:
    spec = RunSpec.parse(targets=["questdb"], versions={"questdb": [OLDER]}, rollup_after_load=True, scale=10)
    assert spec.targets == ["questdb", INSTANCE]
    with pytest.raises(SpecError) as refused:
        RunSpec.parse(targets=["postgres"], versions={"postgres": ["9.9"]}, rollup_after_load=True, scale=10)
    assert "rollup_after_load: none of the run's targets can build a rollup" in str(refused.value)
    assert "versions.postgres: postgres's recipe installs only its pinned version" in str(refused.value)


def test_the_install_entry_point_installs_a_declared_release_and_refuses_others() -> None:
    """``scripts/install.sh <target>@<release>`` reads its variables from ``python -m
    tsbench.runtimes.definition``: the release's version, an undeclared one refused naming the
    declared; ``--releases`` lists what CI builds in the background."""
    run = [sys.executable, "-m", "tsbench.runtimes.definition"]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins"), "QUESTDB_VERSION": "9.3.4"}
    listed = subprocess.run([*run, "--releases", "questdb"], capture_output=True, text=True, env=env)
    assert listed.stdout.split() == list(RELEASES)
    at = subprocess.run([*run, INSTANCE], capture_output=True, text=True, env=env, check=True)
    assert at.stdout == f"QUESTDB_VERSION={OLDER}\n"
    refused = subprocess.run([*run, "questdb@9.9.9"], capture_output=True, text=True, env=env)
    assert refused.returncode == 2 and "no release 9.9.9" in refused.stderr and OLDER in refused.stderr
