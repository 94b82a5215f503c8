"""A lean keep-alive HTTP/1.1 client for the hot paths (load requests, query requests).

Shared client code of the targets that speak HTTP (InfluxDB ``/write`` and ``/query``, QuestDB's
ILP over HTTP); no database's own facts live here. It is the standard library's ``http.client``
on one persistent connection: no session objects, no per-request header merging or URL parsing —
the ~2–4 ms of Python overhead per request that ``requests`` costs and TSBS's Go client does not.
Sending and receiving release the GIL, so worker threads overlap their requests.
"""

from __future__ import annotations

import http.client
import socket
from dataclasses import dataclass

# A request that failed on a connection the server had closed while idle is sent once more on a
# new connection. Only for requests that are safe to repeat (queries): a write is never resent.
_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes


class LeanHttp:
    """One persistent connection to ``host:port``; ``headers`` go with every request."""

    def __init__(self, host: str, port: int, headers: dict[str, str] | None = None, timeout_s: float = 600):
        self.host = host
        self.port = port
        self.headers = dict(headers or {})
        self.timeout_s = timeout_s
        self._connection: http.client.HTTPConnection | None = None

    def _connect(self) -> http.client.HTTPConnection:
        if self._connection is None:
            connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s)
            connection.connect()
            connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._connection = connection
        return self._connection

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
        for attempt in (1, 2):
            connection = self._connect()
            try:
                connection.request(method, path, body=body, headers={**self.headers, **(headers or {})})
                response = connection.getresponse()
                return Reply(response.status, response.read())
            except _STALE:
                self.close()
                if not repeatable or attempt == 2:
                    raise
            except (OSError, http.client.HTTPException):
                self.close()
                raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
