"""A real SMTP server and a real chat webhook receiver for the notification tests (fixture module).

Use it from a test module::

    pytest_plugins = ("integration.receivers",)   # registers ``smtp_inbox`` and ``webhook_inbox``

``smtp_inbox``: aiosmtpd on a free loopback port, plain SMTP with AUTH (login ``USER``, a password
made per test), every message it accepts parsed (``email.message.EmailMessage``) into ``messages``.
``webhook_inbox``: an HTTP server on a free loopback port answering every POST like Slack's incoming
webhooks (200, ``ok``), every request body kept in ``bodies``. Both stop when the test ends.
"""

from __future__ import annotations

import email
import json
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from tsbench.runtimes.ports import free_port

USER = "bench-mailer"


@dataclass
class SmtpInbox:
    """The test SMTP server: its port, the password it accepts, the messages it received."""

    port: int
    password: str
    messages: list[EmailMessage] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        data = envelope.original_content or envelope.content
        self.raw.append(data)
        self.messages.append(email.message_from_bytes(data, policy=policy.default))  # type: ignore[arg-type]
        return "250 OK"

    def authenticate(self, server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
        ok = isinstance(data, LoginPassword) and data.login.decode() == USER
        return AuthResult(success=ok and data.password.decode() == self.password)

    def connection(self, **extra: Any) -> dict[str, Any]:
        """An Airflow connection (JSON form) of type smtp to this server; ``extra`` adds to its extra."""
        base = {"to": "ops@example.com, bench@example.com", "from_email": "tsbench@example.com"}
        options = {"disable_ssl": True, "disable_tls": True, "timeout": 10, "retry_limit": 0}
        return {
            "conn_type": "smtp",
            "host": "127.0.0.1",
            "port": self.port,
            "login": USER,
            "password": self.password,
            "extra": {**base, **options, **extra},
        }


@pytest.fixture
def smtp_inbox() -> Iterator[SmtpInbox]:
    inbox = SmtpInbox(port=free_port(), password=f"smtp-{secrets.token_hex(8)}")
    controller = Controller(
        inbox,
        hostname="127.0.0.1",
        port=inbox.port,
        authenticator=inbox.authenticate,
        auth_required=True,
        auth_require_tls=False,
    )
    controller.start()
    try:
        yield inbox
    finally:
        controller.stop()


@dataclass
class WebhookInbox:
    """The test webhook receiver: its URL (with a secret path, like Slack's) and the bodies posted."""

    url: str
    bodies: list[dict[str, Any]] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)

    def connection(self) -> dict[str, Any]:
        """An Airflow connection (JSON form) of type slackwebhook: the webhook URL as its password."""
        return {"conn_type": "slackwebhook", "password": self.url}


@pytest.fixture
def webhook_inbox() -> Iterator[WebhookInbox]:
    inbox = WebhookInbox(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            inbox.raw.append(body)
            inbox.bodies.append(json.loads(body))
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    inbox.url = f"http://127.0.0.1:{server.server_port}/services/T0/B0/{secrets.token_hex(12)}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield inbox
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
