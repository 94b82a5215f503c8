"""Releases as an axis on real servers: a run with ``versions`` starts the pinned QuestDB and an older
release side by side (each its own branch, the older jar installed by the folder's recipe), loads
both and checks every answer of both against the oracle; the result and the report name both
versions. The declared releases are checked against Maven Central's listing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from tsbench.results.files import read_json
from tsbench.targets.questdb.definition import DEFINITION, RELEASES
from tsbench.targets.registry import load_target

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
OLDER = "9.2.3"
INSTANCE = f"questdb@{OLDER}"
CENTRAL = "https://repo1.maven.org/maven2/org/questdb/questdb/maven-metadata.xml"


def test_the_declared_releases_are_on_maven_central() -> None:
    """Every release ``definition.py`` declares (and the pin) is a version Central serves."""
    try:
        with urllib.request.urlopen(CENTRAL, timeout=30) as response:
            listing = response.read().decode()
    except urllib.error.URLError as error:
        pytest.skip(f"Maven Central unreachable: {error}")
    served = set(re.findall(r"<version>([^<]+)</version>", listing))
    assert {DEFINITION.version, *RELEASES} <= served, sorted({DEFINITION.version, *RELEASES} - served)
    assert list(RELEASES) == sorted(RELEASES, key=lambda v: tuple(map(int, v.split("."))), reverse=True)


@dataclass(frozen=True)
class ReleaseRun:
    result: subprocess.CompletedProcess[str]
    folder: Path
    state: Path


@pytest.fixture(scope="module")
def release_run(tmp_path_factory: pytest.TempPathFactory, dataset_cache: Path) -> ReleaseRun:
    """The older jar installed by the recipe (cached after its first download, ~30 MB), then
    ``tsbench run --targets questdb --versions {"questdb": ["9.2.3"]}`` at scale 10 × 12 h."""
    load_target(INSTANCE).server_recipe()(Path("/nonexistent"), {}).install()
    tmp = tmp_path_factory.mktemp("releases")
    out, state = tmp / "out", Path("/var/tmp/tsbench-tests") / tmp.name
    run = ["run", "--targets", "questdb", "--versions", f'{{"questdb": ["{OLDER}"]}}', "--scales", "10"]
    run += ["--duration", "12h", "--queries-per-type", "2", "--hot-runs", "1", "--run-id", "releases"]
    run += ["--results-dir", str(out / "runs"), "--cache-dir", str(dataset_cache), "--state-dir", str(state)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    result = subprocess.run([sys.executable, "-m", "tsbench", *run], capture_output=True, text=True, env=env)
    return ReleaseRun(result, out / "runs" / "releases", state)


def test_both_releases_load_and_answer_every_query_right(release_run: ReleaseRun) -> None:
    """Two branches, one per release: every row loaded, all 20 query types cold and hot with every
    answer agreeing with the oracle; each records the version its server reported."""
    result = release_run.result
    assert result.returncode == 0, result.stderr[-3000:]
    comparison = read_json(release_run.folder / "comparison.json")
    assert comparison["failed_targets"] == [] and comparison["targets"] == ["questdb", INSTANCE]
    targets = comparison["results"]["10"]["targets"]
    assert list(targets) == ["questdb", INSTANCE]
    for name, version in (("questdb", DEFINITION.version), (INSTANCE, OLDER)):
        body = targets[name]
        assert body["status"] == "ok", body.get("error")
        assert body["provision"]["version"] == version and body["provision"]["server_binary"] == version
        assert body["load"]["row_count_ok"] and body["load"]["trials"][0]["rows"] == 43_200
        checks = body["queries"]["answer_checks"]
        assert checks["mismatches"] == 0 and checks["agreed"] == checks["checked"] > 0
        assert len(body["queries"]["cold"]) == len(body["queries"]["hot"]) == 20
        assert body["cache_reset"]["restarted"]
    assert "wal.apply.worker.count=" in targets[INSTANCE]["provision"]["config"]
    assert (release_run.folder / "scale-10" / "targets" / INSTANCE / "provision.json").is_file()
    assert not list(release_run.state.glob("releases-*")), "a server instance was left behind"


def test_the_report_names_both_versions(release_run: ReleaseRun) -> None:
    assert release_run.result.returncode == 0, release_run.result.stderr[-3000:]
    html = (release_run.folder / "report" / "report.html").read_text()
    assert f"QuestDB {DEFINITION.version}" in html and f"QuestDB {OLDER}" in html
    assert (
        f"{INSTANCE}: " in release_run.result.stdout
        and "answers agree with the oracle" in release_run.result.stdout
    )
