"""Merge a run folder's phase files into one self-describing ``result.json`` and ``samples.jsonl``."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from tsbench.results.files import read_json, write_bytes_atomic, write_json_atomic
from tsbench.results.samples import Sample
from tsbench.timeutil import format_instant

# A branch's phases in order, each with the file it writes (settle writes the footprint).
PHASE_ORDER = (
    ("acquire_machine", "acquire_machine"),
    ("provision", "provision"),
    ("prepare", "prepare"),
    ("load", "load"),
    ("settle", "footprint"),
    ("cache_reset", "cache_reset"),
    ("queries", "queries"),
)
PHASE_FILES = (*(file for _, file in PHASE_ORDER), "teardown", "error")


def target_result(folder: Path) -> dict[str, Any]:
    body: dict[str, Any] = {}
    for phase in PHASE_FILES:
        path = folder / f"{phase}.json"
        if path.is_file():
            body[phase] = {k: v for k, v in read_json(path).items() if k not in ("phase", "target")}
    error = body.pop("error", None)
    body["status"] = "failed" if error else ("ok" if "queries" in body else "incomplete")
    if error:
        body["failed_phase"] = error["failed_phase"]
        body["error"] = error["error"]
    elif body["status"] == "incomplete":
        body["stopped_before"] = next(phase for phase, file in PHASE_ORDER if file not in body)
    return body


def samples_of(result: dict[str, Any]) -> list[Sample]:
    """Every figure of a result as a Sample, with run-wide labels stamped on."""
    spec = result["spec"]
    run_labels = {
        "run_id": result["run_id"],
        "use_case": spec["use_case"],
        "scale": str(spec["scale"]),
        "workers": str(spec["workers"]),
        "batch_size": str(spec["batch_size"]),
        "dataset": result["dataset"]["id"],
    }
    now = time.time()
    out: list[Sample] = []

    def add(metric: str, value: float | None, unit: str, **labels: str) -> None:
        if value is not None:
            out.append(Sample(metric, float(value), unit, {**run_labels, **labels}, now))

    for name, body in result["targets"].items():
        version = body.get("provision", {}).get("version", "")
        t = {"target": name, "version": version}
        add("target_ok", 1.0 if body["status"] == "ok" else 0.0, "bool", **t)
        for i, trial in enumerate(body.get("load", {}).get("trials", [])):
            add("load_rows_per_s", trial["rows_per_s"], "rows/s", trial=str(i + 1), **t)
            add("load_metrics_per_s", trial["metrics_per_s"], "metrics/s", trial=str(i + 1), **t)
            add("load_seconds", trial["seconds"], "s", trial=str(i + 1), **t)
            for key in ("cpu_percent_mean", "cpu_percent_max"):
                add(f"load_{key}", trial["resources"].get(key), "%", trial=str(i + 1), **t)
            add("load_rss_bytes_max", trial["resources"].get("rss_bytes_max"), "bytes", trial=str(i + 1), **t)
        for when in ("after_load", "after_settle"):
            figures = body.get("footprint", {}).get(when)
            if figures:
                add("footprint_bytes", figures["bytes"], "bytes", when=when, **t)
                add("disk_bytes", figures["disk_bytes"], "bytes", when=when, **t)
        queries = body.get("queries", {})
        for pass_kind in ("cold", "hot"):
            for qtype, stats in queries.get(pass_kind, {}).items():
                q = {"pass": pass_kind, "query_type": qtype, **t}
                add("query_qps", stats["qps"], "queries/s", **q)
                for key in ("p50_ms", "mean_ms", "p95_ms", "p99_ms", "max_ms"):
                    add(f"query_{key}", stats.get(key), "ms", **q)
                add("query_errors", stats["errors"], "count", **q)
                add("query_mismatches", stats["mismatches"], "count", **q)
        if queries:
            add("answer_mismatches", queries["answer_checks"]["mismatches"], "count", **t)
            for key in ("cpu_percent_mean", "cpu_percent_max"):
                add(f"queries_{key}", queries["resources"].get(key), "%", **t)
    return out


def collect(run_dir: Path) -> dict[str, Any]:
    """Write ``result.json`` and ``samples.jsonl`` (atomically) and return the result."""
    run = read_json(run_dir / "run.json")
    targets_dir = run_dir / "targets"
    names = run["spec"]["targets"]
    result = {
        **run,
        "format": "tsbench-result/1",
        "finished_at": format_instant(time.time_ns()),
        "targets": {name: target_result(targets_dir / name) for name in names},
    }
    samples = samples_of(result)
    result["samples"] = len(samples)
    write_bytes_atomic(
        run_dir / "samples.jsonl", "".join(json.dumps(s.to_json()) + "\n" for s in samples).encode()
    )
    write_json_atomic(run_dir / "result.json", result)
    return result
