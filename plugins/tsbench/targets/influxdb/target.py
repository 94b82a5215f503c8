"""InfluxDB 1.x: line protocol over HTTP ``/write`` (gzip), InfluxQL over HTTP ``/query``.

The same target drives InfluxDB 1.8 and 2.7 containers (``container.py``); 2.x through its 1.x
compatibility API with a token, its bucket standing in for the database (``v2.py``).

Schema: one database (``benchmark``, retention policy ``autogen``: infinite, 7-day shard groups);
a measurement per use-case measurement; the entity's and the measurement's extra tags are tags,
the fields are fields (integers stay integers)."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlencode

import pyarrow as pa
import requests

from tsbench.runtimes.disk import allocated_bytes
from tsbench.targets.base import Capabilities, Endpoint, Footprint, Target, TargetError
from tsbench.targets.httpclient import LeanHttp
from tsbench.targets.influxdb import dialect, iot_dialect, v2
from tsbench.targets.influxdb import rollup as rollup_sql
from tsbench.targets.influxdb.answers import ROWS_PER_PART, combined_rows, first_result, shaped_parts
from tsbench.targets.influxdb.auth import auth_headers
from tsbench.targets.influxdb.rollup_target import InfluxDBRollups
from tsbench.targets.influxdb.server import DATABASE, TUNING, InfluxDBServer
from tsbench.targets.influxdb.writer import GZIP_LEVEL, TAG_ORDER, InfluxWriter
from tsbench.targets.lineprotocol import LineBuilder, LineFormat
from tsbench.workload.kept import Keeps
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.usecases import UseCase

QUERY_TIMEOUT_S = 600
V2_ROLLUPS = "InfluxDB 2: tasks (Flux), not built by tsbench; no continuous queries"
GET_LIMIT = 4000  # longer query texts go in a POST body


def _result(response: requests.Response, text: str) -> dict[str, Any]:
    """The first statement's result of a /query response (TargetError on any error)."""
    if response.status_code != 200:
        raise TargetError(f"influxdb: /query answered {response.status_code}: {response.text[:300]}\n{text}")
    return first_result(response.json(), text)


def _query(
    http: requests.Session, url: str, text: str, database: str | None = None, write: bool = False
) -> dict[str, Any]:
    params = {"epoch": "ns"}
    if database:
        params["db"] = database
    try:
        if write or len(text) > GET_LIMIT:  # InfluxDB accepts only reading statements via GET
            response = http.post(f"{url}/query", params=params, data={"q": text}, timeout=QUERY_TIMEOUT_S)
        else:
            response = http.get(f"{url}/query", params={**params, "q": text}, timeout=QUERY_TIMEOUT_S)
    except requests.RequestException as error:
        raise TargetError(f"influxdb: /query failed: {error}\n{text}") from error
    return _result(response, text)


def _wal_files(wal_dirs: set[Path]) -> int:
    """Bytes of the ``*.wal`` segment files in the folders that exist here."""
    return sum(f.stat().st_size for d in wal_dirs if d.is_dir() for f in d.glob("*.wal"))


def _allocated(path: Path) -> int:
    """Bytes allocated on disk for a file or a folder tree (``du``)."""
    return path.lstat().st_blocks * 512 if path.is_file() else allocated_bytes([path])


class InfluxSession:
    """One query worker on one kept-alive HTTP connection (``LeanHttp``). ``fetch`` receives the
    JSON body whole; ``decode`` parses it and shapes rows by the rendering's answer header."""

    def __init__(self, host: str, port: int, database: str, headers: dict[str, str] | None = None):
        self.http = LeanHttp(host, port, headers, QUERY_TIMEOUT_S)
        self.database = database

    def fetch(self, text: str) -> tuple[str, bytes]:
        """``(text, body)`` of a 200 answer (TargetError for any other status)."""
        params = {"db": self.database, "epoch": "ns"}
        if len(text) > GET_LIMIT:  # long texts go in a form body
            form = urlencode({"q": text}).encode()
            headers = {"Content-Type": "application/x-www-form-urlencoded"}
            path = f"/query?{urlencode(params)}"
            body = self.http.answer("influxdb: /query", "POST", path, f"\n{text}", body=form, headers=headers)
            return text, body
        path = f"/query?{urlencode({**params, 'q': text})}"
        return text, self.http.answer("influxdb: /query", "GET", path, f"\n{text}")

    def decode(self, raw: tuple[str, bytes]) -> list[tuple[Any, ...]]:
        return [row for part in self.decode_parts(raw) for row in part]

    def decode_parts(self, raw: tuple[str, bytes], rows_per_part: int = ROWS_PER_PART) -> Iterator[list[Any]]:
        """``decode`` in parts of ``rows_per_part`` rows. The caller hands over its only reference
        to ``raw``: the body is freed once parsed, and each parsed row once shaped. A rollup
        rendering's merged rows (small: per bucket and host) come as one part."""
        text, body = raw
        del raw
        document = json.loads(body)
        del body
        answer = dialect.parse_header(text)
        if answer.combine:  # a rollup rendering: its statements' rows merged, in one part
            yield combined_rows(answer, document, text)
            return
        yield from shaped_parts(answer, first_result(document, text), rows_per_part)

    def execute(self, text: str) -> list[tuple[Any, ...]]:
        return self.decode(self.fetch(text))

    def close(self) -> None:
        self.http.close()


@dataclass
class _ShardStats:
    """What ``SHOW STATS`` says about one database's storage: TSM bytes, WAL segment bytes (the
    last segment counts twice after a restart) and the shard and WAL directories it names."""

    tsm: int = 0
    wal: int = 0
    shard_dirs: set[Path] = field(default_factory=set)
    wal_dirs: set[Path] = field(default_factory=set)

    @classmethod
    def of(cls, result: dict[str, Any], database: str, rollup: bool = False) -> _ShardStats:
        """The database's shards outside the rollup's retention policy (``rollup``: in it)."""
        stats = cls()
        for series in result.get("series", ()):
            tags = series.get("tags") or {}
            in_rollup = tags.get("retentionPolicy") == rollup_sql.RETENTION_POLICY
            if tags.get("database") != database or in_rollup != rollup:
                continue
            row = dict(zip(series["columns"], series["values"][0], strict=True))
            if series["name"] == "tsm1_filestore":
                stats.tsm += int(row.get("diskBytes", 0))
            elif series["name"] == "tsm1_wal":
                stats.wal += int(row.get("currentSegmentDiskBytes", 0)) + int(
                    row.get("oldSegmentsDiskBytes", 0)
                )
            elif series["name"] == "shard":
                stats.shard_dirs.add(Path(tags["path"]))
                stats.wal_dirs.add(Path(tags["walPath"]))
        return stats


class InfluxDBTarget(InfluxDBRollups, Target):
    name = "influxdb"
    title = "InfluxDB"
    colour = "#009E73"
    client_packages = ("requests", "httptools")
    capabilities = Capabilities(
        durable=True,  # wal-fsync-delay = 0s: the WAL is fsynced before /write answers 204
        keeps=Keeps.LAST,  # a point is keyed by series and time: a later write overwrites its fields
        compression="TSM (per-type: delta/simple8b integers, Gorilla XOR floats, snappy strings)",
        rollups="continuous queries (InfluxQL, MIT) into a retention policy of their own",
        builds_rollups=True,
        unsupported=iot_dialect.UNSUPPORTED,
        restartable=True,
        schema_note=(
            "one measurement per table; entity tags + extra tags as InfluxDB tags (series key), "
            "fields as typed fields; inmem series index (InfluxDB 2: TSI, its only one); default RP autogen "
            "(7-day shards; InfluxDB 2: the bucket, infinite retention)"
        ),
        stores_fieldless_rows=False,
        merges_nameless_instants=True,
        row_model_note=(
            "a row without any field is not sent (line protocol has no such line); a nameless iot "
            "row has no tag, so its series is the measurement alone, and nameless rows of one "
            "instant are one point (later fields overwrite earlier ones)"
        ),
    )

    # Write path (README "Load"): tag order on the wire and gzip level of the /write bodies.
    tag_order: ClassVar[str] = TAG_ORDER
    gzip_level: ClassVar[int] = GZIP_LEVEL

    def __init__(self, endpoint: Endpoint, use_case: UseCase, tags: pa.Table):
        super().__init__(endpoint, use_case, tags)
        self._lock = threading.Lock()
        self._builder: LineBuilder | None = None
        self._http: requests.Session | None = None
        self._written: set[str] = set()
        if self.v2:  # InfluxDB 2 has tasks (Flux) instead of continuous queries
            self.capabilities = dataclasses.replace(
                self.capabilities, rollups=V2_ROLLUPS, builds_rollups=False
            )

    @staticmethod
    def server_recipe() -> type:
        return InfluxDBServer

    @property
    def url(self) -> str:
        return f"http://{self.endpoint.host}:{self.endpoint.port('http')}"

    @property
    def database(self) -> str:
        return self.endpoint.database or DATABASE

    def _run(self, text: str, write: bool = False, database: bool = True) -> dict[str, Any]:
        with self._lock:
            return _query(self._session(), self.url, text, self.database if database else None, write)

    @property
    def v2(self) -> bool:
        return v2.is_v2(self.endpoint)

    def _session(self) -> requests.Session:
        """The target's HTTP session, made on first use with its credentials (callers hold ``_lock``)."""
        if self._http is None:
            self._http = requests.Session()
            self._http.headers.update(auth_headers(self.endpoint))
        return self._http

    def _v2_call(self, call: Any, *args: Any) -> Any:
        """Run a ``v2`` helper with this target's session, organisation and bucket."""
        with self._lock:
            http = self._session()
        extra = self.endpoint.extra
        return call(http, self.url, extra["org"], extra.get("bucket", self.database), *args)

    def builder(self) -> LineBuilder:
        with self._lock:
            if self._builder is None:
                self._builder = LineBuilder("influxdb", self.use_case, self.tags, self.tag_order)
            return self._builder

    # ---- load ----------------------------------------------------------------------------------

    def create_schema(self) -> None:
        if self.v2:  # InfluxQL in 2.x cannot drop or create databases: the bucket is recreated
            self._v2_call(v2.recreate_bucket)
            self._written.clear()
            return
        name = dialect.ident(self.database)
        self._run(f"DROP DATABASE {name}", write=True, database=False)  # idempotent in 1.x
        self._run(f"CREATE DATABASE {name}", write=True, database=False)
        self._written.clear()

    def writer(self) -> InfluxWriter:
        return InfluxWriter(
            (self.endpoint.host, self.endpoint.port("http")),
            self.database,
            LineFormat(self.builder(), self.gzip_level),
            self._written,
            headers=auth_headers(self.endpoint),
        )

    @classmethod
    def wire_format(cls, use_case: UseCase, tags: pa.Table) -> LineFormat:
        return LineFormat(LineBuilder("influxdb", use_case, tags, cls.tag_order), cls.gzip_level)

    def flush(self) -> None:
        """Nothing is buffered here and a 204 from /write means the points are in the fsynced WAL and
        the cache (visible): checks that every measurement written since create_schema is known."""
        result = self._run("SHOW MEASUREMENTS")
        present = {v[0] for s in result.get("series", ()) for v in s.get("values", ())}
        missing = self._written - present
        if missing:
            raise TargetError(f"influxdb: written measurements not visible after flush: {sorted(missing)}")

    def row_count(self, measurement: str) -> int:
        """Points stored: the entity key tag selected as a value in a subquery counts every point with
        a field (``count(*)`` counts per field); points without the key (nameless iot rows) as raw rows."""
        m = self.use_case.measurement(measurement)
        fields = ", ".join(dialect.ident(f) for f in m.field_names)
        key = dialect.ident(self.use_case.entity_key)
        text = f"SELECT count(n) FROM (SELECT {fields}, {key} AS n FROM {dialect.ident(m.name)})"
        series = self._run(text).get("series") or []
        named = int(series[0]["values"][0][1]) if series else 0
        if not self.use_case.nameless_rows:
            return named
        raw = self._run(f"SELECT {fields} FROM {dialect.ident(m.name)} WHERE {key} = ''")
        return named + sum(len(s["values"]) for s in raw.get("series") or [])

    def count_rows(self, measurement: str, complete_fields: Sequence[str]) -> int:
        """The points holding a field every loaded row carries: one series per host read instead of
        one per field (1,000,000 hosts: 7 s against 46–70 s for ``row_count``)."""
        if not complete_fields:
            return self.row_count(measurement)
        text = f"SELECT count({dialect.ident(complete_fields[0])}) FROM {dialect.ident(measurement)}"
        series = self._run(text).get("series") or []
        return int(series[0]["values"][0][1]) if series else 0

    # ---- queries -------------------------------------------------------------------------------

    def render(self, query: LogicalQuery) -> str:
        if query.query_type.kind in iot_dialect.KINDS:
            return iot_dialect.render(query)
        return dialect.render(query)

    def session(self) -> InfluxSession:
        port = self.endpoint.port("http")
        return InfluxSession(self.endpoint.host, port, self.database, auth_headers(self.endpoint))

    # ---- facts ---------------------------------------------------------------------------------

    def footprint(self) -> Footprint:
        """TSM bytes from the server's own statistics, WAL and index files from the directories the
        statistics name (the WAL statistic double-counts the last segment after a restart). A server
        whose directories this process cannot see (a container, another host) is counted from its
        statistics alone; InfluxDB 2 from its metrics (``v2.bucket_footprint``)."""
        if self.v2:
            return self._v2_call(v2.bucket_footprint)
        stats = _ShardStats.of(self._run("SHOW STATS", database=False), self.database)
        tsm, wal_stat, shard_dirs, wal_dirs = stats.tsm, stats.wal, stats.shard_dirs, stats.wal_dirs
        if shard_dirs and not any(d.is_dir() for d in shard_dirs | wal_dirs):
            return Footprint(
                bytes=tsm + wal_stat,
                note=(
                    f"database {self.database!r}, {len(shard_dirs)} shard(s) on a server whose files are "
                    "not visible here: TSM files (SHOW STATS tsm1_filestore diskBytes) + WAL (tsm1_wal "
                    "segment bytes; the last segment counts twice after a restart); series file and "
                    "index files not counted (the runtime's disk_bytes has the whole volume)"
                ),
                parts={"tsm": tsm, "wal": wal_stat},
            )
        wal = _wal_files(wal_dirs)
        # shard-level index files: fields.idx (inmem) or the tsi1 index/ folder
        shard_index = sum(
            _allocated(f)
            for d in shard_dirs
            if d.is_dir()
            for f in d.iterdir()
            if not f.name.endswith(".tsm")
        )
        series_dirs = {d.parent.parent / "_series" for d in shard_dirs}
        if not series_dirs and self.endpoint.data_dirs:
            series_dirs = {Path(self.endpoint.data_dirs[0]) / self.database / "_series"}
        series_file = allocated_bytes(sorted(series_dirs))
        parts = {"tsm": tsm, "wal": wal, "series_file": series_file, "shard_index": shard_index}
        return Footprint(
            bytes=sum(parts.values()),
            note=(
                f"database {self.database!r}, {len(shard_dirs)} shard(s): TSM files (SHOW STATS "
                "tsm1_filestore diskBytes) + WAL segment files + the database's series file (_series, "
                "blocks allocated: its segments are sparse) + shard index files (fields.idx; tsi1 index); "
                "the inmem series index itself lives in memory only"
            ),
            parts=parts,
        )

    def _rollup_bytes(self) -> int:
        """The rollup's retention policy: TSM files (``SHOW STATS``) + WAL segment files (their
        statistics when the files are not visible here; see ``footprint``)."""
        stats = _ShardStats.of(self._run("SHOW STATS", database=False), self.database, rollup=True)
        return stats.tsm + (
            _wal_files(stats.wal_dirs) if any(d.is_dir() for d in stats.wal_dirs) else stats.wal
        )

    def version(self) -> str:
        try:
            response = requests.get(f"{self.url}/ping", timeout=10)
        except requests.RequestException as error:
            raise TargetError(f"influxdb: /ping failed: {error}") from error
        return response.headers.get("X-Influxdb-Version", "unknown")

    def settings(self) -> dict[str, Any]:
        if self.v2:
            from tsbench.targets.influxdb.container import V2_TUNING

            facts: dict[str, Any] = {**V2_TUNING, "api": "1.x compatibility (/write, /query) with a token"}
        else:
            facts = {f"data.{k}": v for k, v in TUNING.items()}
            facts["GOMEMLIMIT share of RAM"] = InfluxDBServer.memory_limit_share
        facts.update(
            {
                "GOGC": InfluxDBServer.gogc,
                "write": f"line protocol over HTTP /write, precision ns, gzip level {self.gzip_level}",
                "tag order on the wire": self.tag_order,
            }
        )
        try:
            policies = self._run(f"SHOW RETENTION POLICIES ON {dialect.ident(self.database)}", database=False)
            for series in policies.get("series", ()):
                for values in series.get("values", ()):
                    row = dict(zip(series["columns"], values, strict=True))
                    if row.get("default"):
                        facts["retention policy"] = row.get("name")
                        facts["shard group duration"] = row.get("shardGroupDuration")
        except TargetError:
            pass
        return facts

    def close(self) -> None:
        with self._lock:
            if self._http is not None:
                self._http.close()
                self._http = None


TARGET = InfluxDBTarget
