"""A large answer held as rows vs by columns: build (normalise + sort) time, the check against
the same reference rows, and the peak memory of each form, measured in one run.

    .venv/bin/python bench/answer_forms.py [--rows 1700000] [--hosts 4000]

The rows are shaped like PostgreSQL's high-cpu-all answer at 4,000 hosts (a timestamptz, a
hostname, ten floats; ~1.7 M rows), in parts of 65,536 rows as ``decode_parts`` yields them.
Each form runs in its own child process, so each peak (``ru_maxrss``) is that form's alone; the
input is generated part by part inside the build, as a driver decodes it, so it is not held.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PART = 65_536


def _parts(rows: int, hosts: int, seed: int = 3) -> Iterator[list[list[object]]]:
    """Rows in driver form, one part at a time, each part in reverse order (the answer must sort)."""
    rnd = random.Random(seed)
    start = datetime(2016, 1, 1, tzinfo=UTC)
    names = [f"host_{i}" for i in range(hosts)]
    for first in range(0, rows, PART):
        part = [
            [
                start + timedelta(seconds=10 * (i // hosts)),
                names[i % hosts],
                *(rnd.random() * 100 for _ in range(10)),
            ]
            for i in range(first, min(rows, first + PART))
        ]
        yield part[::-1]


def measure(form: str, rows: int, hosts: int) -> dict[str, float]:
    """In this process: build the answer in ``form`` and check it against the row form's rows."""
    from tsbench.workload.answers import Answer, _normalised_rows, answer_columns, compare_rows
    from tsbench.workload.query_types import QUERY_TYPES

    qtype = QUERY_TYPES["high-cpu-all"]
    generating = time.perf_counter()
    for _ in _parts(rows, hosts):
        pass
    generate_s = time.perf_counter() - generating
    started = time.perf_counter()
    if form == "rows":  # the row form as before: each part normalised, then joined and sorted
        texts: dict[str, str] = {}
        held: list[tuple[object, ...]] = []
        for part in _parts(rows, hosts):
            held += _normalised_rows(qtype, answer_columns(qtype)[0], part, texts)
        answer = Answer(*answer_columns(qtype)[:1], held, answer_columns(qtype)[1])
        answer._sort()
    else:
        answer = Answer.adopt_parts(qtype, _parts(rows, hosts))
    built = time.perf_counter()
    reference = (tuple(row) for row in answer.rows)  # the same rows: a check that passes
    verdict = compare_rows(answer.columns, answer.key, reference, answer)
    checked = time.perf_counter()
    assert verdict.ok, verdict.reason
    return {
        "build_s": built - started - generate_s,  # the rows' generation is timed apart and removed
        "check_s": checked - built,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_700_000)
    parser.add_argument("--hosts", type=int, default=4_000)
    parser.add_argument("--form", choices=["rows", "columns"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.form:
        print(json.dumps(measure(args.form, args.rows, args.hosts)))
        return
    figures = {}
    for form in ("rows", "columns"):
        command = [
            sys.executable,
            __file__,
            "--form",
            form,
            "--rows",
            str(args.rows),
            "--hosts",
            str(args.hosts),
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
        figures[form] = json.loads(done.stdout.splitlines()[-1])
        f = figures[form]
        print(
            f"{form:8} build {f['build_s']:6.1f} s  check {f['check_s']:6.1f} s  peak {f['peak_mb']:6.0f} MB"
        )
    rows, columns = figures["rows"], figures["columns"]
    print(
        f"columns / rows: build ×{columns['build_s'] / rows['build_s']:.2f}, "
        f"check ×{columns['check_s'] / rows['check_s']:.2f}, peak ×{columns['peak_mb'] / rows['peak_mb']:.2f}"
        f" ({args.rows:,} rows, {args.hosts:,} hosts)"
    )


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "plugins"))
    main()
