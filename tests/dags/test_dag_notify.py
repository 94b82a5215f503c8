"""The report delivered, end to end: ``dag.test()`` of the comparison DAG (PostgreSQL at the smallest
size, S3 publication on a real MinIO) with a real SMTP server and a real webhook receiver. A passing
run e-mails the published PDF with its key figures and posts one chat message; a failing run's
messages name the failed phase and its reason; no secret appears in any message or log; without a
notification connection the run logs one line and still succeeds."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

import pytest
from integration.dag_runs import TINY, only_run

from tsbench.report import fmt
from tsbench.results.folder import RunFolder

if TYPE_CHECKING:
    from integration.receivers import SmtpInbox, WebhookInbox

pytest_plugins = ("integration.minio", "integration.dag_runs", "integration.receivers")
pytestmark = [
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS"),
]
POSTGRES = {**TINY, "targets": ["postgres"]}
CI_TOKEN = "ci-token-0b5e77"  # in the URL of the lease holder that a failing run's reason quotes


@pytest.fixture
def receivers(
    pipeline_env: dict, smtp_inbox: SmtpInbox, webhook_inbox: WebhookInbox, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    """Both notification connections, to the test's SMTP server and webhook receiver."""
    monkeypatch.setenv("AIRFLOW_CONN_TSBENCH_SMTP", json.dumps(smtp_inbox.connection()))
    monkeypatch.setenv("AIRFLOW_CONN_TSBENCH_SLACK", json.dumps(webhook_inbox.connection()))
    return {"smtp": smtp_inbox, "chat": webhook_inbox, **pipeline_env}


def _assert_no_secret(receivers: dict[str, Any], minio_secret: str, logs: str, caplog: Any) -> None:
    """No configured secret (SMTP password, webhook URL, S3 secret key) in any message (headers,
    bodies, attachments and their names) nor in any log; no credentials of a run's error text
    (``CI_TOKEN``) in a message or a line the notifier logged (the lease's own task logs its holder
    as it is: a holder names a run, never credentials, but for this test's)."""
    sent = b"".join([*receivers["smtp"].raw, *receivers["chat"].raw])
    notifier = "\n".join(
        r.getMessage() for r in caplog.records if r.name.startswith("tsbench.airflow.notify")
    )
    for secret in (receivers["smtp"].password, receivers["chat"].url.rsplit("/", 1)[-1], minio_secret):
        assert secret.encode() not in sent, f"a secret was sent: {secret[:4]}…"
        assert secret not in logs, f"a secret was logged: {secret[:4]}…"
    assert CI_TOKEN.encode() not in sent and CI_TOKEN not in notifier


def test_a_passing_run_mails_the_published_report_and_posts_one_message(
    dagbag, receivers: dict[str, Any], minio_server, caplog, capfd
) -> None:
    with caplog.at_level(logging.INFO):
        run = dagbag.get_dag("tsbench_comparison").test(run_conf=POSTGRES)
    assert run.state == "success"
    folder = RunFolder(only_run(receivers["out"]))
    (mail,) = receivers["smtp"].messages
    assert mail["Subject"] == f"[tsbench] tsbench_comparison passed: {folder.name}"
    (attachment,) = mail.iter_attachments()
    assert attachment.get_filename() == "report.pdf"
    pdf = attachment.get_content()
    assert pdf[:4] == b"%PDF" and pdf == folder.report_pdf.read_bytes()
    published = f"nightly/runs/{folder.name}/report/report.pdf"
    assert pdf == receivers["s3"].get_object(Bucket=receivers["bucket"], Key=published)["Body"].read()
    html = mail.get_body(("html",)).get_content()
    target = folder.read_comparison().results["10"].targets["postgres"]
    assert fmt.rate(target.load.median_rows_per_s) in html and "load rows/s" in html
    assert "Validation:</strong> passed" in html and "None recent (0 found in the history)." in html
    assert f"s3://{receivers['bucket']}/{published}" in html
    (chat,) = receivers["chat"].bodies
    assert folder.name in chat["text"] and fmt.rate(target.load.median_rows_per_s) in chat["text"]
    logs = caplog.text + "".join(capfd.readouterr())
    assert "e-mail notification sent" in logs and "chat notification sent" in logs
    _assert_no_secret(receivers, minio_server.secret_key, logs, caplog)


def test_a_failing_run_names_the_failed_phase_and_its_reason(
    dagbag, receivers: dict[str, Any], minio_server, monkeypatch: pytest.MonkeyPatch, caplog, capfd
) -> None:
    """The machine stays held by another comparison (its holder names a URL with a token): the
    branch fails in acquire_machine, and both messages say so, with the holder, token masked."""
    from tsbench.run.lease import MachineLease

    monkeypatch.setenv("TSBENCH_MACHINE_WAIT_S", "3")
    lease, holder = MachineLease(), f"another comparison @ https://ci:{CI_TOKEN}@ci.example.com/job/7"
    assert lease.try_acquire(holder)
    try:
        with caplog.at_level(logging.INFO):
            run = dagbag.get_dag("tsbench_comparison").test(run_conf=POSTGRES)
    finally:
        assert lease.release(holder)
    assert run.state == "failed"
    (mail,) = receivers["smtp"].messages
    assert "failed targets: postgres at 10 hosts failed in acquire_machine" in mail["Subject"]
    html = mail.get_body(("html",)).get_content()
    assert "failed in <code>acquire_machine</code>" in html and "MachineBusy" in html
    assert "https://***@ci.example.com/job/7" in html
    (attachment,) = mail.iter_attachments()  # the failed run's report is still attached
    assert attachment.get_content()[:4] == b"%PDF"
    (chat,) = receivers["chat"].bodies
    assert "`acquire_machine`" in chat["text"] and "MachineBusy" in chat["text"]
    logs = caplog.text + "".join(capfd.readouterr())
    _assert_no_secret(receivers, minio_server.secret_key, logs, caplog)


def test_without_a_notification_connection_the_run_logs_one_line_and_succeeds(
    dagbag, pipeline_env: dict, monkeypatch: pytest.MonkeyPatch, caplog
) -> None:
    for name in ("AIRFLOW_CONN_TSBENCH_SMTP", "AIRFLOW_CONN_TSBENCH_SLACK"):
        monkeypatch.delenv(name, raising=False)
    with caplog.at_level(logging.INFO):
        run = dagbag.get_dag("tsbench_comparison").test(run_conf=POSTGRES)
    assert run.state == "success"
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("tsbench.airflow.notify")]
    assert lines == ["no notification connection (tsbench_smtp, tsbench_slack) configured: nothing sent"]
