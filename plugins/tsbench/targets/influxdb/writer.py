"""InfluxDB's HTTP ``/write`` worker and its load settings. The lines come from the shared
``targets/lineprotocol.py``; InfluxDB gets them gzip-compressed (``GZIP_LEVEL``) in its own tag
order (``TAG_ORDER``; README "Load")."""

from __future__ import annotations

from urllib.parse import urlencode

import pyarrow as pa

from tsbench.targets.base import TargetError, send_encoded
from tsbench.targets.httpclient import LeanHttp
from tsbench.targets.lineprotocol import LineFormat

GZIP_LEVEL = 1  # fastest; cpu lines still compress ~6x (3.4 MB → 0.58 MB per 10,000 rows)
TAG_ORDER = "tsbs"


class InfluxWriter:
    """One load worker: its own kept-alive HTTP connection to ``/write`` (``LeanHttp``). ``write``
    encodes Arrow batches as it sends them; ``send`` posts a body ``LineFormat`` made earlier."""

    def __init__(
        self,
        endpoint: tuple[str, int],
        database: str,
        line_format: LineFormat,
        written: set[str] | None = None,
        headers: dict[str, str] | None = None,
    ):
        """``endpoint`` is (host, port); ``written`` (shared by a target's writers) collects the
        measurements that got rows; ``headers`` go with every request (InfluxDB 2's token)."""
        self.path = f"/write?{urlencode({'db': database, 'precision': 'ns'})}"
        self.written = written if written is not None else set()
        self.format = line_format
        self.http = LeanHttp(*endpoint, headers=headers, timeout_s=300)
        self.body_headers = {"Content-Type": "text/plain; charset=utf-8"}
        if line_format.gzip_level:
            self.body_headers["Content-Encoding"] = "gzip"

    def write(self, measurement: str, batch: pa.RecordBatch) -> int:
        return send_encoded(self, self.format, measurement, batch)

    def send(self, measurement: str, payload: bytes | memoryview) -> None:
        """POST one body; a 204 means its points are in the fsynced WAL. Never resent."""
        try:
            reply = self.http.request("POST", self.path, payload, self.body_headers)
        except OSError as error:
            raise TargetError(f"influxdb: POST /write failed: {error}") from error
        if reply.status != 204:
            raise TargetError(f"influxdb: /write answered {reply.status}: {reply.body[:500]!r}")
        self.written.add(measurement)

    def close(self) -> None:
        self.http.close()
