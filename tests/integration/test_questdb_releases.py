"""Releases as an axis on real servers: a run with ``versions`` starts the pinned QuestDB and an older
release side by side (each its own branch, the older jar installed by the folder's recipe), loads
both and checks every answer of both against the oracle; the result and the report name both
versions. The declared releases are checked against Maven Central's listing."""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from release_runs import ReleaseRun, check_both_branches, run_with_release

from tsbench.targets.questdb.definition import DEFINITION, RELEASES

pytestmark = pytest.mark.integration
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


@pytest.fixture(scope="module")
def release_run(tmp_path_factory: pytest.TempPathFactory, dataset_cache: Path) -> ReleaseRun:
    """The older jar installed by the recipe (cached after its first download, ~30 MB), then a run of
    both at scale 10 × 12 h (``release_runs.run_with_release``)."""
    return run_with_release(tmp_path_factory.mktemp("releases"), dataset_cache, "questdb", OLDER)


def test_both_releases_load_and_answer_every_query_right(release_run: ReleaseRun) -> None:
    """Two branches, one per release: every row loaded, all 20 query types cold and hot with every
    answer agreeing with the oracle; each records the version its server reported."""
    targets = check_both_branches(release_run, {"questdb": DEFINITION.version, INSTANCE: OLDER})
    for name, version in (("questdb", DEFINITION.version), (INSTANCE, OLDER)):
        assert targets[name]["provision"]["server_binary"] == version
    assert "wal.apply.worker.count=" in targets[INSTANCE]["provision"]["config"]
    assert (release_run.folder / "scale-10" / "targets" / INSTANCE / "provision.json").is_file()


def test_the_report_names_both_versions(release_run: ReleaseRun) -> None:
    assert release_run.result.returncode == 0, release_run.result.stderr[-3000:]
    html = (release_run.folder / "report" / "report.html").read_text()
    assert f"QuestDB {DEFINITION.version}" in html and f"QuestDB {OLDER}" in html
    assert (
        f"{INSTANCE}: " in release_run.result.stdout
        and "answers agree with the oracle" in release_run.result.stdout
    )
