"""VictoriaMetrics (single-node): line protocol over HTTP ``/write`` (gzip), MetricsQL over
``/api/v1/query`` and ``/api/v1/query_range``, HTTP Basic authentication on every call.

Schema: none to declare. Each field of a line becomes a series ``<measurement>_<field>`` labelled
with the line's tags; series are created as samples arrive. Samples are float64, kept to the
millisecond, every copy kept (no deduplication interval)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

import pyarrow as pa
import requests

from tsbench.runtimes.basic_auth import basic_auth
from tsbench.targets.base import Capabilities, Endpoint, Footprint, Target, TargetError, send_encoded
from tsbench.targets.httpclient import LeanHttp
from tsbench.targets.lineprotocol import LineBuilder, LineFormat
from tsbench.targets.victoriametrics import dialect
from tsbench.targets.victoriametrics.answers import data_of, merged_rows
from tsbench.targets.victoriametrics.definition import DEFINITION
from tsbench.targets.victoriametrics.server import USER, VictoriaMetricsServer, version_of
from tsbench.timeutil import parse_duration
from tsbench.workload.kept import Keeps
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.usecases import UseCase

TIMEOUT_S = 600
GZIP_LEVEL = 1  # as InfluxDB's bodies: the same bytes on the wire
TAG_ORDER = "tsbs"
EVERY_SERIES = '{__name__=~".+"}'


def login(endpoint: Endpoint) -> dict[str, str]:
    """The ``Authorization`` header of the endpoint's user and password (none without a password)."""
    return basic_auth(endpoint.user or USER, endpoint.secrets.get("password"))


class VictoriaWriter:
    """One load worker on its own kept-alive connection to ``/write``: gzip line protocol bodies."""

    def __init__(self, endpoint: Endpoint, line_format: LineFormat):
        self.format = line_format
        self.http = LeanHttp(endpoint.host, endpoint.port("http"), login(endpoint), TIMEOUT_S)
        self.headers = {"Content-Type": "text/plain; charset=utf-8", "Content-Encoding": "gzip"}

    def write(self, measurement: str, batch: pa.RecordBatch) -> int:
        return send_encoded(self, self.format, measurement, batch)

    def send(self, measurement: str, payload: bytes | memoryview) -> None:
        """POST one body; a 204 means VictoriaMetrics parsed it (searchable within about a second,
        or at the next ``/internal/force_flush``). Never resent."""
        try:
            reply = self.http.request("POST", "/write?precision=ns", payload, self.headers)
        except OSError as error:
            raise TargetError(f"victoriametrics: POST /write failed: {error}") from error
        if reply.status != 204:
            raise TargetError(f"victoriametrics: /write answered {reply.status}: {reply.body[:500]!r}")

    def close(self) -> None:
        self.http.close()


class VictoriaSession:
    """One query worker on one kept-alive connection: ``fetch`` sends a rendering's requests and
    keeps their bodies; ``decode`` merges their series into the answer's rows."""

    def __init__(self, endpoint: Endpoint):
        self.http = LeanHttp(endpoint.host, endpoint.port("http"), login(endpoint), TIMEOUT_S)

    def fetch(self, text: str) -> tuple[str, list[bytes]]:
        _, requests_ = dialect.parse(text)
        return text, [self._call(request) for request in requests_]

    def _call(self, request: dialect.Request) -> bytes:
        params = {"query": request.expression, "nocache": "1"}
        if request.kind == "range":
            path = "/api/v1/query_range"
            params.update(
                start=dialect.seconds(request.start_ms),
                end=dialect.seconds(request.end_ms),
                step=dialect.duration(request.step_ms),
            )
        else:
            path = "/api/v1/query"
            params["time"] = dialect.seconds(request.end_ms)
        return self.http.answer(
            f"victoriametrics: {path}", "GET", f"{path}?{urlencode(params)}", f"\n{request.expression}"
        )

    def decode(self, raw: tuple[str, list[bytes]]) -> list[tuple[Any, ...]]:
        text, bodies = raw
        header, requests_ = dialect.parse(text)
        answers = [(request, data_of(body, request)) for request, body in zip(requests_, bodies, strict=True)]
        return merged_rows(header, answers)

    def execute(self, text: str) -> list[tuple[Any, ...]]:
        return self.decode(self.fetch(text))

    def close(self) -> None:
        self.http.close()


FLUSH_INTERVAL_S = parse_duration(str(DEFINITION.tuning["inmemoryDataFlushInterval"])) / 1e9


def in_memory(parts: dict[str, int]) -> int:
    """Bytes of the in-memory parts (not yet on disk) among ``vm_data_size_bytes`` by part type."""
    return sum(size for kind, size in parts.items() if kind.endswith("/inmemory"))


class VictoriaMetricsTarget(Target):
    name = "victoriametrics"
    title = "VictoriaMetrics"
    colour = "#6A3D9A"
    client_packages = ("requests", "httptools")
    capabilities = Capabilities(
        durable=False,  # in-memory buffers reach disk about every second; force_flush makes them searchable
        keeps=Keeps.ALL,  # no deduplication interval: every sample is kept, copies included
        compression="per-block: delta/delta-of-delta timestamps, values as decimal mantissas, zstd",
        rollups="none in the single-node server (vmalert recording rules are a separate service)",
        unsupported=dialect.UNSUPPORTED,
        restartable=True,
        schema_note=(
            "no schema: each field of a line is a series <measurement>_<field> labelled with the line's "
            "tags, created on arrival; float64 samples kept to the millisecond"
        ),
        stores_fieldless_rows=False,
        merges_nameless_instants=True,
        counts_gapped_rows=False,  # rows are counted by a field every row carries (count_rows)
        row_model_note=(
            "each field is a series of its own: a row without any field is not sent, and rows are "
            "counted by a field every loaded row carries"
        ),
    )

    def __init__(self, endpoint: Endpoint, use_case: UseCase, tags: pa.Table):
        super().__init__(endpoint, use_case, tags)
        self._lock = threading.Lock()
        self._http: requests.Session | None = None

    @staticmethod
    def server_recipe() -> type:
        return VictoriaMetricsServer

    @property
    def url(self) -> str:
        return f"http://{self.endpoint.host}:{self.endpoint.port('http')}"

    def _call(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """The answer to one call (TargetError for a failure or a status >= 300)."""
        with self._lock:
            if self._http is None:
                self._http = requests.Session()
                self._http.headers.update(login(self.endpoint))
            http = self._http
        try:
            response = http.request(method, f"{self.url}{path}", timeout=TIMEOUT_S, **kwargs)
        except requests.RequestException as error:
            raise TargetError(f"victoriametrics: {method} {path} failed: {error}") from error
        if response.status_code >= 300:
            raise TargetError(
                f"victoriametrics: {method} {path} answered {response.status_code}: {response.text[:300]}"
            )
        return response

    # ---- load ----------------------------------------------------------------------------------

    def create_schema(self) -> None:
        """Delete every series (a retry's earlier samples with them); nothing else to create."""
        self._call("POST", "/api/v1/admin/tsdb/delete_series", data={"match[]": EVERY_SERIES})

    @classmethod
    def wire_format(cls, use_case: UseCase, tags: pa.Table) -> LineFormat:
        return LineFormat(LineBuilder("victoriametrics", use_case, tags, TAG_ORDER), GZIP_LEVEL)

    def writer(self) -> VictoriaWriter:
        return VictoriaWriter(self.endpoint, self.wire_format(self.use_case, self.tags))

    def flush(self) -> None:
        """``/internal/force_flush``: the samples received so far become searchable (and are written
        to disk parts; VictoriaMetrics does not fsync per request)."""
        self._call("GET", "/internal/force_flush")

    def row_count(self, measurement: str) -> int:
        raise TargetError(
            f"victoriametrics stores each field as its own series: rows of {measurement!r} are counted by "
            "a field every loaded row carries, and it has none"
        )

    def count_rows(self, measurement: str, complete_fields: Sequence[str]) -> int:
        """The samples of a field every loaded row carries (one sample per row)."""
        if not complete_fields:
            return self.row_count(measurement)
        name = f"{measurement}_{complete_fields[0]}"
        window = dialect.duration(dialect.ALL_TIME_END_MS)
        expression = f"sum(count_over_time({{__name__={dialect.quoted(name)}}}[{window}]))"
        params = {"query": expression, "time": dialect.seconds(dialect.ALL_TIME_END_MS), "nocache": "1"}
        result = self._call("GET", "/api/v1/query", params=params).json()["data"]["result"]
        return int(float(result[0]["value"][1])) if result else 0

    # ---- queries -------------------------------------------------------------------------------

    def render(self, query: LogicalQuery) -> str:
        return dialect.render(query)

    def session(self) -> VictoriaSession:
        return VictoriaSession(self.endpoint)

    # ---- facts ---------------------------------------------------------------------------------

    def _metrics(self) -> str:
        return self._call("GET", "/metrics").text

    def footprint(self) -> Footprint:
        """``vm_data_size_bytes`` of the parts on disk (samples and index) from the server's own
        metrics, once the in-memory parts (the newest samples) were written to disk: VictoriaMetrics
        does that every ``-inmemoryDataFlushInterval``; this waits up to three intervals for it, and
        counts what is still in memory then (the note says so)."""
        deadline = time.monotonic() + 3 * FLUSH_INTERVAL_S
        while (parts := self._data_sizes()) and in_memory(parts) and time.monotonic() < deadline:
            time.sleep(0.5)
        pending = in_memory(parts)
        note = (
            "vm_data_size_bytes from /metrics: sample parts (storage/small, storage/big) and index parts "
            f"(indexdb/file) on disk, after the in-memory parts were written (every "
            f"{DEFINITION.tuning['inmemoryDataFlushInterval']}); caches not counted"
        )
        if pending:
            note += f"; {pending:,} bytes still in memory after {3 * FLUSH_INTERVAL_S:.0f} s, counted too"
        on_disk = sum(size for kind, size in parts.items() if not kind.endswith("/inmemory"))
        return Footprint(bytes=on_disk + pending, note=note, parts=parts)

    def _data_sizes(self) -> dict[str, int]:
        """``vm_data_size_bytes`` by part type (``storage/small``, ``indexdb/inmemory``, ...)."""
        parts: dict[str, int] = {}
        for line in self._metrics().splitlines():
            if line.startswith('vm_data_size_bytes{type="'):
                kind = line.split('"')[1]
                parts[kind] = parts.get(kind, 0) + int(float(line.rsplit(" ", 1)[1]))
        return parts

    def version(self) -> str:
        for line in self._metrics().splitlines():
            if line.startswith("vm_app_version{"):
                return version_of(line.split('version="', 1)[1].split('"', 1)[0])
        return "unknown"

    def settings(self) -> dict[str, Any]:
        return {
            **{f"-{flag}": value for flag, value in DEFINITION.settings().items()},
            "write": f"line protocol over HTTP /write, precision ns, gzip level {GZIP_LEVEL}",
            "query": "MetricsQL over /api/v1/query and /api/v1/query_range, nocache=1",
            "authentication": "HTTP Basic (-httpAuth.*) on every path but /health",
        }

    def close(self) -> None:
        with self._lock:
            if self._http is not None:
                self._http.close()
                self._http = None


TARGET = VictoriaMetricsTarget
