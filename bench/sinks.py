"""Do-nothing endpoints that speak a database's load protocol, for the client ceiling.

Each runs in its own process (so it never shares the client's GIL) on a free loopback port, reads
and discards every request body, and answers as the server would on success:

- ``http``: HTTP/1.1 keep-alive; any request → ``204 No Content`` (QuestDB ILP/HTTP ``/write``,
  InfluxDB ``/write``);
- ``pg``: PostgreSQL wire protocol v3, just enough for a client's ``COPY … FROM STDIN``: trust
  authentication, simple and extended query flow, CopyInResponse, CopyData discarded, CopyDone →
  CommandComplete; any other statement → an empty ``SELECT 0``.

These are instruments, not emulators of a database: nothing is parsed beyond message framing.
"""

from __future__ import annotations

import multiprocessing
import socket
import socketserver
import struct
from collections.abc import Iterator
from contextlib import contextmanager

_NO_CONTENT = b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"
_CHUNK = 1 << 20


class _Reader:
    """Buffered reads from a socket: exact byte counts, discards without copying much."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buffer = bytearray()
        self.scratch = bytearray(_CHUNK)

    def _fill(self) -> bool:
        got = self.sock.recv_into(self.scratch)
        if not got:
            return False
        self.buffer += memoryview(self.scratch)[:got]
        return True

    def until(self, marker: bytes) -> bytes | None:
        while (at := self.buffer.find(marker)) < 0:
            if not self._fill():
                return None
        head = bytes(self.buffer[: at + len(marker)])
        del self.buffer[: at + len(marker)]
        return head

    def exactly(self, count: int) -> bytes | None:
        while len(self.buffer) < count:
            if not self._fill():
                return None
        data = bytes(self.buffer[:count])
        del self.buffer[:count]
        return data

    def skip(self, count: int) -> bool:
        take = min(count, len(self.buffer))
        del self.buffer[:take]
        count -= take
        view = memoryview(self.scratch)
        while count > 0:
            got = self.sock.recv_into(view[: min(count, _CHUNK)])
            if not got:
                return False
            count -= got
        return True


class _HttpSink(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        reader = _Reader(self.request)
        while (head := reader.until(b"\r\n\r\n")) is not None:
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            if not reader.skip(length):
                return
            self.request.sendall(_NO_CONTENT)


def _message(kind: bytes, body: bytes = b"") -> bytes:
    return kind + struct.pack("!i", len(body) + 4) + body


_HELLO = (
    _message(b"R", struct.pack("!i", 0))
    + b"".join(
        _message(b"S", key + b"\0" + value + b"\0")
        for key, value in (
            (b"client_encoding", b"UTF8"),
            (b"server_encoding", b"UTF8"),
            (b"server_version", b"15.0"),
            (b"standard_conforming_strings", b"on"),
            (b"DateStyle", b"ISO, MDY"),
            (b"integer_datetimes", b"on"),
            (b"TimeZone", b"UTC"),
        )
    )
    + _message(b"K", struct.pack("!ii", 1, 1))
    + _message(b"Z", b"I")
)
_COPY_IN = _message(b"G", struct.pack("!bh", 1, 0))


class _PgSink(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        reader = _Reader(self.request)
        if not self._startup(reader):
            return
        self.request.sendall(_HELLO)
        while (header := reader.exactly(5)) is not None:
            kind, length = header[:1], struct.unpack("!i", header[1:])[0] - 4
            if kind == b"d":  # CopyData: the load's bytes, discarded
                if not reader.skip(length):
                    return
                continue
            body = reader.exactly(length)
            if body is None or kind == b"X":
                return
            self.request.sendall(self._answer(kind, body))

    def _startup(self, reader: _Reader) -> bool:
        while True:
            size = reader.exactly(4)
            if size is None:
                return False
            body = reader.exactly(struct.unpack("!i", size)[0] - 4)
            if body is None:
                return False
            if struct.unpack("!i", body[:4])[0] in (80877103, 80877104):  # SSL / GSS encryption request
                self.request.sendall(b"N")
                continue
            return True

    def _answer(self, kind: bytes, body: bytes) -> bytes:
        simple_copy = kind == b"Q" and body.lstrip()[:4].upper() == b"COPY"
        if simple_copy:
            return _COPY_IN
        if kind == b"Q":
            return _message(b"C", b"SELECT 0\0") + _message(b"Z", b"I")
        if kind == b"c":  # CopyDone
            extended = getattr(self, "extended_copy", False)  # then ReadyForQuery answers the Sync
            return _message(b"C", b"COPY 0\0") + (b"" if extended else _message(b"Z", b"I"))
        replies = {
            b"P": _message(b"1"),
            b"B": _message(b"2"),
            b"D": _message(b"n"),
            b"S": _message(b"Z", b"I"),
        }
        if kind == b"P":
            self.extended_copy = b"COPY" in body[:200].upper()
        if kind == b"E":
            return _COPY_IN if getattr(self, "extended_copy", False) else _message(b"C", b"SELECT 0\0")
        return replies.get(kind, b"")


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


_HANDLERS = {"http": _HttpSink, "pg": _PgSink}


def _serve(protocol: str, ready: multiprocessing.Queue) -> None:
    with _Server(("127.0.0.1", 0), _HANDLERS[protocol]) as server:
        ready.put(server.server_address[1])
        server.serve_forever()


@contextmanager
def sink(protocol: str) -> Iterator[tuple[int, int]]:
    """``with sink("http") as (port, pid):`` a do-nothing endpoint in its own process."""
    context = multiprocessing.get_context("spawn")
    ready: multiprocessing.Queue = context.Queue()
    process = context.Process(target=_serve, args=(protocol, ready), daemon=True)
    process.start()
    try:
        yield ready.get(timeout=30), process.pid
    finally:
        process.terminate()
        process.join(10)
