"""``LeanHttp`` against a real HTTP/1.1 server on loopback (the standard library's ``http.server``,
threaded): both body framings, one connection kept alive, a stale connection resent only for
repeatable requests, and clear errors for an answer that is not HTTP."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from tsbench.targets.httpclient import LeanHttp, ProtocolError


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    connections: ClassVar[set[tuple[str, int]]] = set()
    posted: ClassVar[list[bytes]] = []

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.connections.add(self.client_address)
        if self.path.startswith("/chunked"):
            self._chunked([b"x" * 70_000, b"", b"tail"] if "big" in self.path else [b"ab", b"cd"])
        elif self.path == "/announced-close":
            self.close_connection = True
            self._plain(b"bye", headers={"Connection": "close"})
        else:
            self._plain(self.path.encode() + b"|" + self.headers.get("X-Token", "").encode())
        if self.path == "/silent-close":  # what a server does to a connection it lets idle out
            self.close_connection = True

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.posted.append(body)
        self._plain(str(len(body)).encode(), status=204 if not body else 200)

    def _plain(self, body: bytes, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if status != 204:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if status != 204:
            self.wfile.write(body)

    def _chunked(self, parts: list[bytes]) -> None:
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for part in [p for p in parts if p] + [b""]:
            self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    _Handler.connections.clear()
    _Handler.posted.clear()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _client(httpd: ThreadingHTTPServer, **kwargs: object) -> LeanHttp:
    host, port = httpd.server_address[:2]
    return LeanHttp(str(host), int(port), **kwargs)  # type: ignore[arg-type]


def test_both_framings_on_one_kept_alive_connection(server: ThreadingHTTPServer) -> None:
    http = _client(server, headers={"X-Token": "t"})
    assert http.request("GET", "/plain").body == b"/plain|t"
    assert http.request("GET", "/chunked").body == b"abcd"
    big = http.request("GET", "/chunked-big")
    assert (big.status, big.body) == (200, b"x" * 70_000 + b"tail")
    assert http.request("POST", "/w", b"y" * 100_000).body == b"100000"
    assert http.request("POST", "/w", memoryview(b"small")).body == b"5"
    assert http.request("POST", "/w", b"").status == 204
    assert len(_Handler.connections) == 1
    http.close()


def test_an_announced_close_opens_a_new_connection(server: ThreadingHTTPServer) -> None:
    http = _client(server)
    assert http.request("GET", "/announced-close").body == b"bye"
    assert http.request("GET", "/again").body == b"/again|"
    assert len(_Handler.connections) == 2


def test_a_silently_closed_connection_is_resent_only_when_repeatable(server: ThreadingHTTPServer) -> None:
    http = _client(server)
    http.request("GET", "/silent-close")
    time.sleep(0.2)
    assert http.request("GET", "/query", repeatable=True).body == b"/query|"
    http.request("GET", "/silent-close")
    time.sleep(0.2)
    with pytest.raises(ConnectionError):
        http.request("POST", "/write", b"rows")
    assert _Handler.posted == []  # the write was not resent on a new connection
    assert http.request("GET", "/after").status == 200  # the broken socket was replaced


def test_an_answer_that_is_not_http_is_a_protocol_error() -> None:
    listener = socket.create_server(("127.0.0.1", 0))

    def garbage() -> None:
        connection, _ = listener.accept()
        connection.recv(1024)
        connection.sendall(b"NOT-HTTP at all\r\n\r\n")
        connection.close()

    threading.Thread(target=garbage, daemon=True).start()
    http = LeanHttp("127.0.0.1", listener.getsockname()[1], timeout_s=5)
    with pytest.raises(ProtocolError, match="invalid HTTP answer"):
        http.request("GET", "/")
    listener.close()


def test_a_closed_port_raises_os_error() -> None:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    with pytest.raises(OSError):
        LeanHttp("127.0.0.1", port, timeout_s=2).request("GET", "/")


def test_answer_returns_a_200_body_and_names_any_other_status(server: ThreadingHTTPServer) -> None:
    from tsbench.targets.base import TargetError

    http = _client(server)
    assert http.answer("db: /q", "GET", "/ok", "\nctx") == b"/ok|"
    with pytest.raises(TargetError, match=r"^db: /w answered 204: b''\nctx$"):
        http.answer("db: /w", "POST", "/w", "\nctx", body=b"")
