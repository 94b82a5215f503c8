"""Generator, load and client-ceiling sections of ``bench/vs_tsbs.py``.

Load: identical rows on both sides — TSBS loads its own file; we load the dataset ``tsbench
import`` made of the same file, from wire-ready bodies encoded before the timed window (their
encoding time and CPU are printed as ``prepare``). Every trial's row count is checked on the server.
Rates: TSBS's own printed rate (its window starts after its database setup and, for QuestDB, ends
when its sockets are written, before QuestDB has committed); ours from before the first body is read
until the rows are visible (``flush``). So also TSBS's rate on the same terms as ours: per trial, its
rows over its own seconds plus the seconds from its exit until all its rows were visible
(``rows_per_s_until_visible``), and the ratio against that. Client CPU: TSBS process rusage; ours
this process's CPU over the load window. Server CPU: the server's process tree over the same run.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tsbs_side
from sinks import sink
from vs_common import TSBS_TOOLS, alternating, ratio, server_pids, serving, spread

from tsbench.measure.load import load
from tsbench.measure.wire_cache import ensure_wire_cache
from tsbench.runtimes.local import LocalRuntime
from tsbench.spec import DatasetSpec
from tsbench.targets.base import Endpoint
from tsbench.targets.registry import load_target
from tsbench.workload.dataset import Dataset, ensure_dataset


@dataclass
class Side:
    """Trials of one side: rows/s, client and server CPU-seconds per million rows."""

    rows_per_s: list[float] = field(default_factory=list)
    client_cpu_per_m: list[float] = field(default_factory=list)
    server_cpu_per_m: list[float] = field(default_factory=list)
    visible_after_s: list[float] = field(default_factory=list)  # TSBS: from its exit to all rows visible
    until_visible: list[float] = field(default_factory=list)  # TSBS: rows/s counted until then
    error: str | None = None

    def add(self, rows: int, rate: float, client_cpu: float, server_cpu: float | None) -> None:
        self.rows_per_s.append(rate)
        self.client_cpu_per_m.append(client_cpu / rows * 1e6)
        self.server_cpu_per_m.append((server_cpu or 0.0) / rows * 1e6)

    def add_visible_after(self, rows: int, rate: float, late_s: float) -> None:
        """TSBS's wait from its exit until all ``rows`` were visible, and its rate counted until then."""
        self.visible_after_s.append(late_s)
        self.until_visible.append(rows / (rows / rate + late_s))

    def summary(self) -> dict[str, Any]:
        return {
            "rows_per_s": spread(self.rows_per_s),
            "rows_per_s_until_visible": spread(self.until_visible),
            "client_cpu_s_per_million_rows": spread(self.client_cpu_per_m),
            "server_cpu_s_per_million_rows": spread(self.server_cpu_per_m),
            "visible_after_s": spread(self.visible_after_s),
            "error": self.error,
        }


def generator(bin_dir: Path, scale: int, trials: int, work: Path) -> dict[str, Any]:
    """TSBS's generator (ILP text file) against ours (Parquet dataset), same hosts and span."""
    tsbs, ours = Side(), Side()
    for trial, tsbs_first in alternating(trials):
        for side in ("tsbs", "ours") if tsbs_first else ("ours", "tsbs"):
            if side == "tsbs":
                made = tsbs_side.generate_data(bin_dir, out=work / f"gen-{trial}.influx", scale=scale)
                (work / f"gen-{trial}.influx").unlink()
                if trial >= 0:
                    tsbs.add(made.rows, made.rows / made.run.wall_s, made.run.client_cpu_s, 0.0)
                continue
            with tempfile.TemporaryDirectory(dir=work) as cache:
                started, cpu = time.perf_counter(), time.process_time()
                dataset, _ = ensure_dataset(DatasetSpec.parse(scale=scale, seed=123), cache)
                wall, cpu = time.perf_counter() - started, time.process_time() - cpu
            rows = sum(dataset.rows.values())
            if trial >= 0:
                ours.add(rows, rows / wall, cpu, 0.0)
    return {"tsbs": tsbs.summary(), "ours": ours.summary()}


def _ours_once(target: Any, dataset: Dataset, workers: int, batch: int, wire: Any, pids: Any) -> tuple:
    target.create_schema()
    with tsbs_side.CpuMeter(pids) as meter:
        result = load(target, dataset, workers, batch, wire=wire, progress_s=3600)
    counts = {m: target.row_count(m) for m in dataset.measurements}
    if counts != dataset.rows:
        raise RuntimeError(f"{target.name}: rows after load {counts}, dataset {dataset.rows}")
    return result.rows, result.rows_per_s, result.client_cpu_s, meter.seconds


def _tsbs_once(
    name: str, bin_dir: Path, files: dict[str, Path], target: Any, workers: int, batch: int, pids: Any
):
    """TSBS's load, then its rows counted on the server, polled until all are visible (its QuestDB
    loader exits when its sockets are written, before QuestDB has committed; at most 300 s).
    Returns TSBS's result and the seconds from its exit until the first count that saw every row
    was sent (0 when the first count already did: the count's own duration is not a delay)."""
    tool = TSBS_TOOLS[name]
    got = tool.load(bin_dir, files[tool.data_format], target.endpoint, workers, batch, pids)
    exited, count, late = time.perf_counter(), -1, 0.0
    while got.run.ok and count != got.rows:
        asked = time.perf_counter()
        try:
            count = target.row_count("cpu")
        except Exception:  # the table may not exist yet
            count = -1
        if count == got.rows and late:
            late = asked - exited  # the first count that saw every row was sent then
        elif count != got.rows:
            late = late or 1e-9
            if time.perf_counter() - exited > 300:
                raise RuntimeError(f"TSBS into {name}: {count} rows visible, it reported {got.rows}")
            time.sleep(0.02)
    return got, late


def _sweep_point(name: str, ctx: dict[str, Any], workers: int, trials: int) -> dict[str, Any]:
    """Alternating TSBS / tsbench loads at one worker count."""
    tsbs, ours = Side(), Side()
    target, pids, batch = ctx["target"], ctx["pids"], ctx["batch"]
    for trial, tsbs_first in alternating(trials):
        for side in ("tsbs", "ours") if tsbs_first else ("ours", "tsbs"):
            if side == "ours":
                measured = _ours_once(target, ctx["dataset"], workers, batch, ctx["wire"], pids)
                if trial >= 0:
                    ours.add(*measured)
                continue
            if tsbs.error is not None:
                continue
            got, waited = _tsbs_once(name, ctx["bin"], ctx["files"], target, workers, batch, pids)
            if not got.run.ok:
                tsbs.error = got.run.error
            elif trial >= 0:
                tsbs.add(got.rows, got.rows_per_s, got.run.client_cpu_s, got.run.server_cpu_s)
                tsbs.add_visible_after(got.rows, got.rows_per_s, waited)
    return {"tsbs": tsbs.summary(), "ours": ours.summary()}


def load_section(
    name: str, bin_dir: Path, files: dict[str, Path], dataset: Dataset, args: Any, runtime: LocalRuntime
) -> dict[str, Any]:
    """Worker sweep of alternating TSBS / tsbench loads into one server of target ``name``."""
    started, cpu = time.perf_counter(), time.process_time()
    wire = ensure_wire_cache(dataset, load_target(name), args.batch_size)
    prepare = {
        "wall_s": time.perf_counter() - started,
        "cpu_s": time.process_time() - cpu,
        **wire.facts().to_json(),
    }
    sweep: dict[int, dict[str, Any]] = {}
    with serving(runtime, name, dataset, "load") as (server, target):
        ctx = {
            "target": target, "pids": server_pids(server), "batch": args.batch_size, "dataset": dataset,
            "wire": wire, "bin": bin_dir, "files": files,
        }  # fmt: skip
        for workers in args.workers:
            sweep[workers] = _sweep_point(name, ctx, workers, args.trials)
            _print_load_row(name, workers, sweep[workers])
    return {"prepare": prepare, "workers": sweep}


def _print_load_row(name: str, workers: int, row: dict[str, Any]) -> None:
    theirs, ours = row["tsbs"], row["ours"]
    rate_t = theirs["rows_per_s"].get("median")
    rate_o = ours["rows_per_s"]["median"]
    cpu_t = theirs["client_cpu_s_per_million_rows"].get("median")
    cpu_o = ours["client_cpu_s_per_million_rows"]["median"]
    shown = ratio(rate_o, rate_t)
    late = theirs["visible_after_s"].get("median")
    same_terms = ratio(rate_o, theirs["rows_per_s_until_visible"].get("median"))
    print(
        f"  {name:<12} w={workers}  TSBS {rate_t or 0:>10,.0f} rows/s  ours {rate_o:>10,.0f} rows/s  "
        f"ratio {'—' if shown is None else f'{shown:.2f}'} "
        f"(TSBS until visible: {'—' if same_terms is None else f'{same_terms:.3f}'})  "
        "client CPU-s/M rows TSBS "
        f"{'—' if cpu_t is None else f'{cpu_t:.2f}'} ours {cpu_o:.2f}"
        + (f"  (TSBS's rows all visible {late:.2f} s after it exited)" if late and late > 0.05 else "")
        + (f"  (TSBS fails: {theirs['error'][:120]})" if theirs["error"] else "")
    )


class _SinkTarget:
    """A target's writers pointed at a do-nothing endpoint; nothing to flush there."""

    def __init__(self, target: Any):
        self.target = target
        self.name = f"{target.name} → sink"

    def writer(self) -> Any:
        return self.target.writer()

    def flush(self) -> None:
        pass


def ceiling(name: str, dataset: Dataset, args: Any) -> dict[str, Any]:
    """Our client alone: the target's own encoding and transport into a do-nothing endpoint that
    speaks its protocol — from wire-ready bodies (the timed path) and encoding while sending."""
    target_type = load_target(name)
    wire = ensure_wire_cache(dataset, target_type, args.batch_size)
    with sink(TSBS_TOOLS[name].sink) as (port, _):
        ports = {"http": port, "pg": port, "ilp": port}
        endpoint = Endpoint("127.0.0.1", ports, user="postgres", database="benchmark")
        target = _SinkTarget(target_type(endpoint, dataset.use_case, dataset.tags()))
        rates: dict[str, list[float]] = {"wire": [], "encode_and_send": []}
        for _ in range(args.trials):
            rates["wire"].append(load(target, dataset, 2, args.batch_size, wire=wire).rows_per_s)
            rates["encode_and_send"].append(load(target, dataset, 2, args.batch_size).rows_per_s)
    return {key: spread(values) for key, values in rates.items()}
