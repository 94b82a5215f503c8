"""Dependencies a team can deploy: ``pyproject.toml`` declares them, ``requirements/`` locks them with
hashes (``scripts/lock.sh``), and the runtime lock an Airflow worker installs holds no test tool."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
TEST_TOOLS = {
    "pytest", "pytest-xdist", "pytest-timeout", "moto", "playwright", "cfn-lint", "mongomock", "ruff",
    "import-linter", "grimp", "mkdocs", "mkdocs-material", "chdb", "chdb-core",
}  # fmt: skip
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def _lock(group: str) -> dict[str, str]:
    """{canonical name: version} of ``requirements/<group>.txt``; every pin exact and hashed."""
    text = (ROOT / "requirements" / f"{group}.txt").read_text()
    pins: dict[str, str] = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 2)[2]):
        match = PIN.match(block)
        assert match, f"{group}.txt: not an exact pin: {block.splitlines()[0]!r}"
        assert "--hash=sha256:" in block, f"{group}.txt: {match[1]} has no hash"
        pins[canonicalize_name(match[1])] = match[2]
    return pins


def test_the_runtime_lock_holds_no_test_tool() -> None:
    runtime, dev = _lock("runtime"), _lock("dev")
    assert not TEST_TOOLS & runtime.keys()
    assert dev.keys() >= TEST_TOOLS


def test_the_runtime_pins_are_the_dev_locks() -> None:
    """The tests run exactly the versions a worker runs."""
    runtime, dev = _lock("runtime"), _lock("dev")
    assert {name: dev.get(name) for name in runtime} == runtime


@pytest.mark.parametrize("group", ["runtime", "dev"])
def test_every_declared_dependency_is_locked_at_a_version_it_allows(group: str) -> None:
    declared = list(PYPROJECT["project"]["dependencies"])
    if group == "dev":
        declared += PYPROJECT["dependency-groups"]["dev"]
    lock = _lock(group)
    for requirement in map(Requirement, declared):
        name = canonicalize_name(requirement.name)
        assert name in lock, f"{requirement} is not in requirements/{group}.txt: run scripts/lock.sh"
        assert requirement.specifier.contains(lock[name]), f"{requirement}: locked {lock[name]}"


def test_every_targets_client_library_is_a_runtime_dependency() -> None:
    """A database is one folder plus its client library, declared in pyproject's dependencies (so
    the runtime lock has it): every target's ``client_packages`` and the core's."""
    from tsbench.machine import client_packages

    declared = {canonicalize_name(Requirement(r).name) for r in PYPROJECT["project"]["dependencies"]}
    missing = {canonicalize_name(p) for p in client_packages()} - declared
    assert not missing, f"not in pyproject.toml's [project] dependencies: {sorted(missing)}"


def _compile(tmp: Path, group: str, offline: bool) -> subprocess.CompletedProcess[str]:
    """``scripts/lock.sh``'s compile of one lock into ``tmp`` (the committed lock as preferences)."""
    uv = Path(sys.executable).with_name("uv")
    out = tmp / f"{group}.txt"
    shutil.copy(ROOT / "requirements" / f"{group}.txt", out)
    extra = ["--group", "dev"] if group == "dev" else ["-c", "requirements/dev.txt"]
    command = [str(uv), "pip", "compile", "-q", "pyproject.toml", "--python-version", "3.11.7"]
    command += ["--generate-hashes", "--override", "requirements/overrides.txt"]
    command += ["--custom-compile-command", "bash scripts/lock.sh", *extra]
    command += ["-o", str(out), *(["--offline"] if offline else [])]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("group", ["runtime", "dev"])
def test_the_lock_is_what_lock_sh_writes_from_pyproject(group: str, tmp_path: Path) -> None:
    """Re-resolving pyproject.toml (uv's cache first; PyPI when the cache lacks something) gives the
    committed lock byte for byte: no dependency added, dropped or re-pinned without the lock."""
    lock = (ROOT / "requirements" / f"{group}.txt").read_text()
    assert "--custom-compile-command" not in lock and "bash scripts/lock.sh" in lock.splitlines()[1]
    done = _compile(tmp_path, group, offline=True)
    if done.returncode != 0:
        done = _compile(tmp_path, group, offline=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / f"{group}.txt").read_text() == lock, f"requirements/{group}.txt is stale"
