"""What each stage costs as the rows grow: time, CPU, peak memory and disk at several sizes on this
machine, each stage's slope, and any stage that grows faster than linearly.

    PYTHONPATH=plugins .venv/bin/python bench/stage_costs.py [--sizes 1m,10m] [--targets …]
    PYTHONPATH=plugins .venv/bin/python bench/stage_costs.py --dataset-only --sizes 1m,10m,100m,1b
    PYTHONPATH=plugins .venv/bin/python bench/stage_costs.py --from A.json B.json --coefficients OUT

A size is a number of cpu-only rows: ``--duration`` (default 1 day at 10 s) fixes the rows per host
and the hosts make up the rest (1m = 116 hosts × 1 day = 1,002,240 rows). Each size runs in a fresh
process, one after the other, nothing else on the machine:

- by default one point through the comparison DAG (``bench/large_point.py``: generation, oracle,
  each target's wire encoding, load, queries with every answer checked, validation and report; per
  task the orchestrating process's wall, CPU-seconds, peak RSS and the disk high-water mark);
- with ``--dataset-only`` the dataset's three commands, each its own process (``python -m tsbench
  generate``, ``queries``, ``answers``): wall, CPU-seconds and peak RSS from ``wait4``, disk above
  the start at its highest, sampled every 0.2 s.

The slope of a figure between two sizes is the exponent b of figure ∝ rows^b (1 = linear, 0 =
flat). A stage is flagged ``SUPERLINEAR`` where its time, CPU or disk has b > 1.15 between the two
largest sizes and is large enough to mean it (≥ 5 s, ≥ 100 MB); memory should stay flat and is
flagged ``GROWS`` where it rises by more than 25 % and 100 MB between the two largest sizes. With
three sizes or more, the largest size's figures are set beside the line through the two sizes below
it (for memory a line means nothing: flat is the aim).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from process_sampler import INTERVAL_S, disk_used

from tsbench.sweep.costs import SUPERLINEAR_B, memory_grows
from tsbench.timeutil import parse_duration

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
SUFFIX = {"k": 1_000, "m": 1_000_000, "b": 1_000_000_000}
INTERVAL_10S = 10
START = "2016-01-01T00:00:00+00:00"  # the pipeline's default start
QUERY_TYPES_CPU_ONLY = 20  # the cpu-only use case's query types (TSBS devops' 15, YCSB-TS's 5)
FIGURES = ("wall_s", "cpu_s", "peak_rss_bytes", "disk_high_bytes")
GROWING = ("wall_s", "cpu_s", "disk_high_bytes", "stored_bytes")  # linear at most
MEANINGFUL = {
    "wall_s": 5.0,
    "cpu_s": 5.0,
    "disk_high_bytes": 100e6,
    "stored_bytes": 100e6,
    "peak_rss_bytes": 100e6,
}


def parse_size(text: str) -> int:
    text = text.strip().lower()
    return int(float(text[:-1]) * SUFFIX[text[-1]]) if text[-1] in SUFFIX else int(text)


def seconds_of(duration: str) -> int:
    return parse_duration(duration) // 10**9


def hosts_for(rows: int, duration: str) -> int:
    return max(1, round(rows / (seconds_of(duration) // INTERVAL_10S)))


def slope(small: tuple[int, float], large: tuple[int, float]) -> float | None:
    """b in figure ∝ rows^b between two (rows, figure) points; None where a figure is ≤ 0."""
    (r1, v1), (r2, v2) = small, large
    if v1 <= 0 or v2 <= 0 or r1 == r2:
        return None
    return math.log(v2 / v1) / math.log(r2 / r1)


def extrapolated(points: list[tuple[int, float]], rows: int) -> float:
    """The line through the two points given (rows, figure), at ``rows``."""
    (r1, v1), (r2, v2) = points
    return v1 + (v2 - v1) * (rows - r1) / (r2 - r1)


def flag(figure: str, points: list[tuple[int, float]]) -> str:
    """``SUPERLINEAR`` / ``GROWS`` / "" for one figure of a stage at its sizes (see the module doc)."""
    if len(points) < 2 or points[-1][1] < MEANINGFUL[figure]:
        return ""
    if figure == "peak_rss_bytes":
        before, last = points[-2][1], points[-1][1]
        return "GROWS" if memory_grows(before, last) else ""
    b = slope(points[-2], points[-1])
    return "SUPERLINEAR" if b is not None and b > SUPERLINEAR_B else ""


class CommandCost:
    """Runs one command as a child process; its wall, CPU and peak RSS (``wait4``) and the disk
    used on ``disk_of``'s filesystem above the start, at its highest (sampled)."""

    def __init__(self, command: list[str], disk_of: Path, env: dict[str, str]) -> None:
        self.command, self.disk_of, self.env = command, disk_of, env
        self.disk_high = 0

    def _sample_disk(self, baseline: int, done: threading.Event) -> None:
        while not done.wait(INTERVAL_S):
            self.disk_high = max(self.disk_high, disk_used(self.disk_of) - baseline)

    def run(self) -> dict[str, float]:
        baseline, done = disk_used(self.disk_of), threading.Event()
        threading.Thread(target=self._sample_disk, args=(baseline, done), daemon=True).start()
        started = time.perf_counter()
        child = subprocess.Popen(self.command, env=self.env, stdout=subprocess.PIPE, cwd=ROOT)
        assert child.stdout is not None
        output = child.stdout.read().decode()
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        done.set()
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{' '.join(self.command)} failed ({status}): {output[-2000:]}")
        self.disk_high = max(self.disk_high, disk_used(self.disk_of) - baseline)
        print(f"    {' '.join(self.command[2:5])}: {output.strip().splitlines()[-1]}", flush=True)
        return {
            "wall_s": wall,
            "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_rss_bytes": usage.ru_maxrss * 1024,
            "disk_high_bytes": self.disk_high,
        }


def dataset_stages(hosts: int, args: argparse.Namespace, work: Path) -> dict[str, dict[str, float]]:
    """Generation, the query set and the oracle's answers at ``hosts``, each in its own process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins"), "TSBENCH_DATASETS": str(work / "datasets")}
    end = datetime.fromisoformat(START) + timedelta(seconds=seconds_of(args.duration))
    spec = ["--use-case", "cpu-only", "--scale", str(hosts), "--start", START, "--end", end.isoformat()]
    tsbench = [PYTHON, "-m", "tsbench"]
    queries = ["--queries-per-type", str(args.queries_per_type)]
    stages = {
        "generate": [*tsbench, "generate", *spec],
        "queries": [*tsbench, "queries", *spec, *queries, "--out", str(work / "queries.jsonl")],
        "oracle": [
            *tsbench,
            "answers",
            *spec,
            "--queries",
            str(work / "queries.jsonl"),
            "--out",
            str(work / "answers.jsonl"),
        ],
    }
    chosen = args.stages.split(",")
    costs = {
        name: CommandCost(command, work, env).run() for name, command in stages.items() if name in chosen
    }
    (dataset,) = (p for p in (work / "datasets").iterdir() if p.is_dir())
    costs["generate"]["stored_bytes"] = sum(f.stat().st_size for f in dataset.rglob("*") if f.is_file())
    if "oracle" in costs:
        costs["oracle"]["stored_bytes"] = (work / "answers.jsonl").stat().st_size
    return costs


def dag_stages(hosts: int, args: argparse.Namespace, work: Path) -> dict[str, dict[str, float]]:
    """One point through the comparison DAG (``large_point.py``): each task's cost, the dataset
    task split into generation and oracle, and each target's wire encoding, load and footprint."""
    out = work / "figures.json"
    command = [
        PYTHON,
        str(ROOT / "bench" / "large_point.py"),
        "--scale",
        str(hosts),
        "--duration",
        args.duration,
        "--targets",
        args.targets,
        "--queries-per-type",
        str(args.queries_per_type),
        "--json",
        str(out),
        "--work",
        str(work / "run"),
    ]
    log = work.parent / f"large-point-{hosts}.log"
    with open(log, "w") as handle:
        done = subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT, cwd=ROOT, check=False)
    if done.returncode != 0 or not out.is_file():
        raise SystemExit(f"large_point.py failed at {hosts} hosts (exit {done.returncode}): see {log}")
    figures = json.loads(out.read_text())
    print(f"    DAG {figures['state']} in {figures['wall_s']:.0f} s; log {log}", flush=True)
    return stages_of(figures)


TASK_NAME = re.compile(r"^(?:benchmark\.)?(\w+)\[scale-\d+(?: × ([^\]]+))?\](?: (\w+))?$")
SKIPPED = (
    "acquire_machine",
    "live",
    "branches",
    "points_of",
    "verdict",
    "collect",
    "publish",
    "validate_params",
)


def stage_name(task: str) -> str | None:
    """A task's stage: ``dataset[scale-116] oracle`` → ``oracle``, ``load[scale-116 × questdb]`` →
    ``load task questdb`` (prepare + load + settle); None for the ones too small to matter."""
    match = TASK_NAME.match(task)
    if match:
        step, target, part = match.groups()
        name = part or (f"{step} task {target}" if step in ("load", "queries") else f"{step} {target}")
    else:
        name = task.replace("benchmark.", "")
    return None if name.startswith(SKIPPED) or name.startswith("teardown") else name


def stages_of(figures: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Each stage's figures from one ``large_point.py --json`` run: every task's cost, and per
    target its wire encoding and its load (phase wall, footprint, rows/s) from its records.

    A task's peak RSS is what it would reach in a process of its own, as an executor runs it: the
    first task's peak (a process that ran nothing before) + what the task added over its start.
    ``dag.test()`` runs every task in one process, whose RSS grows from task to task (its peak
    there is kept as ``peak_rss_in_one_process_bytes``)."""
    stages: dict[str, dict[str, float]] = {}
    fresh = figures["tasks"][0]["peak_rss_bytes"]  # the first task's: a process that ran nothing before
    for task in figures["tasks"]:
        name = stage_name(task.pop("task"))
        if name:
            grown = max(0, task["peak_rss_bytes"] - task.pop("start_rss_bytes"))
            stages[name] = {
                **task,
                "peak_rss_bytes": fresh + grown,
                "peak_rss_in_one_process_bytes": task["peak_rss_bytes"],
            }
    stages["generate"]["stored_bytes"] = figures["dataset_bytes"]
    for target, facts in figures["targets"].items():
        encoded = {  # streamed bodies are encoded during the load: their wall is the load's
            "wall_s": facts["wire_encode_s"] or 0,
            "cpu_s": facts["wire_encode_cpu_s"] or 0,
            "stored_bytes": facts["wire_bytes"] or 0,
        }
        stages[f"{'stream' if facts.get('wire_streamed') else 'encode'} {target}"] = encoded
        stages[f"load {target}"] = {
            "wall_s": facts["phases_wall_s"].get("load", 0),
            "stored_bytes": facts["footprint_bytes"] or 0,
            "rows_per_s": facts["rows_per_s"] or 0,
        }
        stages[f"queries {target}"] = {"wall_s": facts["phases_wall_s"].get("queries", 0)}
        checks = facts.get("answer_checks") or {}
        print(
            f"    {target}: {facts['rows_per_s'] or 0:,.0f} rows/s, rows ok {facts['rows_ok']}, answers "
            f"{checks.get('agreed')}/{checks.get('checked')} equal to the oracle's",
            flush=True,
        )
    stages["(the whole run)"] = {
        "wall_s": figures["wall_s"],
        "peak_rss_bytes": figures["ru_maxrss_bytes"],
        "disk_high_bytes": figures["disk_high_bytes"],
    }
    return stages


def shown(figure: str, value: float) -> str:
    if figure.endswith("bytes"):
        return f"{value / 1e6:,.0f} MB"
    if figure == "rows_per_s":
        return f"{value:,.0f}"
    return f"{value:,.1f}"


def print_table(sizes: list[int], labels: list[str], results: list[dict[str, dict[str, float]]]) -> None:
    names = list(dict.fromkeys(name for result in results for name in result))
    slopes = [f"b {a}→{b}" for a, b in itertools.pairwise(labels)]
    line = [f"line→{labels[-1]}"] if len(sizes) > 2 else []
    heads = labels
    print(f"\n{'stage':<34} {'figure':<16}" + "".join(f"{h:>12}" for h in heads + slopes + line) + "  flag")
    for name in names:
        figures = [
            f
            for f in (*FIGURES, "peak_rss_in_one_process_bytes", "stored_bytes", "rows_per_s")
            if any(f in r.get(name, {}) for r in results)
        ]
        for figure in figures:
            points = [
                (rows, r[name][figure])
                for rows, r in zip(sizes, results, strict=True)
                if figure in r.get(name, {})
            ]
            cells = [shown(figure, r[name][figure]) if figure in r.get(name, {}) else "–" for r in results]
            pairs = [slope(a, b) for a, b in itertools.pairwise(points)]
            cells += [f"{b:.2f}" if b is not None else "–" for b in pairs] + ["–"] * (
                len(slopes) - len(pairs)
            )
            if line:
                cells.append(
                    shown(figure, extrapolated(points[-3:-1], sizes[-1]))
                    if len(points) == len(sizes)
                    else "–"
                )
            mark = flag(figure, points) if figure in (*GROWING, "peak_rss_bytes") else ""
            print(f"{name:<34} {figure:<16}" + "".join(f"{c:>12}" for c in cells) + f"  {mark}")


def workload(args: argparse.Namespace) -> dict[str, Any]:
    """What each size ran: the figures per query and per trial are divided by these in the plan."""
    return {
        "use_case": "cpu-only",
        "duration": args.duration,
        "interval_s": INTERVAL_10S,
        "query_types": QUERY_TYPES_CPU_ONLY,
        "queries_per_type": args.queries_per_type,
        "query_passes": 2,  # large_point.py: a cold pass and one hot pass
        "workers": 2,
        "batch_size": 10_000,
        "trials": 1,
        "targets": [] if args.dataset_only else args.targets.split(","),
    }


def write_coefficients(path: Path, results: list[dict[str, Any]]) -> None:
    """The plan's measured costs (``tsbench/sweep/measured_costs.json``) from stage-cost files: each
    stage's figures at its sizes and the measurement they come from (machine, date, commit,
    workload); a stage that more than one file measured is taken from the one with the most sizes."""
    stages: dict[str, dict[str, Any]] = {}
    for number, result in enumerate(results):
        for name in dict.fromkeys(n for sized in result["stages"] for n in sized):
            at = [
                (r, sized[name])
                for r, sized, usable in zip(
                    result["sizes"], result["stages"], _comparable(result, name), strict=False
                )
                if name in sized and usable
            ]
            if name.startswith("(") or len(at) < max(2, len(stages.get(name, {}).get("rows", []))):
                continue  # a line needs two sizes
            figures = {
                f: [round(s[f], 3) for _, s in at]
                for f in (*FIGURES, "stored_bytes")
                if all(f in s for _, s in at)
            }
            stages[name] = {"measurement": number, "rows": [r for r, _ in at], **figures}
    body = {
        "format": "tsbench-measured-costs/1",
        "measurements": [result["measured"] for result in results],
        "stages": dict(sorted(stages.items())),
    }
    path.write_text(json.dumps(body, indent=1) + "\n")


def merged(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Several stage-cost files as one, their sizes in order (e.g. 1 M and 10 M measured one day,
    100 M another: the largest is then set beside the line through the two below it). A size that
    several files measured (other targets at the same size) is one size with the stages of all of
    them; a stage both measured keeps the earlier file's figures."""
    by_size: dict[int, tuple[str, dict[str, Any], str]] = {}
    for result in results:
        duration = result["measured"]["workload"]["duration"]
        for size, label, stages in zip(result["sizes"], result["labels"], result["stages"], strict=True):
            label, earlier, span = by_size.get(size, (label, {}, duration))
            if span != duration:
                raise SystemExit(f"{label}: measured over {span} in one file and {duration} in another")
            by_size[size] = (label, {**stages, **earlier}, duration)
    sized = [(size, label, stages, duration) for size, (label, stages, duration) in sorted(by_size.items())]
    commands = "; ".join(f"{r['measured']['command']} ({r['measured']['date']})" for r in results)
    return {
        "sizes": [size for size, _, _, _ in sized],
        "labels": [label for _, label, _, _ in sized],
        "stages": [stages for _, _, stages, _ in sized],
        "durations": [duration for _, _, _, duration in sized],
        "measured": {**results[0]["measured"], "command": commands},
    }


HOST_READ = ("queries", "validate", "report")  # the plan reads these at hosts × the measured span


def _comparable(result: dict[str, Any], name: str) -> list[bool]:
    """Which sizes of ``result`` a stage's coefficients may use: all, except that a stage the plan
    reads at its hosts (``HOST_READ``) keeps only the sizes measured over the file's own span."""
    durations = result.get("durations") or [result["measured"]["workload"]["duration"]] * len(result["sizes"])
    own = result["measured"]["workload"]["duration"]
    return [not name.startswith(HOST_READ) or duration == own for duration in durations]


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Every size in turn, in a work folder of its own (removed after unless ``--keep``); the
    figures so far are written to ``--out`` after each size."""
    from tsbench.machine import machine_facts, source_commit

    sizes = [parse_size(s) for s in args.sizes.split(",")]
    hosts = [hosts_for(rows, args.duration) for rows in sizes]
    rows = [h * (seconds_of(args.duration) // INTERVAL_10S) for h in hosts]
    root = Path(tempfile.mkdtemp(prefix="tsbench-stage-costs-", dir="/var/tmp"))
    root.chmod(0o755)  # the servers run as their own users (PostgreSQL as postgres)
    mode = "dataset only" if args.dataset_only else f"through the DAG: {args.targets}"
    described = (f"{r:,} rows ({h:,} hosts × {args.duration})" for r, h in zip(rows, hosts, strict=True))
    print(f"stage costs, {mode}; sizes {', '.join(described)}; logs in {root}")
    measured = {
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "command": "bench/stage_costs.py " + " ".join(sys.argv[1:]),
        "tsbench_commit": source_commit(),
        "machine": machine_facts(),
        "workload": workload(args),
    }
    result: dict[str, Any] = {"sizes": [], "labels": [], "hosts": [], "stages": [], "measured": measured}
    for size_hosts, size_rows, label in zip(hosts, rows, args.sizes.split(","), strict=True):
        work = root / f"hosts-{size_hosts}"
        work.mkdir()
        work.chmod(0o755)
        print(f"  {size_rows:,} rows:", flush=True)
        stages = dataset_stages if args.dataset_only else dag_stages
        result["stages"].append(stages(size_hosts, args, work))
        for key, value in (("sizes", size_rows), ("labels", label), ("hosts", size_hosts)):
            result[key].append(value)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1m,10m", help="rows per size, e.g. 1m,10m,100m,1b")
    parser.add_argument("--duration", default="1d", help="the span of each size's data (10 s interval)")
    parser.add_argument("--targets", default="questdb,postgres,timescaledb,influxdb")
    parser.add_argument("--queries-per-type", type=int, default=2)
    parser.add_argument("--dataset-only", action="store_true", help="generation, queries and oracle only")
    parser.add_argument("--stages", default="generate,queries,oracle", help="with --dataset-only: which")
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "out" / "stage-costs.json")
    parser.add_argument("--keep", action="store_true", help="keep each size's work folder")
    parser.add_argument("--from", dest="stored", type=Path, nargs="+", help="show stored --out files instead")
    parser.add_argument("--coefficients", type=Path, help="write the plan's measured costs here")
    parser.add_argument("--merge", action="store_true", help="with --from: one table of all their sizes")
    parser.add_argument("--write-merged", type=Path, help="with --merge: write the merged file here")
    args = parser.parse_args()
    results = [json.loads(p.read_text()) for p in args.stored] if args.stored else [measure(args)]
    if args.merge:
        results = [merged(results)]
        if args.write_merged:
            args.write_merged.write_text(json.dumps(results[0], indent=1))
    for result in results:
        print(f"\n{result['measured']['command']} ({result['measured']['date']}):")
        print_table(result["sizes"], result["labels"], result["stages"])
    if args.coefficients:
        write_coefficients(args.coefficients, results)
        print(f"\nthe plan's measured costs: {args.coefficients}")


if __name__ == "__main__":
    main()
