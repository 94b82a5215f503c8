"""Query section of ``bench/vs_tsbs.py``: per target and query type, three alternating sides on
the same server and data (loaded once, by us, from the rows TSBS generated):

- **TSBS**: its runner on its own query file (its "Overall query rate");
- **same text**: TSBS's exact texts through our runner (``run_texts``: same workers, timed fetch of
  the whole answer) — what isolates the harness's cost;
- **own texts**: our logical queries of the type rendered by our dialect, every answer checked
  against the oracle (``run_pass``: queries/s of the type's run).

Client CPU: TSBS's process rusage; ours this process's CPU over the run. Server CPU: server tree.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import tsbs_side
import tsbs_texts
from vs_common import TSBS_TOOLS, alternating, ratio, server_pids, spread

from tsbench.measure.load import load
from tsbench.measure.query_runner import run_pass, run_texts
from tsbench.measure.wire_cache import ensure_wire_cache
from tsbench.targets.base import Target
from tsbench.targets.registry import load_target
from tsbench.workload.dataset import Dataset
from tsbench.workload.oracle import Oracle
from tsbench.workload.queries import DataRange, LogicalQuery, generate_queries

SIDES = ("tsbs", "same_text", "own_text")
MAX_QUERIES = 10_000


def _tsbs_file(bin_dir: Path, name: str, qtype: str, count: int, args: Any, work: Path) -> Any:
    tool = TSBS_TOOLS[name]
    out = work / f"q-{name}-{qtype}-{count}.gob"
    return tsbs_texts.generate_queries(
        bin_dir, fmt=tool.query_format, query_type=qtype, out=out, count=count,
        scale=args.scale, seed=123, timescale_use_time_bucket=tool.time_bucket,
    )  # fmt: skip


def _own(dataset: Dataset, qtype: str, count: int, oracle: Oracle) -> tuple[list[LogicalQuery], Any]:
    queries = generate_queries(DataRange.of(dataset), [qtype], count, 123)
    return queries, oracle.answers(queries)


def _texts(made: Any) -> list[str]:
    return tsbs_texts.query_texts(None, made.fmt, made.path) if made.run.ok else []


def _sized_file(target: Target, qtype: str, args: Any, bin_dir: Path, work: Path) -> tuple[Any, list[str]]:
    """TSBS's query file of ``qtype`` with enough queries that one run lasts ≥ ``args.min_run_s``
    (probed with our runner on ``args.queries`` texts; at most ``MAX_QUERIES``): in a run of a few
    tens of milliseconds, connecting and starting threads or a process would weigh as much as the
    queries."""
    made = _tsbs_file(bin_dir, target.name, qtype, args.queries, args, work)
    texts = _texts(made)
    if not texts:
        return made, texts
    probes = [run_texts(texts, target.session, args.query_workers) for _ in range(2)]  # the 2nd is warm
    wall = min(probe.wall_s for probe in probes)
    if wall >= args.min_run_s or any(probe.errors for probe in probes):
        return made, texts  # failing texts are reported at the least count, not multiplied
    count = min(MAX_QUERIES, math.ceil(args.queries * 1.2 * args.min_run_s / max(wall, 1e-3)))
    made = _tsbs_file(bin_dir, target.name, qtype, count, args, work)
    return made, _texts(made)


def _run_side(side: str, ctx: dict[str, Any]) -> tuple[float, float, float, str | None]:
    """One run of one side: (queries/s, client CPU-s, server CPU-s, error)."""
    target, workers, pids = ctx["target"], ctx["workers"], ctx["pids"]
    if side != "own_text" and not ctx["texts"]:
        return 0.0, 0.0, 0.0, "TSBS made no query file for this type"
    if side == "tsbs":
        got = TSBS_TOOLS[target.name].queries(ctx["bin"], ctx["file"].path, target.endpoint, workers, pids)
        return got.queries_per_s or 0.0, got.run.client_cpu_s, got.run.server_cpu_s or 0.0, got.run.error
    with tsbs_side.CpuMeter(pids) as meter:
        if side == "same_text":
            texts = run_texts(ctx["texts"], target.session, workers)
            qps, cpu, error = texts.qps, texts.client_cpu_s, (texts.errors[0] if texts.errors else None)
        else:
            queries, expected = ctx["own"]
            rendered = {q.id: target.render(q) for q in queries}
            passed = run_pass("bench", queries, rendered, expected, target.session, workers)
            stats = passed.stats()[queries[0].type]
            qps, cpu = stats["qps"], stats["client_cpu_s"]
            bad = stats["errors"] + stats["mismatches"]
            error = f"{bad} errors or answers differing from the oracle" if bad else None
    return qps, cpu, meter.seconds or 0.0, error


def _measure_type(ctx: dict[str, Any], trials: int) -> dict[str, Any]:
    runs: dict[str, dict[str, list[float]]] = {
        s: {"qps": [], "client_cpu_s": [], "server_cpu_s": []} for s in SIDES
    }
    errors: dict[str, str | None] = dict.fromkeys(SIDES)
    for trial, tsbs_first in alternating(trials):
        order = SIDES if tsbs_first else tuple(reversed(SIDES))
        for side in order:
            if errors[side]:
                continue
            qps, client, server, error = _run_side(side, ctx)
            errors[side] = errors[side] or error
            if trial >= 0 and not error:
                for key, value in (("qps", qps), ("client_cpu_s", client), ("server_cpu_s", server)):
                    runs[side][key].append(value)
    return {s: {**{k: spread(v) for k, v in runs[s].items()}, "error": errors[s]} for s in SIDES}


def query_section(
    name: str, bin_dir: Path, dataset: Dataset, args: Any, runtime: Any, work: Path
) -> dict[str, Any]:
    """Every type of ``args.types`` on one server of target ``name``, loaded once by us."""
    from vs_common import serving

    out: dict[str, Any] = {}
    oracle = Oracle(dataset)
    wire = ensure_wire_cache(dataset, load_target(name), args.batch_size)
    try:
        with serving(runtime, name, dataset, "queries") as (server, target):
            target.create_schema()
            load(target, dataset, 2, args.batch_size, wire=wire, progress_s=3600)
            for qtype in args.types:
                made, texts = _sized_file(target, qtype, args, bin_dir, work)
                count = len(texts) or args.queries
                ctx = {
                    "target": target, "workers": args.query_workers, "pids": server_pids(server),
                    "bin": bin_dir, "file": made, "texts": texts,
                    "own": _own(dataset, qtype, count, oracle),
                }  # fmt: skip
                started = time.perf_counter()
                out[qtype] = {**_measure_type(ctx, args.query_trials), "queries": count}
                if not made.run.ok:
                    out[qtype]["tsbs"]["error"] = f"tsbs_generate_queries: {made.run.error}"
                out[qtype]["seconds"] = time.perf_counter() - started
                _print_query_row(name, qtype, out[qtype])
    finally:
        oracle.close()
    return out


def _print_query_row(name: str, qtype: str, row: dict[str, Any]) -> None:
    def qps(side: str) -> float | None:
        return row[side]["qps"].get("median")

    def cpu(side: str) -> str:
        value = row[side]["client_cpu_s"].get("median")
        return "—" if value is None else f"{value:.2f}"

    same, own = ratio(qps("same_text"), qps("tsbs")), ratio(qps("own_text"), qps("tsbs"))
    text = (
        f"  {name:<12} {qtype:<22} {row['queries']:>5} q  TSBS {qps('tsbs') or 0:>8.1f} q/s  "
        f"same {qps('same_text') or 0:>8.1f} "
        f"(×{same or 0:.2f})  own {qps('own_text') or 0:>8.1f} (×{own or 0:.2f})  "
        f"client CPU-s TSBS {cpu('tsbs')} same {cpu('same_text')} own {cpu('own_text')}"
    )
    failed = [f"{side}: {row[side]['error'][:100]}" for side in SIDES if row[side]["error"]]
    print(text + (f"  [{'; '.join(failed)}]" if failed else ""))
