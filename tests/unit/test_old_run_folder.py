"""A run folder written before the run had one owner (tests/data/run_before_issue43: a real iot
load-only comparison of 2026-12-01, its answers and validation documents left out) stays readable:
every file parses as its typed record, collecting it again gives the same targets, and the report
renders from it."""

from __future__ import annotations

import shutil
from pathlib import Path

from tsbench.report.render import read_inputs, render_document, study_of
from tsbench.results.folder import RunFolder
from tsbench.results.model import LeaseTaken, LoadPhase, Prepare, Provision
from tsbench.run.collect import collect
from tsbench.spec import RunSpec

OLD = Path(__file__).resolve().parents[1] / "data" / "run_before_issue43"


def test_every_file_of_an_old_run_folder_reads_as_its_record() -> None:
    run = RunFolder(OLD)
    plan, comparison = run.read_plan(), run.read_comparison()
    (point,) = [run.point(p.name) for p in plan.points]
    facts = point.read_run()
    assert facts.dataset.rows_total and facts.machine.cores and plan.targets == comparison.targets
    assert RunSpec.recorded(facts.spec).runtime == "local"
    for name in plan.targets:
        folder = point.target(name)
        assert folder.read(LeaseTaken).lease is None  # this machine's lease
        assert folder.read(Provision).version and folder.read(Prepare).seconds is not None
        assert folder.read(LoadPhase).row_count_ok


def test_collecting_an_old_run_again_gives_the_same_targets(tmp_path: Path) -> None:
    copy = tmp_path / OLD.name
    shutil.copytree(OLD, copy)
    point = RunFolder(copy).point("scale-20")
    before = point.read_result()
    after = collect(point.path)
    assert after.to_json()["targets"] == before.to_json()["targets"]


def test_the_report_renders_from_an_old_run_folder() -> None:
    html = render_document(read_inputs(OLD), [], study_of(OLD))
    assert "questdb" in html.lower() and "load-only" in html.lower()
