"""A lean keep-alive HTTP/1.1 client for the hot paths (load requests, query requests).

Shared client code of the targets that speak HTTP (InfluxDB ``/write`` and ``/query``, QuestDB's
``/write`` and ``/exec``); no database's own facts live here. One persistent socket per instance:
the request is one prebuilt byte string (fixed headers rendered once), the answer is framed by
``httptools`` (llhttp, the parser uvicorn uses: Content-Length and chunked bodies) and kept as
bytes. No session objects, header dictionaries or ``email`` header parsing per request — the
Python overhead that ``requests`` (~2–4 ms) and ``http.client`` (~0.1 ms) add and TSBS's Go client
does not. Sending and receiving release the GIL, so worker threads overlap their requests.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Any

import httptools

from tsbench.targets.base import TargetError

_RECEIVE_BYTES = 256 * 1024
_JOIN_BELOW_BYTES = 64 * 1024  # smaller bodies go out in the same send() as the head


class ProtocolError(OSError):
    """The server's answer was not valid HTTP/1.1, or it ended early."""


class _IdleClosed(ConnectionError):
    """The server had closed the kept-alive connection before this request (nothing received)."""


# A request that failed on a connection the server had closed while idle is sent once more on a
# new connection. Only for requests that are safe to repeat (queries): a write is never resent.
_STALE = (_IdleClosed, BrokenPipeError, ConnectionResetError)


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes


class _Answer:
    """``httptools`` callbacks: status and keep-alive (read when the head is complete, as llhttp
    resets them after the message), the body's parts, and whether the message ended."""

    __slots__ = ("complete", "keep_alive", "parser", "parts", "status")

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.parts: list[bytes] = []
        self.complete = False
        self.status = 0
        self.keep_alive = False

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        self.keep_alive = self.parser.should_keep_alive()

    def on_body(self, body: bytes) -> None:
        self.parts.append(body)

    def on_message_complete(self) -> None:
        self.complete = True


def _header_lines(headers: dict[str, str]) -> str:
    return "".join(f"{name}: {value}\r\n" for name, value in headers.items())


class LeanHttp:
    """One persistent connection to ``host:port``; ``headers`` go with every request."""

    def __init__(self, host: str, port: int, headers: dict[str, str] | None = None, timeout_s: float = 600):
        self.host = host
        self.port = port
        self.timeout_s = timeout_s
        self._fixed = f"Host: {host}:{port}\r\n{_header_lines(headers or {})}"
        self._socket: socket.socket | None = None

    def _connect(self) -> socket.socket:
        if self._socket is None:
            sock = socket.create_connection((self.host, self.port), timeout=self.timeout_s)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._socket = sock
        return self._socket

    def request(
        self,
        method: str,
        path: str,
        body: bytes | memoryview | None = None,
        headers: dict[str, str] | None = None,
        repeatable: bool = False,
    ) -> Reply:
        """Send one request and read the whole answer. ``repeatable`` requests are sent once more
        when the kept-alive connection turned out to be closed; others raise ``OSError``."""
        length = 0 if body is None else memoryview(body).nbytes
        extra = _header_lines(headers) if headers else ""
        sized = f"Content-Length: {length}\r\n" if body is not None else ""
        head = f"{method} {path} HTTP/1.1\r\n{self._fixed}{extra}{sized}\r\n".encode("latin-1")
        for attempt in (1, 2):
            sock = self._connect()
            try:
                self._send(sock, head, body, length)
                return self._receive(sock)
            except _STALE:
                self.close()
                if not repeatable or attempt == 2:
                    raise
            except (OSError, httptools.HttpParserError) as error:
                self.close()
                if isinstance(error, OSError):
                    raise
                raise ProtocolError(f"invalid HTTP answer from {self.host}:{self.port}: {error}") from error
        raise AssertionError("unreachable")

    def answer(self, what: str, method: str, path: str, detail: str = "", **request: Any) -> bytes:
        """The body of a 200 answer to a repeatable request; ``TargetError`` otherwise, worded
        ``"<what> failed: …"`` / ``"<what> answered <status>: …"`` and ending in ``detail``."""
        try:
            reply = self.request(method, path, repeatable=True, **request)
        except OSError as error:
            raise TargetError(f"{what} failed: {error}{detail}") from error
        if reply.status != 200:
            raise TargetError(f"{what} answered {reply.status}: {reply.body[:300]!r}{detail}")
        return reply.body

    @staticmethod
    def _send(sock: socket.socket, head: bytes, body: bytes | memoryview | None, length: int) -> None:
        if body is None:
            sock.sendall(head)
        elif length < _JOIN_BELOW_BYTES:
            sock.sendall(head + bytes(body))
        else:
            sock.sendall(head)
            sock.sendall(body)

    def _receive(self, sock: socket.socket) -> Reply:
        answer = _Answer()
        received = 0
        while not answer.complete:
            data = sock.recv(_RECEIVE_BYTES)
            if not data:
                if not received:
                    raise _IdleClosed(f"{self.host}:{self.port} closed the kept-alive connection")
                raise ProtocolError(f"{self.host}:{self.port} closed the connection mid-answer")
            received += len(data)
            answer.parser.feed_data(data)
        if not answer.keep_alive:
            self.close()
        return Reply(answer.status, b"".join(answer.parts))

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None
