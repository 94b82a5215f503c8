"""A run's end delivered: the comparison DAGs' ``on_success_callback`` and ``on_failure_callback``.

When a run ends (success or failure), ``notify_run_end`` finds its run folder in the run store,
reads it into a notice (``tsbench.notify``: outcome, failed phase and reason, key figures, detected
changes, the report) and sends it through Airflow's notifiers:

- ``SmtpNotifier`` (SMTP provider) when the connection ``tsbench_smtp`` exists (type smtp: host,
  port, login, password; extra: ``to``, the recipients comma-separated, ``from_email``, and the
  provider's own ``timeout``, ``retry_limit``, ``disable_ssl``, ``disable_tls``): an e-mail with the
  report PDF attached;
- ``SlackWebhookNotifier`` (Slack provider) when ``tsbench_slack`` exists (type slackwebhook: the
  webhook URL as password, or host + token): one message.

Without either connection it logs one line and sends nothing. A notifier that fails or hangs is
logged (its error redacted) and abandoned after ``SEND_TIMEOUT_S``; the callback never raises, so
a notification can never fail a run. Under ``dag.test()`` the callback runs in the test's process;
in a deployment the DAG processor runs it (``airflow standalone`` and the Celery form start one).

The notice's texts reach the notifiers as a context value (``tsbench_notice``) that their template
fields only reference (``{{ tsbench_notice.subject }}``): Jinja inserts a value without rendering
it, so an error message holding ``{{`` or ``{%`` is sent as it is, never evaluated.
"""

from __future__ import annotations

import contextvars
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tsbench.airflow.connections import AWS_CONNECTION, S3_CONNECTION, optional_connection, s3_from_connection
from tsbench.notify.message import Notice, compose
from tsbench.notify.redact import Redactor, secret_values
from tsbench.notify.summary import RunEnd, summarize
from tsbench.results.folder import RunFolder

if TYPE_CHECKING:
    from airflow.sdk import Context

log = logging.getLogger("tsbench.airflow.notify")
SMTP_CONNECTION = "tsbench_smtp"
CHAT_CONNECTION = "tsbench_slack"
NOTICE = "tsbench_notice"  # the context key the notifiers' template fields read
SEND_TIMEOUT_S = 120.0  # one notifier's whole send (retries included), then it is abandoned
CHAT_TIMEOUT_S = 15  # the webhook client's HTTP timeout


@dataclass(frozen=True)
class Channels:
    """The notification connections that exist (None: not configured)."""

    smtp: Any | None
    chat: Any | None

    @classmethod
    def configured(cls) -> Channels:
        return cls(optional_connection(SMTP_CONNECTION), optional_connection(CHAT_CONNECTION))

    def any(self) -> bool:
        return self.smtp is not None or self.chat is not None


def _redactor(channels: Channels) -> Redactor:
    """Every secret this process knows: the notification, S3 and AWS connections' passwords (the
    webhook URL is the chat connection's password), the chat connection's host, and the
    environment's secret-looking variables."""
    connections = [channels.smtp, channels.chat, optional_connection(S3_CONNECTION)]
    connections.append(optional_connection(AWS_CONNECTION))
    values = [conn.password for conn in connections if conn is not None]
    if channels.chat is not None and channels.chat.host and "/" in channels.chat.host:
        values.append(channels.chat.host)
    return Redactor.of([*values, *secret_values(os.environ)])


def _end_of(context: Context, succeeded: bool) -> RunEnd:
    dag, ti = context.get("dag"), context.get("ti")
    return RunEnd(
        pipeline=getattr(dag, "dag_id", "") or "",
        run_id=str(context.get("run_id", "")),
        succeeded=succeeded,
        failed_task="" if succeeded or ti is None else str(getattr(ti, "task_id", "")),
        reason=str(context.get("reason") or ""),
    )


def _located(context: Context) -> str | None:
    """The run folder's URL in the run store: named from the run's start when the context has it
    (as ``validate_params`` named it), else found by its suffix; None when the run made none."""
    from tsbench.results.workspace import find_run_folder
    from tsbench.run.pipeline import run_store_url

    dag_run = context.get("dag_run")
    when = getattr(dag_run, "run_after", None) or getattr(dag_run, "start_date", None)
    return find_run_folder(run_store_url(), str(context.get("run_id", "")), when)


def report_location(url: str, folder: RunFolder) -> str:
    """Where the run's report PDF is: in the run store, and on S3 when publication is configured."""
    from tsbench.results.bucket import Bucket
    from tsbench.run.pipeline import s3_settings

    relative = folder.report_pdf.relative_to(folder.path).as_posix()
    settings = s3_from_connection() or s3_settings()
    if settings is None:
        return f"{url}/{relative}"
    key = Bucket(None, settings.bucket, settings.prefix).key(f"runs/{folder.name}/{relative}")
    return f"{url}/{relative} (published: s3://{settings.bucket}/{key})"


def _field(name: str) -> str:
    """A notifier's template field that inserts the notice's ``name`` (never renders it)."""
    return "{{ " + NOTICE + "." + name + " }}"


def _senders(channels: Channels, notice: Notice) -> dict[str, Callable[[Context], None]]:
    """One Airflow notifier per configured channel, its template fields reading ``NOTICE``."""
    senders: dict[str, Callable[[Context], None]] = {}
    if channels.smtp is not None:
        from airflow.providers.smtp.notifications.smtp import SmtpNotifier

        extra = channels.smtp.extra_dejson
        senders["e-mail"] = SmtpNotifier(
            to=[address.strip() for address in str(extra.get("to", "")).split(",") if address.strip()],
            from_email=extra.get("from_email") or None,
            subject=_field("subject"),
            html_content=_field("html"),
            files=[_field("attachment")] if notice.attachment is not None else None,
            smtp_conn_id=SMTP_CONNECTION,
        )
    if channels.chat is not None:
        from airflow.providers.slack.notifications.slack_webhook import SlackWebhookNotifier

        senders["chat"] = SlackWebhookNotifier(
            slack_webhook_conn_id=CHAT_CONNECTION, text=_field("chat"), timeout=CHAT_TIMEOUT_S
        )
    return senders


def _bounded(what: str, send: Callable[[], None], redact: Redactor) -> bool:
    """``send()`` in a thread (with this context's variables) for at most ``SEND_TIMEOUT_S``;
    whether it finished without error. A failure or a hang is logged, never raised."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            send()
        except BaseException as error:  # reported below, never raised
            errors.append(error)

    thread = threading.Thread(target=contextvars.copy_context().run, args=(run,), daemon=True)
    thread.start()
    thread.join(SEND_TIMEOUT_S)
    if thread.is_alive():
        log.error("%s notification not sent within %.0f s: abandoned", what, SEND_TIMEOUT_S)
        return False
    if errors:
        log.error("%s notification failed: %s", what, redact(f"{type(errors[0]).__name__}: {errors[0]}"))
        return False
    return True


def _send(context: Context, succeeded: bool, channels: Channels, redact: Redactor) -> None:
    from tsbench.notify.summary import NOTICE_PART

    end, url = _end_of(context, succeeded), _located(context)
    if url is None:
        log.warning("no run folder for run %s in the run store: the notice names no figures", end.run_id)
        _deliver(context, channels, compose(summarize(None, end, redact), redact), redact)
        return
    with RunFolder.opened(url, part=NOTICE_PART) as folder:
        summary = summarize(folder, end, redact, report_location(url, folder))
        _deliver(context, channels, compose(summary, redact), redact)


def _deliver(context: Context, channels: Channels, notice: Notice, redact: Redactor) -> None:
    context = {**context, NOTICE: notice}
    if not hasattr(context.get("dag"), "get_template_env"):
        # dag.test() hands DAG callbacks the serialized DAG, which has no template environment: the
        # notifiers then render their fields (only ``NOTICE`` references) in Airflow's default one
        context["dag"] = None
    for what, notifier in _senders(channels, notice).items():
        if _bounded(what, lambda notifier=notifier: notifier(context), redact):
            log.info("%s notification sent: %s", what, notice.subject)


def notify_run_end(context: Context, succeeded: bool) -> None:
    """Send the run's notice to every configured channel; log one line and send nothing when no
    channel is configured. Never raises (a notification never fails a run)."""
    channels = Channels(None, None)
    try:
        channels = Channels.configured()
        if not channels.any():
            log.info(
                "no notification connection (%s, %s) configured: nothing sent",
                SMTP_CONNECTION,
                CHAT_CONNECTION,
            )
            return
        _send(context, succeeded, channels, _redactor(channels))
    except Exception as error:  # a notification never fails the run
        redact = Redactor.of([getattr(c, "password", None) for c in (channels.smtp, channels.chat)])
        log.error("notification not sent: %s", redact(f"{type(error).__name__}: {error}"))


def on_success(context: Context) -> None:
    """The DAG's ``on_success_callback``."""
    notify_run_end(context, succeeded=True)


def on_failure(context: Context) -> None:
    """The DAG's ``on_failure_callback``."""
    notify_run_end(context, succeeded=False)
