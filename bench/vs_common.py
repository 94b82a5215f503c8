"""Shared pieces of ``bench/vs_tsbs.py``: the TSBS tool of each target, trial statistics, servers.

The table ``TSBS_TOOLS`` is the bench's own knowledge of which TSBS binaries and formats match which
of our targets (TSBS names PostgreSQL and TimescaleDB both "timescaledb"); it is bench data, read
by the sections, never by the product.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "plugins"))
sys.path.insert(0, str(ROOT / "bench"))

import tsbs_side  # noqa: E402
import tsbs_texts  # noqa: E402

from tsbench.runtimes.local import LocalRuntime, LocalServer, ServerRecipe  # noqa: E402
from tsbench.targets.base import Endpoint, Target  # noqa: E402
from tsbench.targets.influxdb.server import InfluxDBServer  # noqa: E402
from tsbench.targets.registry import load_target  # noqa: E402
from tsbench.workload.dataset import Dataset  # noqa: E402


def _questdb_load(bin_dir: Path, file: Path, ep: Endpoint, workers: int, batch: int, pids: Any):
    return tsbs_side.load_questdb(
        bin_dir, file, host=ep.host, ilp_port=ep.port("ilp"), http_port=ep.port("http"),
        workers=workers, batch_size=batch, server_pids=pids,
    )  # fmt: skip


def _influx_load(bin_dir: Path, file: Path, ep: Endpoint, workers: int, batch: int, pids: Any):
    url = f"http://{ep.host}:{ep.port('http')}"
    db = ep.database or "benchmark"
    return tsbs_side.load_influx(
        bin_dir, file, url=url, db=db, workers=workers, batch_size=batch, server_pids=pids
    )


def _pg_args(ep: Endpoint) -> dict[str, Any]:
    return {
        "host": ep.host,
        "port": ep.port("pg"),
        "user": ep.user or "postgres",
        "password": ep.secrets.get("password"),
        "db": ep.database or "tsbench",
    }


def _postgres_load(bin_dir: Path, file: Path, ep: Endpoint, workers: int, batch: int, pids: Any):
    return tsbs_side.load_postgres(
        bin_dir, file, workers=workers, batch_size=batch, server_pids=pids, **_pg_args(ep)
    )


def _timescale_load(bin_dir: Path, file: Path, ep: Endpoint, workers: int, batch: int, pids: Any):
    """TSBS's hypertable path, into a database of its own (it drops and re-creates it)."""
    args = {**_pg_args(ep), "db": "tsbs_probe"}
    return tsbs_side.load_postgres(
        bin_dir, file, workers=workers, batch_size=batch, server_pids=pids, use_hypertable=True, **args
    )


def _questdb_queries(bin_dir: Path, file: Path, ep: Endpoint, workers: int, pids: Any):
    return tsbs_texts.run_queries_questdb(
        bin_dir, file, host=ep.host, http_port=ep.port("http"), workers=workers, server_pids=pids
    )


def _influx_queries(bin_dir: Path, file: Path, ep: Endpoint, workers: int, pids: Any):
    url = f"http://{ep.host}:{ep.port('http')}"
    db = ep.database or "benchmark"
    return tsbs_texts.run_queries_influx(bin_dir, file, url=url, db=db, workers=workers, server_pids=pids)


def _pg_queries(bin_dir: Path, file: Path, ep: Endpoint, workers: int, pids: Any):
    return tsbs_texts.run_queries_postgres(bin_dir, file, workers=workers, server_pids=pids, **_pg_args(ep))


class InfluxDBWithoutLogin(InfluxDBServer):
    """InfluxDB 1.x as the product runs it locally (loopback, same tuning), but with HTTP
    ``auth-enabled = false``, for this bench only: TSBS's ``tsbs_load_influx`` and
    ``tsbs_run_queries_influx`` (@37fced7) have no user or password flags. Both sides use this one
    server, so both go without the login check (our client's credentials are ignored by it)."""

    http_auth = False


@dataclass(frozen=True)
class TsbsTool:
    """How TSBS loads and queries the server of one of our targets."""

    data_format: str
    query_format: str
    time_bucket: bool  # TSBS SQL texts with time_bucket (TimescaleDB) or plain date arithmetic
    load: Callable[..., Any]
    queries: Callable[..., Any]
    sink: str  # protocol of the do-nothing endpoint for the client ceiling
    server: type[ServerRecipe] | None = None  # a bench-only server both sides use; None: the target's


TSBS_TOOLS = {
    "questdb": TsbsTool("questdb", "questdb", False, _questdb_load, _questdb_queries, "http"),
    "influxdb": TsbsTool(
        "influx", "influx", False, _influx_load, _influx_queries, "http", server=InfluxDBWithoutLogin
    ),
    "postgres": TsbsTool("timescaledb", "timescaledb", False, _postgres_load, _pg_queries, "pg"),
    "timescaledb": TsbsTool("timescaledb", "timescaledb", True, _timescale_load, _pg_queries, "pg"),
}


def spread(values: list[float]) -> dict[str, Any]:
    """median / min / max of trial values, and the values in trial order (empty → {})."""
    if not values:
        return {}
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "trials": values}


def fmt_k(value: float | None) -> str:
    return "—" if value is None else f"{value / 1000:,.0f} k"


def ratio(ours: float | None, theirs: float | None) -> float | None:
    return ours / theirs if ours and theirs else None


def server_pids(server: LocalServer) -> Callable[[], list[int]]:
    return lambda: [server.pid] if server.pid else []


@contextmanager
def serving(
    runtime: LocalRuntime, name: str, dataset: Dataset, tag: str
) -> Iterator[tuple[LocalServer, Target]]:
    """A fresh local server of target ``name`` (the bench's own where ``TSBS_TOOLS`` names one) and a
    connected target; torn down after."""
    target_type = load_target(name)
    instance = f"vs-tsbs-{tag}-{name}"
    server = runtime.provision_recipe(TSBS_TOOLS[name].server or target_type.server_recipe(), instance)
    target = target_type(server.endpoint(), dataset.use_case, dataset.tags())
    try:
        yield server, target
    finally:
        target.close()
        runtime.teardown(instance)


def alternating(trials: int, warmup: int = 1) -> Iterator[tuple[int, bool]]:
    """``(trial, tsbs_first)`` for warm-up + measured trials; the order swaps every trial (ABBA…),
    so drift of the machine favours neither side. Trial numbers < 0 are warm-ups."""
    for index in range(warmup + trials):
        yield index - warmup, index % 2 == 0
