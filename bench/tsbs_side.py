"""The TSBS side of ``bench/vs_tsbs.py``: build TSBS @37fced7 once, run its binaries, time them.

TSBS is only run, never copied: the unmodified archive of commit 37fced7 (``tsbs-37fced7.tar.gz`` from
the vendor folder, else upstream's archive of that commit; its tree hash checked by
``tsbench.runtimes.source_archive``) is built into ``$TSBENCH_OPT/tsbs-37fced7/bin/``.

Every run gives wall seconds, the client's CPU-seconds (user+sys rusage of the TSBS process from
``os.wait4``), optionally the server's CPU-seconds (``CpuMeter`` over given pids), the raw output, and
``error`` (None on success; else the reason, e.g. the Go ``panic:`` text). Binaries run in a fresh
empty cwd: TSBS's viper reads any ``config.*`` file from the cwd. Database names default to TSBS's
``benchmark``; the loaders for InfluxDB and PostgreSQL DROP and re-create that database.
Query side (generate query files, their exact texts, run them): ``tsbs_texts.py``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import psutil

from tsbench.runtimes.source_archive import ArchiveError, verified_archive

ROOT = Path(__file__).resolve().parents[1]
TSBS_NAME = "tsbs-37fced7"
# The pin: the archive's name in the vendor folder, upstream's archive of the commit, the tree hash.
ARCHIVE_NAME = f"{TSBS_NAME}.tar.gz"
ARCHIVE_URL = "https://github.com/timescale/tsbs/archive/37fced794d56d3b33fbf40e55a0f1d3d78d05802.tar.gz"
ARCHIVE_TREE_SHA256 = "f998bbdf13138732dd5ab980e49e9dcdcf8377126c29adb23f87ae3b71181a96"
_PAIRS = ((verb, db) for verb in ("load", "run_queries") for db in ("questdb", "timescaledb", "influx"))
COMMANDS = ("tsbs_generate_data", "tsbs_generate_queries", *(f"tsbs_{v}_{db}" for v, db in _PAIRS))
Format = Literal["influx", "questdb", "timescaledb"]
Pids = Iterable[int] | Callable[[], Iterable[int]]
DAY_START, DAY_END = "2016-01-01T00:00:00Z", "2016-01-02T00:00:00Z"


class TsbsError(RuntimeError):
    """TSBS could not be built."""


# --------------------------------------------------------------------------------------------- build


def opt_root() -> Path:
    """``$TSBENCH_OPT``, default ``${XDG_CACHE_HOME:-~/.cache}/tsbench/opt`` (as scripts/lib.sh)."""
    if opt := os.environ.get("TSBENCH_OPT"):
        return Path(opt)
    return Path(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")) / "tsbench" / "opt"


def _built(home: Path) -> bool:
    marker = home / "BUILT"
    return (
        marker.is_file()
        and marker.read_text().strip() == ARCHIVE_TREE_SHA256
        and all((home / "bin" / c).is_file() for c in COMMANDS)
    )


def _compile(home: Path) -> None:
    """Verify, unpack, ``go build`` into ``home/bin.new``, swap it in (the caller holds the lock).
    ``-mod=mod``: TSBS's go.sum lacks ``github.com/tklauser/numcpus`` v0.2.2; Go caches live in
    ``$TSBENCH_OPT/go`` as in scripts/install_*.sh."""
    try:
        archive = verified_archive(ARCHIVE_NAME, ARCHIVE_TREE_SHA256, ARCHIVE_URL, home)
    except ArchiveError as error:
        raise TsbsError(str(error)) from error
    go = opt_root() / "go"
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "GOPATH": str(go / "path")}
    env |= {"GOMODCACHE": str(go / "mod"), "GOCACHE": str(go / "cache")}
    new_bin, log = home / "bin.new", home / "build.log"
    with tempfile.TemporaryDirectory(prefix="src-", dir=home) as tmp:
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        (source,) = Path(tmp).iterdir()  # the top folder: the vendored copy's or upstream's name
        shutil.rmtree(new_bin, ignore_errors=True)
        cmd = ["go", "build", "-o", f"{new_bin}/", *(f"./cmd/{c}" for c in COMMANDS)]
        with log.open("w") as out:
            done = subprocess.run(cmd, cwd=source, env=env, stdout=out, stderr=out)
        if done.returncode != 0:
            raise TsbsError(f"go build failed ({done.returncode}); {log}:\n{log.read_text()[-2000:]}")
    shutil.rmtree(home / "bin", ignore_errors=True)
    new_bin.rename(home / "bin")


def build_tsbs() -> Path:
    """Build TSBS @37fced7 once per machine; return ``$TSBENCH_OPT/tsbs-37fced7/bin``.

    ``BUILT`` (the pinned tree hash) is written last, so a half-finished build is redone; ``.lock``
    (flock) makes a concurrent caller wait for the build. Took 72 s here with the shared Go caches
    partly warm (vendor README: ≈ 2 min download + ≈ 3 min compile cold); later calls take ~1 ms.
    """
    home = opt_root() / TSBS_NAME
    if _built(home):
        return home / "bin"
    home.mkdir(parents=True, exist_ok=True)
    with (home / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _built(home):
            (home / "BUILT").unlink(missing_ok=True)
            for stale in home.glob("src-*"):  # left by a killed build
                shutil.rmtree(stale, ignore_errors=True)
            started = time.monotonic()
            _compile(home)
            (home / "build.seconds").write_text(f"{time.monotonic() - started:.1f}\n")
            (home / "BUILT.tmp").write_text(f"{ARCHIVE_TREE_SHA256}\n")
            (home / "BUILT.tmp").replace(home / "BUILT")
    return home / "bin"


# ------------------------------------------------------------------------------------------ measure


class CpuMeter:
    """CPU-seconds (user+sys) a process tree used during a ``with`` block: ``meter.seconds``.

    ``pids``: the tree's roots, or a callable returning them (re-read at both snapshots); every
    descendant belongs to the tree. Each process counts its own time plus its *reaped* children's,
    so short-lived children (PostgreSQL backends) count as long as their parent stays in the tree.
    Time of a process that exits unreaped, or whose parent is outside the tree, is lost.
    """

    def __init__(self, pids: Pids):
        self._pids = pids if callable(pids) else list(pids)
        self._start = 0.0
        self.seconds: float | None = None

    def snapshot(self) -> float:
        """Total CPU-seconds of the tree now (own + reaped children of every live member)."""
        tree: dict[int, psutil.Process] = {}
        for pid in self._pids() if callable(self._pids) else self._pids:
            with contextlib.suppress(psutil.Error):
                root = psutil.Process(pid)
                tree |= {p.pid: p for p in [root, *root.children(recursive=True)]}
        total = 0.0
        for proc in tree.values():
            with contextlib.suppress(psutil.Error):
                t = proc.cpu_times()
                total += t.user + t.system + t.children_user + t.children_system
        return total

    def __enter__(self) -> CpuMeter:
        self._start = self.snapshot()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = round(max(0.0, self.snapshot() - self._start), 6)


@dataclass(frozen=True)
class TsbsRun:
    """One TSBS process: ``wall_s`` and CPU in seconds; ``output`` is stdout+stderr merged."""

    argv: tuple[str, ...]
    returncode: int
    wall_s: float
    client_cpu_s: float
    server_cpu_s: float | None
    output: str
    error: str | None

    @property
    def ok(self) -> bool:
        return self.error is None


def _failure(returncode: int, output: str) -> str | None:
    """None for exit 0; else Go's ``panic:`` text (with what preceded it on its line, e.g.
    ``could not execute sql: …``) or the last output line."""
    if returncode == 0:
        return None
    lines = [line for line in output.splitlines() if line.strip()]
    for line in lines:
        if (at := line.find("panic: ")) >= 0:
            before = line[:at].strip()
            return line[at + 7 :].strip() + (f" [{before}]" if before else "")
    last = re.sub(r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d ", "", lines[-1]) if lines else "(no output)"
    return f"exit {returncode}: {last}"


def run_tsbs(
    argv: list[str],
    *,
    server_pids: Pids | None = None,
    env: Mapping[str, str] | None = None,
    timeout_s: float = 3600.0,
) -> TsbsRun:
    """Run one TSBS binary in an empty cwd; time it; never raises for a failing TSBS."""
    meter = CpuMeter(server_pids) if server_pids is not None else None
    penv = {**os.environ, **(env or {})}
    with tempfile.TemporaryDirectory(prefix="tsbs-run-") as cwd, (Path(cwd) / ".out").open("w+b") as out:
        with meter or contextlib.nullcontext():
            started = time.perf_counter()
            proc = subprocess.Popen(argv, cwd=cwd, env=penv, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
            timer = threading.Timer(timeout_s, proc.kill)
            timer.start()
            try:
                _, status, usage = os.wait4(proc.pid, 0)
            except BaseException:
                proc.kill()
                proc.wait()
                raise
            finally:
                timer.cancel()
            wall = time.perf_counter() - started
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    error = _failure(code, text)
    if code < 0 and wall >= timeout_s:
        error = f"timed out after {timeout_s:.0f} s"
    return TsbsRun(
        tuple(argv), code, wall, usage.ru_utime + usage.ru_stime, meter and meter.seconds, text, error
    )


# --------------------------------------------------------------------------------------- generators


@dataclass(frozen=True)
class DataFile:
    """A ``tsbs_generate_data`` output: its path, rows (one per host and timestamp) and bytes."""

    run: TsbsRun
    path: Path
    fmt: Format
    rows: int
    bytes: int


def count_rows(path: Path, fmt: Format) -> int:
    """Rows in a TSBS data file. influx/questdb (ILP): one line per row. timescaledb: a header
    (``tags,<name type>…``, one ``<table>,<field>…`` line per table, a blank line), then TWO lines
    per row: ``tags,hostname=…,…`` and ``cpu,<unix ns>,<values>``."""
    lines = header = 0
    with path.open("rb") as f:
        if fmt == "timescaledb":
            for line in f:
                header += 1
                if not line.strip():
                    break
        for chunk in iter(lambda: f.read(1 << 22), b""):
            lines += chunk.count(b"\n")
    return lines // 2 if fmt == "timescaledb" else lines


def generate_data(
    bin_dir: Path,
    *,
    out: Path,
    fmt: Format = "influx",
    use_case: str = "cpu-only",
    scale: int = 100,
    seed: int = 123,
    start: str = DAY_START,
    end: str = DAY_END,
    log_interval: str = "10s",
) -> DataFile:
    """``tsbs_generate_data``: ``scale`` hosts, one row per host every ``log_interval`` in
    [start, end). cpu-only values are integers: ILP ``58i`` (InfluxDB int64 fields, QuestDB LONG
    columns); the timescaledb format's loader creates DOUBLE PRECISION columns."""
    argv = [str(bin_dir / "tsbs_generate_data"), f"--use-case={use_case}", f"--scale={scale}"]
    argv += [f"--seed={seed}", f"--timestamp-start={start}", f"--timestamp-end={end}"]
    argv += [f"--log-interval={log_interval}", f"--format={fmt}", f"--file={out}"]
    run = run_tsbs(argv)
    ok = run.ok and out.is_file()
    return DataFile(run, out, fmt, count_rows(out, fmt) if ok else 0, out.stat().st_size if ok else 0)


# ------------------------------------------------------------------------------------------ loaders


@dataclass(frozen=True)
class LoadResult:
    """A loader run and TSBS's summary: rows/metrics loaded, its load window ``seconds`` and mean
    rates (per s). That window starts after the database setup, which ``run.wall_s`` includes
    (influx: a 1 s sleep after CREATE DATABASE, +1 s after DROP; postgres: DROP/CREATE DATABASE)."""

    run: TsbsRun
    rows: int | None = None
    metrics: int | None = None
    seconds: float | None = None
    rows_per_s: float | None = None
    metrics_per_s: float | None = None


_LOADED = re.compile(r"loaded (\d+) (metrics|rows) in ([\d.]+)sec with \d+ workers \(mean rate ([\d.]+) ")


def _load(argv: list[str], server_pids: Pids | None, timeout_s: float, env: dict | None = None) -> LoadResult:
    """Run a loader with ``--reporting-period=0s`` (no periodic progress lines); parse its summary."""
    run = run_tsbs([*argv, "--reporting-period=0s"], server_pids=server_pids, env=env, timeout_s=timeout_s)
    got = {m[2]: (int(m[1]), float(m[3]), float(m[4])) for m in _LOADED.finditer(run.output)}
    if run.ok and "rows" not in got:
        run = dataclasses.replace(run, error="no 'loaded … rows' summary in TSBS output")
    none = (None, None, None)
    (rows, seconds, rows_s), (metrics, _, metrics_s) = got.get("rows", none), got.get("metrics", none)
    return LoadResult(run, rows, metrics, seconds, rows_s, metrics_s)


def load_questdb(
    bin_dir: Path,
    file: Path,
    *,
    host: str = "127.0.0.1",
    ilp_port: int = 9009,
    http_port: int = 9000,
    workers: int = 2,
    batch_size: int = 10_000,
    drop_existing: bool = True,
    server_pids: Pids | None = None,
    timeout_s: float = 3600.0,
) -> LoadResult:
    """``tsbs_load_questdb --url=http://H:HTTP --ilp-bind-to=H:ILP``: ILP over plain TCP, one
    connection per worker (our recipe's ``ilp`` port role, ``line.tcp.net.bind.to``); QuestDB
    creates table ``cpu`` itself, fields as LONG (the data is integer). The loader has no --db-name /
    --do-create-db and panics ``cpu table already exists`` if ``cpu`` exists, so ``drop_existing``
    drops it first over HTTP (untimed). Its rate is the socket-write rate: rows become visible
    only after QuestDB commits (poll ``count()`` to know when)."""
    if drop_existing:
        query = urllib.parse.urlencode({"query": "DROP TABLE IF EXISTS cpu"})
        with urllib.request.urlopen(f"http://{host}:{http_port}/exec?{query}", timeout=60) as reply:
            reply.read()
    argv = [str(bin_dir / "tsbs_load_questdb"), f"--file={file}", f"--workers={workers}"]
    argv += [f"--batch-size={batch_size}", f"--url=http://{host}:{http_port}"]
    argv += [f"--ilp-bind-to={host}:{ilp_port}"]
    return _load(argv, server_pids, timeout_s)


def load_influx(
    bin_dir: Path,
    file: Path,
    *,
    url: str = "http://127.0.0.1:8086",
    db: str = "benchmark",
    workers: int = 2,
    batch_size: int = 10_000,
    gzip: bool = True,
    server_pids: Pids | None = None,
    timeout_s: float = 3600.0,
) -> LoadResult:
    """``tsbs_load_influx --urls=URL --db-name=DB``: HTTP ``/write?consistency=all&db=DB``, bodies
    gzip-compressed BY DEFAULT (``--gzip`` defaults to true: its client pays gzip CPU). With the
    default ``--do-create-db=true`` it DROPs ``db`` if it exists and re-creates it."""
    argv = [str(bin_dir / "tsbs_load_influx"), f"--file={file}", f"--workers={workers}"]
    argv += [f"--batch-size={batch_size}", f"--urls={url}", f"--db-name={db}", f"--gzip={str(gzip).lower()}"]
    return _load(argv, server_pids, timeout_s)


def load_postgres(
    bin_dir: Path,
    file: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 5432,
    user: str = "postgres",
    password: str | None = None,
    db: str = "benchmark",
    workers: int = 2,
    batch_size: int = 10_000,
    use_hypertable: bool = False,
    server_pids: Pids | None = None,
    timeout_s: float = 3600.0,
) -> LoadResult:
    """``tsbs_load_timescaledb`` (pgx COPY): DROPs and re-creates database ``db`` via
    ``--admin-db-name=postgres``, then ``tags(id SERIAL PRIMARY KEY, hostname TEXT, …)`` and
    ``cpu(time timestamptz, tags_id integer, <10 DOUBLE PRECISION>, additional_tags JSONB)`` with
    indexes (tags_id, "time" DESC) and ("time" DESC) (+ tags: UNIQUE(all tags), index on hostname)
    — TSBS's defaults, which match ours
    (``--use-jsonb-tags=false --in-table-partition-tag=false --partition-index=true --time-index=true
    --field-index-count=0``). ``use_hypertable=False`` (``--use-hypertable=false``) loads a plain
    PostgreSQL table; ``True`` fails on TimescaleDB ≥ 2.14 (create_hypertable's ``replication_factor``
    argument is gone) and the result carries that error. The password goes in ``PGPASSWORD``,
    never on the command line."""
    argv = [str(bin_dir / "tsbs_load_timescaledb"), f"--file={file}", f"--workers={workers}"]
    argv += [f"--batch-size={batch_size}", f"--host={host}", f"--port={port}", f"--user={user}"]
    argv += [f"--db-name={db}", "--admin-db-name=postgres", "--postgres=sslmode=disable"]
    argv += [f"--use-hypertable={str(use_hypertable).lower()}"]
    return _load(argv, server_pids, timeout_s, env={"PGPASSWORD": password} if password else None)
