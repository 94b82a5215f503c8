"""The comparison DAG's end-of-run callbacks (``tsbench.airflow.notify``) called as the DAG processor
calls them, with the smallest context it passes (``dag``, ``run_id``, ``reason``: the run folder is
found by its run's suffix), against a real SMTP server and a real webhook receiver: a rejected
run's reason arrives verbatim (a template in it is not rendered) and without secrets; an SMTP server
that is down costs one logged error, not the chat message; no connection costs one log line."""

from __future__ import annotations

import json
import logging
import socket
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tsbench.airflow import notify
from tsbench.results.folder import RunFolder
from tsbench.results.model import Rejection
from tsbench.results.workspace import run_folder_name

if TYPE_CHECKING:
    from integration.receivers import SmtpInbox, WebhookInbox

pytest_plugins = ("integration.receivers",)
pytestmark = pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")

RUN_ID = "manual__2026-11-24T02:30:00.123456+00:00"
TOKEN = "ci-token-7f3a9c"  # in a URL of the reason: must be masked
DB_SECRET = "db-secret-51c0de"  # a secret environment variable's value that the reason quotes
REASON = (
    "invalid run parameters:\n"
    f"  aws.backend_config: cannot reach https://ci:{TOKEN}@state.example.com/tf (password {DB_SECRET})\n"
    "  seed: {{ 7 * 7 }} {% raw %} is not an integer"
)


@pytest.fixture
def rejected_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, airflow_db: Path) -> RunFolder:
    """A run refused by validate_params, its folder in a local run store; no S3 anywhere."""
    monkeypatch.setenv("TSBENCH_RESULTS", str(tmp_path / "runs"))
    monkeypatch.setenv("TSBENCH_QUESTDB_PASSWORD", DB_SECRET)
    for name in ("TSBENCH_RUN_STORE", "TSBENCH_S3_BUCKET", "AIRFLOW_CONN_TSBENCH_S3"):
        monkeypatch.delenv(name, raising=False)
    folder = RunFolder(tmp_path / "runs" / run_folder_name(RUN_ID, datetime(2026, 11, 24, 2, 30, tzinfo=UTC)))
    folder.write_rejection(Rejection(task="validate_params", reason=REASON))
    return folder


def _context(dagbag: Any) -> dict[str, Any]:
    return {"dag": dagbag.get_dag("tsbench_comparison"), "run_id": RUN_ID, "reason": "task_failure"}


def _connect(
    monkeypatch: pytest.MonkeyPatch, smtp: dict[str, Any] | None, chat: dict[str, Any] | None
) -> None:
    for name, connection in (("TSBENCH_SMTP", smtp), ("TSBENCH_SLACK", chat)):
        if connection is None:
            monkeypatch.delenv(f"AIRFLOW_CONN_{name}", raising=False)
        else:
            monkeypatch.setenv(f"AIRFLOW_CONN_{name}", json.dumps(connection))


def test_a_rejected_runs_reason_arrives_verbatim_and_without_secrets(
    dagbag, rejected_run: RunFolder, smtp_inbox: SmtpInbox, webhook_inbox: WebhookInbox, monkeypatch, caplog
) -> None:
    _connect(monkeypatch, smtp_inbox.connection(), webhook_inbox.connection())
    with caplog.at_level(logging.INFO):
        notify.on_failure(_context(dagbag))
    (mail,) = smtp_inbox.messages
    assert "run rejected" in mail["Subject"] and "validate_params" in mail["Subject"]
    assert sorted(mail["To"].addresses[i].addr_spec for i in range(2)) == [
        "bench@example.com",
        "ops@example.com",
    ]
    html = mail.get_body(("html",)).get_content()
    assert "{{ 7 * 7 }} {% raw %} is not an integer" in html and "49" not in html
    assert "https://***@state.example.com/tf" in html
    assert not list(mail.iter_attachments())  # a rejected run has no report
    (chat,) = webhook_inbox.bodies
    assert "{{ 7 * 7 }}" in chat["text"] and "validate_params" in chat["text"]
    sent = b"".join([*smtp_inbox.raw, *webhook_inbox.raw]).decode()
    logged = caplog.text
    for secret in (TOKEN, DB_SECRET, smtp_inbox.password, webhook_inbox.url.rsplit("/", 1)[-1]):
        assert secret not in sent and secret not in logged, secret


def test_an_smtp_server_that_is_down_is_logged_and_the_chat_message_still_goes(
    dagbag, rejected_run: RunFolder, smtp_inbox: SmtpInbox, webhook_inbox: WebhookInbox, monkeypatch, caplog
) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        down = {**smtp_inbox.connection(), "port": closed.getsockname()[1]}  # bound, never listening
        _connect(monkeypatch, down, webhook_inbox.connection())
        started = time.monotonic()
        with caplog.at_level(logging.INFO):
            notify.on_failure(_context(dagbag))  # never raises
    assert time.monotonic() - started < 30
    assert "e-mail notification failed: ConnectionRefusedError" in caplog.text
    assert len(webhook_inbox.bodies) == 1 and not smtp_inbox.messages
    assert smtp_inbox.password not in caplog.text


def test_without_connections_one_line_is_logged_and_nothing_sent(
    dagbag, rejected_run: RunFolder, monkeypatch, caplog
) -> None:
    _connect(monkeypatch, None, None)
    with caplog.at_level(logging.DEBUG, logger="tsbench"):
        notify.on_success(_context(dagbag))
    lines = [record.getMessage() for record in caplog.records if record.name.startswith("tsbench")]
    assert lines == ["no notification connection (tsbench_smtp, tsbench_slack) configured: nothing sent"]
