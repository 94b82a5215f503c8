"""The notice of a run's end (``tsbench.notify``), built from small run folders written with the
result records: outcome, failed phase and reason, key figures, changes, redaction, and the run
folder found in the run store by its run's suffix."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from tsbench.notify.message import Notice, compose
from tsbench.notify.redact import Redactor, secret_values
from tsbench.notify.summary import Outcome, RunEnd, summarize
from tsbench.results.change_records import ChangeRecord, ChangeReport, Difference, RunRef
from tsbench.results.files import write_bytes_atomic
from tsbench.results.folder import RunFolder
from tsbench.results.model import (
    Comparison,
    LoadPhase,
    QueriesPhase,
    QueryStats,
    Rejection,
    RunResult,
    TargetResult,
    Validation,
)
from tsbench.results.workspace import find_run_folder, run_folder_name

SECRET = "s3cr3t-Pa55word"
END = RunEnd("tsbench_nightly", "scheduled__2026-11-24T02:30:00+00:00", succeeded=True)
FAILED_END = RunEnd(
    "tsbench_nightly", END.run_id, succeeded=False, failed_task="verdict", reason="task_failure"
)


def _ok(rows_per_s: float, p50_ms: float) -> TargetResult:
    hot = {"cpu-max-all-1": QueryStats(count=10, errors=0, mismatches=0, p50_ms=p50_ms, qps=100.0)}
    return TargetResult(
        status="ok",
        load=LoadPhase(median_rows_per_s=rows_per_s, row_count_ok=True),
        queries=QueriesPhase(hot=hot),
    )


def _run(root: Path, targets: dict[str, TargetResult], passed: bool = True, pdf: bool = True) -> RunFolder:
    folder = RunFolder(root / "20261124T023000Z-abc123")
    result = RunResult(run_id=folder.name, spec={"scale": 100}, targets=targets)
    failed = [name for name, body in targets.items() if body.status != "ok"]
    folder.path.mkdir(parents=True)
    folder.write_comparison(Comparison(run_id=folder.name, failed_targets=failed, results={"100": result}))
    critical = [] if passed else ["queries: expect_answers_to_agree"]
    folder.write_validation(Validation(success=passed, critical_failed=critical).to_json())
    if pdf:
        write_bytes_atomic(folder.report_pdf, b"%PDF-1.7 test")
    return folder


def _notice(folder: RunFolder | None, end: RunEnd = END) -> Notice:
    redact = Redactor.of([SECRET])
    return compose(summarize(folder, end, redact, "s3://runs/x/report/report.pdf"), redact)


def _everything(notice: Notice) -> str:
    return "\n".join([notice.subject, notice.text, notice.html, notice.chat])


def test_a_passing_run_gives_its_key_figures_the_report_and_says_change_detection_did_not_run(
    tmp_path: Path,
) -> None:
    folder = _run(tmp_path, {"questdb": _ok(617_254.0, 1.17), "postgres": _ok(413_041.0, 4.18)})
    notice = _notice(folder)
    assert notice.subject == "[tsbench] tsbench_nightly passed: 20261124T023000Z-abc123"
    assert notice.attachment == folder.report_pdf
    for text in (notice.text, notice.html, notice.chat):
        assert "617,254" in text and "413,041" in text and "1.17" in text and "4.18" in text
        assert "Validation:" in text or "Validation</strong>" in text
        assert "hange detection did not run" in text
        assert "s3://runs/x/report/report.pdf" in text
    assert "cpu-max-all-1" in notice.html and "<table" in notice.html


def test_a_failed_target_names_its_phase_and_reason_without_secrets_or_templates(tmp_path: Path) -> None:
    error = (
        f"TargetError: cannot connect to postgresql://bench:{SECRET}@10.0.0.5:5432/db "
        "(password=hunter2, token: tok-9f8e) {{ 7 * 7 }} {% raw %}"
    )
    failed = TargetResult(status="failed", failed_phase="load", error=error)
    folder = _run(tmp_path, {"questdb": _ok(600_000.0, 1.0), "postgres": failed}, passed=False)
    notice = _notice(folder, FAILED_END)
    assert summarize(folder, FAILED_END, Redactor()).outcome is Outcome.FAILED_TARGETS
    assert notice.subject.startswith(
        "[tsbench] tsbench_nightly failed targets: postgres at scale 100 failed in load"
    )
    everything = _everything(notice)
    assert SECRET not in everything and "hunter2" not in everything and "tok-9f8e" not in everything
    assert "postgresql://***@10.0.0.5:5432/db" in notice.text
    assert "{{ 7 * 7 }} {% raw %}" in notice.text and "{{ 7 * 7 }}" in notice.chat  # as the run wrote it
    assert "failed in <code>load</code>" in notice.html and "TargetError: cannot connect" in notice.html


def test_failed_validation_names_the_critical_expectations(tmp_path: Path) -> None:
    folder = _run(tmp_path, {"questdb": _ok(600_000.0, 1.0)}, passed=False)
    summary = summarize(folder, FAILED_END, Redactor())
    assert summary.outcome is Outcome.FAILED_VALIDATION and summary.validation == "failed"
    assert "queries: expect_answers_to_agree" in compose(summary, Redactor()).text


def test_a_rejected_run_names_the_task_and_every_bad_field(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "20261124T023000Z-abc123")
    reason = "invalid run parameters:\n  interval: must divide the duration\n  scales: must be positive"
    folder.write_rejection(Rejection(task="validate_params", reason=reason))
    end = RunEnd("tsbench_comparison", "manual__1", False, "validate_params", "task_failure")
    notice = _notice(folder, end)
    assert "run rejected" in notice.subject and "failed in validate_params" in notice.subject
    assert "interval: must divide the duration" in notice.text and "scales: must be positive" in notice.chat
    assert notice.attachment is None and "no report was made" in notice.text


def test_a_run_without_a_folder_names_the_failed_task(tmp_path: Path) -> None:
    end = RunEnd("tsbench_comparison", "manual__1", False, "dataset", "task_failure")
    notice = _notice(None, end)
    assert "the run failed in dataset" in notice.subject and notice.attachment is None


def test_recent_changes_are_listed(tmp_path: Path) -> None:
    folder = _run(tmp_path, {"questdb": _ok(500_000.0, 1.0)})
    change = ChangeRecord(
        target="questdb",
        metric="load rows/s",
        scale=100,
        before=RunRef(run_id="r1"),
        after=RunRef(run_id="r2"),
        runs_after=2,
        relative=-0.2,
        low=-0.25,
        high=-0.15,
        verdict="regression",
        differences=[Difference(what="questdb version", before="9.3.3", after="9.3.4")],
    )
    old = change.model_copy(update={"runs_after": 30, "target": "postgres"})
    folder.write_changes(ChangeReport(run_id=folder.name, runs=40, changes=[change, old]))
    notice = _notice(folder)
    for text in (notice.text, notice.html, notice.chat):
        assert "questdb load rows/s (scale 100): regression −20.0 % [−25.0, −15.0]" in text
        assert "9.3.3 → 9.3.4" in text and "postgres load rows/s" not in text
    assert "1 recent of 2 found" in notice.text


def test_redactor_masks_known_values_url_credentials_and_secret_assignments() -> None:
    redact = Redactor.of(["topsecret", "", None])
    text = redact("a topsecret b https://user:pw@host/x AWS_SECRET_ACCESS_KEY=abc api_key: 'xyz' ok")
    assert text == "a *** b https://***@host/x AWS_SECRET_ACCESS_KEY=*** api_key: '***' ok"
    assert secret_values({"TSBENCH_QUESTDB_PASSWORD": "p", "HOME": "/root", "SLACK_TOKEN": ""}) == ["p"]


@pytest.mark.parametrize("known", [True, False])
def test_the_run_folder_is_found_by_its_name_or_its_suffix(tmp_path: Path, known: bool) -> None:
    when = datetime(2026, 11, 24, 2, 30, tzinfo=UTC)
    run_id = "scheduled__2026-11-24T02:30:00+00:00"
    (tmp_path / run_folder_name(run_id, when)).mkdir()
    (tmp_path / run_folder_name("another run", when)).mkdir()
    found = find_run_folder(str(tmp_path), run_id, when if known else None)
    assert found == f"{tmp_path}/20261124T023000Z-{run_folder_name(run_id, when)[-6:]}"
    assert find_run_folder(str(tmp_path), "never ran") is None
    assert find_run_folder(str(tmp_path / "absent"), run_id) is None
