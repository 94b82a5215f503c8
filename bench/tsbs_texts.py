"""The TSBS query side of ``bench/vs_tsbs.py``: generate query files, read the exact texts TSBS
sends, run them (data and load side: ``tsbs_side.py``).

No TSBS runner can print its queries without sending them (no dry-run flag: ``--debug`` and
``--print-responses`` print only after each query ran; ``--show-explain`` runs EXPLAIN ANALYZE;
``tsbs_generate_queries --debug=3`` prints at generation time through ``Fprintf`` with the text as
the *format*, which mangles every ``%``). So the query file is read here: it is a stream of Go
``encoding/gob`` messages (Go's documented, self-describing wire format), one struct per query —
``query.HTTP`` (questdb, influx) or ``query.TimescaleDB`` — decoded by ``_Gob`` below.

What each runner sends, and what the texts assume:
- questdb: ``GET http://H:P/exec?count=false&query=<SQL>``; table ``cpu`` (``hostname``,
  ``timestamp``, fields), no database name. At start the runner ALSO sends
  ``ALTER TABLE cpu ALTER COLUMN hostname ADD INDEX`` when ``cpu`` exists (untimed, changes schema).
- influx: ``POST http://H:P/query?q=<InfluxQL>&db=<--db-name>`` (default ``benchmark``);
  measurement ``cpu``, tag ``hostname``.
- timescaledb: the SQL over pgx to database ``--db-name`` (default ``benchmark``); tables ``cpu``
  (``tags_id``) and ``tags`` (``hostname``…), ``time_bucket`` unless generated with
  ``--timescale-use-time-bucket=false`` (then ``to_timestamp(((extract(epoch from time)::int)/N)*N)``,
  for plain PostgreSQL — and for a TimescaleDB server loaded by TSBS, whose ``benchmark`` database
  lacks the extension: ``function time_bucket(unknown, timestamp with time zone) does not exist``).
The same seed gives the same parameters across formats for some query types only (high-cpu-1:
questdb/influx host_9, timescaledb host_5 at seed 123).
"""

from __future__ import annotations

import dataclasses
import re
import struct
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__:  # imported as bench.tsbs_texts
    from .tsbs_side import DAY_END, DAY_START, Format, Pids, TsbsRun, run_tsbs
else:  # bench/ on sys.path (scripts in bench/)
    from tsbs_side import DAY_END, DAY_START, Format, Pids, TsbsRun, run_tsbs

# ------------------------------------------------------------------------------------------- gob


_COMMON = (("Name", 6), ("Id", 2))
_BOOT: dict[int, tuple[str, Any]] = {  # gob's own wire types, ids fixed by encoding/gob
    16: ("struct", [("ArrayT", 17), ("SliceT", 19), ("StructT", 20), ("MapT", 23)]),
    17: ("struct", [("CommonType", 18), ("Elem", 2), ("Len", 2)]),
    18: ("struct", _COMMON),
    19: ("struct", [("CommonType", 18), ("Elem", 2)]),
    20: ("struct", [("CommonType", 18), ("Field", 22)]),
    21: ("struct", _COMMON),
    22: ("slice", 21),
    23: ("struct", [("CommonType", 18), ("Key", 2), ("Elem", 2)]),
}


class _Gob:
    """A reader of a gob stream: type definitions (struct, slice, array, map) and values of them
    built from bool, int, uint, float, []byte and string — all TSBS query files use."""

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0
        self.types: dict[int, tuple[str, Any]] = dict(_BOOT)

    def uint(self) -> int:
        first = self.data[self.pos]
        self.pos += 1
        if first < 0x80:
            return first
        n = 256 - first  # a negated byte count, then that many big-endian bytes
        self.pos += n
        return int.from_bytes(self.data[self.pos - n : self.pos], "big")

    def int(self) -> int:
        u = self.uint()
        return ~(u >> 1) if u & 1 else u >> 1

    def raw(self) -> bytes:
        n = self.uint()
        self.pos += n
        return self.data[self.pos - n : self.pos]

    def value(self, tid: int) -> Any:
        scalar = {1: lambda: self.uint() != 0, 2: self.int, 3: self.uint, 5: self.raw}
        if tid in scalar:
            return scalar[tid]()
        if tid == 4:  # float64 bits, byte-reversed, sent as a uint
            return struct.unpack(">d", self.uint().to_bytes(8, "big")[::-1])[0]
        if tid == 6:
            return self.raw().decode()
        kind, spec = self.types[tid]
        if kind == "struct":
            out, index = {}, -1
            while delta := self.uint():
                index += delta
                name, ftid = spec[index]
                out[name] = self.value(ftid)
            return out
        if kind == "map":
            return dict((self.value(spec[0]), self.value(spec[1])) for _ in range(self.uint()))
        return [self.value(spec) for _ in range(self.uint())]  # slice or array

    def define(self, tid: int) -> None:
        wire = self.value(16)
        if "StructT" in wire:
            self.types[tid] = ("struct", [(f["Name"], f["Id"]) for f in wire["StructT"].get("Field", [])])
        elif "MapT" in wire:
            self.types[tid] = ("map", (wire["MapT"]["Key"], wire["MapT"]["Elem"]))
        else:
            self.types[tid] = ("slice", (wire.get("SliceT") or wire["ArrayT"])["Elem"])

    def messages(self) -> list[Any]:
        """Every top-level value; each message is ``uint length, int type id, body``."""
        values = []
        while self.pos < len(self.data):
            length = self.uint()
            end, tid = self.pos + length, self.int()
            if tid < 0:
                self.define(-tid)
            else:
                if self.types[tid][0] != "struct":
                    self.uint()  # a non-struct top-level value is preceded by a 0 delta
                values.append(self.value(tid))
            self.pos = end
        return values


# ----------------------------------------------------------------------------------------- texts


@dataclass(frozen=True)
class TsbsQuery:
    """One query of a TSBS query file. ``path``: the HTTP request path+query the runner sends
    (influx then appends ``&db=<db>``); None for timescaledb."""

    label: str
    description: str
    text: str
    method: str | None = None
    path: str | None = None


def read_queries(fmt: Format, query_file: Path) -> list[TsbsQuery]:
    """Decode a ``tsbs_generate_queries`` file. HTTP texts are taken from the request path (what is
    sent), and checked against the struct's ``RawQuery``."""
    out = []
    for q in _Gob(query_file.read_bytes()).messages():
        label, desc = q.get("HumanLabel", b"").decode(), q.get("HumanDescription", b"").decode()
        if fmt == "timescaledb":
            out.append(TsbsQuery(label, desc, q["SqlQuery"].decode()))
            continue
        path = q["Path"].decode()
        params = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query, keep_blank_values=True)
        text = params["q" if fmt == "influx" else "query"][0]
        if text != q.get("RawQuery", b"").decode():
            raise ValueError(f"{query_file}: request text differs from RawQuery: {text!r}")
        out.append(TsbsQuery(label, desc, text, q["Method"].decode(), path))
    return out


def query_texts(bin_dir: Path | None, fmt: Format, query_file: Path) -> list[str]:
    """The exact SQL (questdb, timescaledb) or InfluxQL (influx) strings, in file order. ``bin_dir``
    is not needed (decoded in Python) and may be None."""
    return [q.text for q in read_queries(fmt, query_file)]


# --------------------------------------------------------------------------------------- generate


@dataclass(frozen=True)
class QueryFile:
    """A ``tsbs_generate_queries`` output (gob-encoded queries) and its count per query label."""

    run: TsbsRun
    path: Path
    fmt: Format
    query_type: str
    counts: dict[str, int]


def generate_queries(
    bin_dir: Path,
    *,
    fmt: Format,
    query_type: str,
    out: Path,
    count: int = 100,
    scale: int = 100,
    seed: int = 123,
    start: str = DAY_START,
    end: str = DAY_END,
    use_case: str = "cpu-only",
    timescale_use_time_bucket: bool = True,
) -> QueryFile:
    """``tsbs_generate_queries``; ``error`` if TSBS refuses. [start, end) must be LONGER than the
    query window (1 h single-groupby, 8 h cpu-max-all-8, 12 h double-groupby/high-cpu: else ``random
    window equal to or larger than TimeInterval``). ``timescale_use_time_bucket=False``: see module
    docstring. QuestDB has no cpu-max-all-* (``does not implement query``); its double-groupby-*
    texts fail on QuestDB 9 (HTTP 400 ``must not contain both GROUP BY and SAMPLE BY``)."""
    argv = [str(bin_dir / "tsbs_generate_queries"), f"--use-case={use_case}", f"--scale={scale}"]
    argv += [f"--seed={seed}", f"--timestamp-start={start}", f"--timestamp-end={end}"]
    argv += [f"--queries={count}", f"--query-type={query_type}", f"--format={fmt}", f"--file={out}"]
    if fmt == "timescaledb":
        argv.append(f"--timescale-use-time-bucket={str(timescale_use_time_bucket).lower()}")
    run = run_tsbs(argv)
    counts = {m[1]: int(m[2]) for m in re.finditer(r"^(.+): (\d+) points$", run.output, re.M)}
    return QueryFile(run, out, fmt, query_type, counts if run.ok else {})


# -------------------------------------------------------------------------------------------- run


@dataclass(frozen=True)
class QueryStat:
    """TSBS's latency summary of one query label, in milliseconds."""

    label: str
    count: int
    min_ms: float
    median_ms: float
    mean_ms: float
    max_ms: float
    stddev_ms: float


@dataclass(frozen=True)
class QueryRunResult:
    """A runner's run, TSBS's overall query rate (queries/s) and stats by label (incl. ``all queries``)."""

    run: TsbsRun
    queries: int | None = None
    queries_per_s: float | None = None
    by_label: dict[str, QueryStat] = field(default_factory=dict)


_COMPLETE = re.compile(r"Run complete after (\d+) queries with \d+ workers \(Overall query rate ([\d.]+) ")
_STAT = re.compile(
    r"^(.*\S)\s*:\s*\nmin:\s*([\d.]+)ms, med:\s*([\d.]+)ms, mean:\s*([\d.]+)ms, max:\s*([\d.]+)ms, "
    r"stddev:\s*([\d.]+)ms, sum:\s*[\d.]+sec, count: (\d+)",
    re.M,
)


def _run_queries(
    argv: list[str], server_pids: Pids | None, timeout_s: float, env: dict | None = None
) -> QueryRunResult:
    """Run with ``--print-interval=0`` (no periodic stats); a failed query panics the runner."""
    run = run_tsbs([*argv, "--print-interval=0"], server_pids=server_pids, env=env, timeout_s=timeout_s)
    done = _COMPLETE.search(run.output)
    stats = {
        m[1]: QueryStat(m[1], int(m[7]), *map(float, m.group(2, 3, 4, 5, 6)))
        for m in _STAT.finditer(run.output)
    }
    if run.ok and not done:
        run = dataclasses.replace(run, error="no 'Run complete' summary in TSBS output")
    return QueryRunResult(run, done and int(done[1]), done and float(done[2]), stats)


def run_queries_questdb(
    bin_dir: Path,
    query_file: Path,
    *,
    host: str = "127.0.0.1",
    http_port: int = 9000,
    workers: int = 1,
    server_pids: Pids | None = None,
    timeout_s: float = 3600.0,
) -> QueryRunResult:
    """``tsbs_run_queries_questdb --urls=http://H:P`` (REST ``/exec``; first adds an index on
    ``cpu.hostname``, see the module docstring). A non-200 answer panics the runner."""
    argv = [str(bin_dir / "tsbs_run_queries_questdb"), f"--file={query_file}", f"--workers={workers}"]
    return _run_queries([*argv, f"--urls=http://{host}:{http_port}"], server_pids, timeout_s)


def run_queries_influx(
    bin_dir: Path,
    query_file: Path,
    *,
    url: str = "http://127.0.0.1:8086",
    db: str = "benchmark",
    workers: int = 1,
    server_pids: Pids | None = None,
    timeout_s: float = 3600.0,
) -> QueryRunResult:
    """``tsbs_run_queries_influx --urls=URL --db-name=DB`` (HTTP ``/query``, no chunking)."""
    argv = [str(bin_dir / "tsbs_run_queries_influx"), f"--file={query_file}", f"--workers={workers}"]
    return _run_queries([*argv, f"--urls={url}", f"--db-name={db}"], server_pids, timeout_s)


def run_queries_postgres(
    bin_dir: Path,
    query_file: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 5432,
    user: str = "postgres",
    password: str | None = None,
    db: str = "benchmark",
    workers: int = 1,
    server_pids: Pids | None = None,
    timeout_s: float = 3600.0,
) -> QueryRunResult:
    """``tsbs_run_queries_timescaledb --hosts=H --port=P --user=U --db-name=DB
    --postgres=sslmode=disable`` (pgx; one connection per worker); password via ``PGPASSWORD``."""
    argv = [str(bin_dir / "tsbs_run_queries_timescaledb"), f"--file={query_file}", f"--workers={workers}"]
    argv += [
        f"--hosts={host}",
        f"--port={port}",
        f"--user={user}",
        f"--db-name={db}",
        "--postgres=sslmode=disable",
    ]
    return _run_queries(argv, server_pids, timeout_s, env={"PGPASSWORD": password} if password else None)
