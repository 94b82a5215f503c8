"""tsbench.report on a synthetic run folder shaped exactly like a real one (runner + collect).

The fixture has four targets: QuestDB (fastest load, one query type declared unsupported),
TimescaleDB (one wrong answer, one query error), PostgreSQL (clean) and InfluxDB (failed in load);
a validation.json with a critical failure and a warning; three earlier runs for the trends.
Besides the text checks, the report is looked at as a person would: Chromium screenshots the HTML,
poppler rasterises the PDF pages, and the images must not be blank.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import re
import shutil
import subprocess
import time
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from tsbench.report import ReportFiles, read_inputs, render_document, render_html, render_report
from tsbench.report.model import read_examples, read_result, read_validation
from tsbench.targets.registry import target_colour, target_title

TYPES = (
    "single-groupby-1-1-1",
    "cpu-max-all-8",
    "double-groupby-5",
    "high-cpu-all",
    "lastpoint",
    "groupby-orderby-limit",
)
UNSUPPORTED_REASON = "no cpu-max-all rendering (TSBS's QuestDB target lacks it too)"
LOAD_ERROR = "TargetError: influxdb: HTTP 500 from /write: engine: cache-max-memory-size exceeded"
# hot qps per type per target (None = no figure); QuestDB does not run cpu-max-all-8
HOT_QPS = {
    "questdb": (220.0, None, 35.5, 48.25, 510.0, 260.0),
    "timescaledb": (95.0, 21.0, 12.5, 9.75, 140.0, 88.0),
    "postgres": (80.0, 18.5, 10.25, 8.5, 25.0, 61.0),
}
LOAD_TRIALS = {  # rows/s per trial; the median trial is the middle one by rate
    "questdb": (410_000.0, 432_100.5, 395_000.0),
    "timescaledb": (170_850.0, 168_000.0, 175_000.0),
    "postgres": (120_500.0, 118_000.0, 121_000.0),
}
FOOTPRINT = {  # (DB bytes after load, after settle, disk after load, disk after settle)
    "questdb": (61_234_567, 58_900_000, 70_000_000, 66_000_000),
    "timescaledb": (412_000_000, 415_200_000, 440_000_000, 441_000_000),
    "postgres": (520_000_000, 520_000_000, 560_000_000, 561_000_000),
}
ROWS = 864_000


def _stats(qps: float, count: int, errors: int = 0, mismatches: int = 0, slow: float = 1.0) -> dict[str, Any]:
    """Latency stats with the keys of tsbench.measure.stats.latency_stats."""
    p50 = 1000.0 / qps * slow
    return {
        "count": count,
        "errors": errors,
        "mismatches": mismatches,
        "min_ms": p50 * 0.8,
        "p50_ms": p50,
        "mean_ms": p50 * 1.05,
        "p90_ms": p50 * 1.3,
        "p95_ms": p50 * 1.5,
        "p99_ms": p50 * 2.0,
        "max_ms": p50 * 2.1,
        "stddev_ms": p50 * 0.2,
        "wall_s": count / qps,
        "qps": qps,
    }


def _provision(name: str, version: str, compression: str, unsupported: dict[str, str]) -> dict[str, Any]:
    return {
        "runtime": "local",
        "seconds": 4.2,
        "endpoint": {
            "host": "127.0.0.1",
            "ports": {"main": 41000 + len(name)},
            "user": "bench",
            "database": "tsbench",
            "data_dirs": [f"/var/tmp/tsbench/synthetic-{name}/data"],
            "extra": {},
        },
        "server_binary": f"{name}-server {version}",
        "config": f"# written by tsbench for {name}\nshared_buffers = 6GB\nwal_compression = lz4\n",
        "capabilities": {
            "durable": True,
            "compression": compression,
            "unsupported": unsupported,
            "schema_note": f"{name}: one table per measurement, tags as columns",
        },
        "version": f"{name} {version}",
        "settings": {"shared_buffers": "6GB", "fsync": "on", "max_parallel_workers": "2"},
    }


def _trial(rate: float, cpu: float, client_share: float = 0.05) -> dict[str, Any]:
    seconds = ROWS / rate
    return {
        "rows": ROWS,
        "metrics": ROWS * 10,
        "seconds": seconds,
        "write_seconds": seconds * 0.97,
        "flush_seconds": seconds * 0.03,
        "rows_per_s": rate,
        "metrics_per_s": rate * 10,
        "workers": 2,
        "batch_size": 10_000,
        "hash_workers": False,
        "source": "wire",
        "client_cpu_s": client_share * seconds * 2,
        "client_share": client_share,
        "progress": [{"t": 1.0, "rows": rate, "metrics": rate * 10, "rows_per_s": rate}],
        "resources": {
            "samples": 12,
            "cpu_percent_mean": cpu,
            "cpu_percent_max": cpu * 1.5,
            "rss_bytes_mean": 900_000_000.0,
            "rss_bytes_max": 1_250_000_000,
        },
        "row_counts": {"cpu": ROWS},
    }


def _ok_target(name: str, version: str, compression: str, unsupported: dict[str, str]) -> dict[str, Any]:
    share = 0.31 if name == "questdb" else 0.05  # QuestDB's client took more than a quarter
    trials = [_trial(rate, 80.0 + i, share) for i, rate in enumerate(LOAD_TRIALS[name])]
    median = sorted(t["rows_per_s"] for t in trials)[1]
    db_load, db_settle, disk_load, disk_settle = FOOTPRINT[name]
    note = f"{name}'s own accounting: tables, indexes and WAL"
    hot, cold = {}, {}
    for qtype, qps in zip(TYPES, HOT_QPS[name], strict=True):
        if qps is None:
            continue
        hot[qtype] = _stats(qps, 8) | {
            "client_cpu_s": 0.4,
            "client_share": 0.42 if qtype == "high-cpu-all" else 0.1,
        }
        cold[qtype] = _stats(qps / 3, 4, slow=3.0)
    body = {
        "provision": _provision(name, version, compression, unsupported),
        "prepare": {"seconds": 0.08},
        "load": {
            "trials": trials,
            "row_count_ok": True,
            "median_rows_per_s": median,
            "wire": {
                "key": f"{name}-format/1",
                "bodies": 87,
                "bytes_sent": 299_000_000,
                "encode_s": 1.52,
                "encode_cpu_s": 2.9,
                "processes": 2,
                "reused": name == "postgres",
            },
        },
        "footprint": {
            "after_load": {
                "bytes": db_load,
                "note": note,
                "parts": {"cpu.table": db_load - 1000, "wal": 1000},
                "disk_bytes": disk_load,
            },
            "after_settle": {
                "bytes": db_settle,
                "note": note,
                "parts": {"cpu.table": db_settle - 1000, "wal": 1000},
                "disk_bytes": disk_settle,
            },
            "settle_seconds": 5.0,
        },
        "cache_reset": {
            "restarted": True,
            "was_down": True,
            "os_cache_dropped": True,
            "os_cache_note": "sync; echo 3 > /proc/sys/vm/drop_caches",
            "stop_s": 0.6,
            "start_s": 1.3,
        },
        "queries": {
            "cold": cold,
            "hot": hot,
            "hot_passes": 2,
            "unsupported": {t: r for t, r in unsupported.items() if t in TYPES},
            "answer_checks": {"checked": 70, "agreed": 70, "mismatches": 0, "mismatch_samples": []},
            "errors": {"count": 0, "samples": []},
            "resources": {
                "samples": 30,
                "cpu_percent_mean": 55.5,
                "cpu_percent_max": 160.0,
                "rss_bytes_mean": 700_000_000.0,
                "rss_bytes_max": 800_000_000,
            },
        },
        "teardown": {"seconds": 1.1},
        "status": "ok",
    }
    return body


def synthetic_result(
    run_id: str = "20260101T120000Z-abc123", created_at: str = "2026-01-01T12:00:00.5Z"
) -> dict:
    questdb = _ok_target(
        "questdb",
        "9.3.4",
        "none (native columnar storage, no codec configured)",
        {"cpu-max-all-8": UNSUPPORTED_REASON, "ycsb-read": "not in this run"},
    )
    questdb["cache_reset"]["os_cache_dropped"] = False
    questdb["cache_reset"]["os_cache_note"] = "cannot write /proc/sys/vm/drop_caches: permission denied"
    timescale = _ok_target(
        "timescaledb",
        "2.19.3",
        "none: the Apache-2 edition has no native (columnar) compression, a TSL feature",
        {},
    )
    timescale["load"]["wire"] |= {"streamed": True, "bytes_stored": 0, "reused": False}  # wire_bodies
    queries = timescale["queries"]
    queries["hot"]["groupby-orderby-limit"]["mismatches"] = 1
    queries["hot"]["high-cpu-all"]["errors"] = 1
    queries["hot"]["high-cpu-all"]["count"] = 7
    queries["answer_checks"] = {
        "checked": 69,
        "agreed": 68,
        "mismatches": 1,
        "mismatch_samples": [
            {
                "pass": "hot-1",
                "query_id": "groupby-orderby-limit#2",
                "reason": "5 of 5 expected rows differ",
                "rows": [
                    {
                        "row": 0,
                        "expected": [1451692500000000000, 98.0],
                        "actual": [1451606400000000000, 97.0],
                    },
                    {"row": 1, "expected": [1451692560000000000, 100.0], "actual": None},
                ],
            }
        ],
    }
    queries["errors"] = {
        "count": 1,
        "samples": [
            {"pass": "hot-2", "query_id": "high-cpu-all#3", "error": "QueryCanceled: statement timeout"}
        ],
    }
    postgres = _ok_target(
        "postgres", "15.18", "none (heap tables; TOAST compresses only values over ~2 kB)", {}
    )
    influx = {
        "provision": _provision("influxdb", "1.6.7", "TSM: delta + simple8b/gorilla per series", {}),
        "prepare": {"seconds": 0.02},
        "teardown": {"seconds": 0.4},
        "status": "failed",
        "failed_phase": "load",
        "error": LOAD_ERROR,
    }
    return {
        "format": "tsbench-result/1",
        "run_id": run_id,
        "created_at": created_at,
        "spec": {
            "use_case": "cpu-only",
            "scale": 100,
            "start": "2016-01-01T00:00:00Z",
            "end": "2016-01-02T00:00:00Z",
            "interval": "10s",
            "seed": 123,
            "ingestion": "interleaved",
            "run_length": 10,
            "query_types": list(TYPES),
            "queries_per_type": 4,
            "query_seed": None,
            "targets": ["questdb", "timescaledb", "postgres", "influxdb"],
            "workers": 2,
            "batch_size": 10_000,
            "hash_workers": False,
            "trials": 3,
            "hot_runs": 2,
            "settle_seconds": 5.0,
            "runtime": "local",
        },
        "dataset": {
            "id": "cpu-only-100-0123456789abcdef",
            "path": "/work/main/datasets/cache/cpu-only-100-0123456789abcdef",
            "reused": True,
            "generate_s": 0.0,
            "rows": {"cpu": ROWS},
            "rows_total": ROWS,
            "files_sha256": ["a" * 64, "b" * 64],
            "generator_version": "1",
        },
        "oracle_s": 3.25,
        "queries": 24,
        "machine": {
            "hostname_hash": "0x1538",
            "cpu_model": "AMD EPYC 7B13",
            "cores": 2,
            "memory_bytes": 25_276_510_208,
            "os": "Debian GNU/Linux 12 (bookworm)",
            "kernel": "6.1.0-18-amd64",
            "python": "3.11.7",
        },
        "clients": {"pyarrow": "26.0.1", "duckdb": "2.0.0", "psycopg": "3.3.9", "questdb": "6.0.0"},
        "finished_at": "2026-01-01T12:09:30.25Z",
        "targets": {"questdb": questdb, "timescaledb": timescale, "postgres": postgres, "influxdb": influx},
        "samples": 321,
    }


RENDERED = {
    "questdb": "SELECT timestamp AS bucket, max(usage_user) FROM cpu WHERE hostname IN ('host_7') "
    "AND timestamp >= '2016-01-01T08:30:40Z' SAMPLE BY 1m ALIGN TO CALENDAR",
    "timescaledb": "SELECT time_bucket('60 seconds', time) AS bucket, max(usage_user) AS max_usage_user "
    "FROM cpu WHERE tags_id IN (SELECT id FROM tags WHERE hostname IN ('host_7')) "
    "GROUP BY bucket ORDER BY bucket",
    "postgres": "SELECT date_bin('60 seconds', time, TIMESTAMPTZ '1970-01-01') AS bucket, max(usage_user) "
    "FROM cpu WHERE usage_user > 90.0 AND time < TIMESTAMPTZ '2016-01-01 12:00:00+00'",
}
VALIDATION = {
    "success": False,
    "critical_failed": ["query_success"],
    "warnings": ["history_bounds: questdb load rate 40 % above the last 10 runs' maximum"],
    "suites": [
        {
            "name": "load_completeness",
            "success": True,
            "critical": True,
            "results": [
                {
                    "expectation": "row count after load equals the dataset's (questdb)",
                    "success": True,
                    "observed": 864000,
                    "details": None,
                },
            ],
        },
        {
            "name": "query_success",
            "success": False,
            "critical": True,
            "results": [
                {
                    "expectation": "every query answers (timescaledb high-cpu-all)",
                    "success": False,
                    "observed": {"errors": 1},
                    "details": "QueryCanceled: statement timeout",
                },
            ],
        },
        {
            "name": "history_bounds",
            "success": False,
            "critical": False,
            "results": [
                {
                    "expectation": "questdb load rate within history bounds",
                    "success": False,
                    "observed": 410000.0,
                    "details": "bounds [200000, 292000]",
                },
            ],
        },
    ],
}


def write_run(root: Path, result: dict[str, Any], validation: dict[str, Any] | None) -> Path:
    """A run folder as runner + collect leave it: result.json, run.json, targets/<name>/rendered.jsonl."""
    run_dir = root / result["run_id"]
    run_dir.mkdir(parents=True)
    (run_dir / "result.json").write_text(json.dumps(result, indent=2))
    run = {k: v for k, v in result.items() if k not in ("targets", "finished_at", "samples")}
    (run_dir / "run.json").write_text(json.dumps({**run, "format": "tsbench-run/1"}))
    for name, body in result["targets"].items():
        folder = run_dir / "targets" / name
        folder.mkdir(parents=True)
        if "queries" not in body:
            continue
        with (folder / "rendered.jsonl").open("w") as handle:
            for qtype in TYPES:
                if qtype in body["queries"]["unsupported"]:
                    continue
                for index in range(2):
                    text = f"{RENDERED[name]} /* {qtype} #{index} */"
                    handle.write(json.dumps({"id": f"{qtype}#{index}", "type": qtype, "text": text}) + "\n")
    if validation is not None:
        (run_dir / "validation.json").write_text(json.dumps(validation, indent=2))
    return run_dir


def synthetic_history() -> list[dict[str, Any]]:
    """Three earlier runs at the same use case and scale (slower), one at another scale."""
    runs = []
    for day, factor in ((1, 0.8), (2, 0.9), (3, 0.95)):
        earlier = synthetic_result(f"2025120{day}T120000Z-old{day}", f"2025-12-0{day}T12:00:00Z")
        for body in earlier["targets"].values():
            if "load" in body and "median_rows_per_s" in body["load"]:
                body["load"]["median_rows_per_s"] *= factor
            for stats in body.get("queries", {}).get("hot", {}).values():
                stats["qps"] *= factor
        runs.append(earlier)
    other = synthetic_result("20251215T120000Z-bigger", "2025-12-15T12:00:00Z")
    other["spec"]["scale"] = 4000
    runs.append(other)
    return runs


# -- reading the HTML back ---------------------------------------------------------------------
class _Tables(HTMLParser):
    """Every <table> as (class attribute, rows of cell texts)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[str, list[list[str]]]] = []
        self._stack: list[tuple[str, list[list[str]]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._stack.append((dict(attrs).get("class") or "", []))
        elif tag == "tr" and self._stack:
            self._stack[-1][1].append([])
        elif tag in ("td", "th") and self._stack:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._stack:
            self._stack[-1][1][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "table" and self._stack:
            self.tables.append(self._stack.pop())

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def tables(html: str) -> list[tuple[str, list[list[str]]]]:
    parser = _Tables()
    parser.feed(html)
    return parser.tables


def table_with(html: str, css_class: str) -> list[list[str]]:
    found = [rows for classes, rows in tables(html) if css_class in classes.split()]
    assert found, f"no table of class {css_class}"
    return found[0]


def row_of(rows: list[list[str]], first: str) -> list[str]:
    for row in rows:
        if row and row[0] == first:
            return row
    raise AssertionError(f"no row starting with {first!r} in {rows}")


def section(html: str, anchor: str) -> str:
    start = html.index(f'<section id="{anchor}"')
    return html[start : html.index("</section>", start)]


def text_of(fragment: str) -> str:
    """The text a reader sees (tags dropped, entities decoded, whitespace collapsed)."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


# -- fixtures ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_run(tmp_path_factory.mktemp("runs"), synthetic_result(), VALIDATION)


@pytest.fixture(scope="module")
def report(run_dir: Path) -> dict[str, Any]:
    started = time.perf_counter()
    files = render_report(run_dir, synthetic_history())
    seconds = time.perf_counter() - started
    print(f"render_report: {seconds:.2f} s")
    return {"files": files, "html": files.html.read_text(), "seconds": seconds}


@pytest.fixture(scope="module")
def html(report: dict[str, Any]) -> str:
    return report["html"]


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(
            f"{name} is not installed: scripts/install_report_tools.sh installs it (scripts/test.sh runs it)"
        )
    return path


@pytest.fixture(scope="module")
def pdf_text(report: dict[str, Any]) -> str:
    pdftotext = _tool("pdftotext")
    done = subprocess.run(
        [pdftotext, "-layout", str(report["files"].pdf), "-"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout


def _look_dir(tmp_path: Path) -> Path:
    """Where the PNGs go: $TSBENCH_REPORT_LOOK_DIR (to look at them later) or the test's tmp dir."""
    wanted = os.environ.get("TSBENCH_REPORT_LOOK_DIR")
    folder = Path(wanted) if wanted else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _ink(png: Path, body_only: bool = False) -> tuple[float, int]:
    """(share of pixels that are not near-white, number of distinct grey levels) of an image;
    ``body_only`` leaves out the bottom 8 % (a PDF page's footer with the page number)."""
    from PIL import Image

    with Image.open(png) as image:
        grey = image.convert("L")
        if body_only:
            grey = grey.crop((0, 0, grey.width, int(grey.height * 0.92)))
        histogram = grey.histogram()
    total = sum(histogram)
    return sum(histogram[:245]) / total, sum(1 for count in histogram if count)


# -- files -------------------------------------------------------------------------------------
def test_writes_both_files_atomically_into_report_folder(report: dict[str, Any], run_dir: Path) -> None:
    files: ReportFiles = report["files"]
    assert files.html == run_dir / "report" / "report.html"
    assert files.pdf == run_dir / "report" / "report.pdf"
    assert files.pdf.read_bytes().startswith(b"%PDF-")
    assert report["html"].startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in files.html.parent.iterdir()) == ["report.html", "report.pdf"]  # no tmp left
    assert files.html.stat().st_mode & 0o777 == 0o644


def test_missing_result_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"result\.json"):
        render_report(tmp_path)


def test_html_is_self_contained(html: str) -> None:
    assert "<link" not in html
    assert "<img" not in html
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html)
    assert "<style>" in html
    assert "<?xml" not in html and "<!DOCTYPE svg" not in html
    assert html.count("<svg") >= 5  # load, qps, footprint, trends (load + headline types)


def test_html_is_deterministic(run_dir: Path) -> None:
    result = read_result(run_dir)
    args = (result, read_validation(run_dir), read_examples(run_dir, result.targets), synthetic_history())
    assert render_html(*args) == render_html(*args)


def test_svg_ids_are_unique(html: str) -> None:
    ids = re.findall(r'\bid="([^"]+)"', html)
    duplicates = {i for i in ids if ids.count(i) > 1}
    assert not duplicates, sorted(duplicates)[:10]


# -- content -----------------------------------------------------------------------------------
def test_every_section_is_there(html: str) -> None:
    for anchor, heading in (
        ("summary", "Executive summary"),
        ("environment", "Environment"),
        ("methodology", "Methodology"),
        ("load", "Load"),
        ("queries", "Queries"),
        ("footprint", "Footprint"),
        ("resources", "CPU and memory"),
        ("validation", "Validation"),
        ("answers", "Answer checks"),
        ("trends", "Trends"),
        ("appendix-queries", "Appendix A: query texts"),
        ("appendix-configs", "Appendix B: server configurations"),
    ):
        assert f'<section id="{anchor}"' in html, anchor
        assert f"<h2>{heading}" in section(html, anchor), heading
        assert f'href="#{anchor}"' in html  # in the table of contents


def test_title_and_status_banner(html: str) -> None:
    assert (
        '<h1 class="doc-title">cpu-only at scale 100: QuestDB vs TimescaleDB vs PostgreSQL vs InfluxDB</h1>'
        in html
    )
    header = text_of(html[: html.index('<nav class="toc">')])
    assert "Run 20260101T120000Z-abc123" in header
    assert "started 2026-01-01 12:00:00 UTC" in header
    assert "864,000 rows" in header
    assert 'class="banner banner-fail"' in html
    assert "Validation FAILED — not replacing the latest report" in header
    assert "Critical expectations failed: query_success." in header
    assert f"Failed targets: InfluxDB (failed in load: {LOAD_ERROR})" in header


def test_executive_summary_names_winners_with_relative_differences(html: str) -> None:
    summary = text_of(section(html, "summary"))
    assert (
        "QuestDB loads 2.4× faster than TimescaleDB (410,000 vs 170,850 rows/s); 3.4× faster than PostgreSQL"
        in summary
    )
    assert (
        "QuestDB stores the data in the least space by its own accounting: 58.9 MB; "
        "TimescaleDB needs 7.0× as much (415 MB)" in summary
    )
    rows = table_with(html, "winners")
    assert row_of(rows, "Load")[1:4] == [
        "QuestDB",
        "410,000 rows/s",
        "2.4× faster than TimescaleDB (170,850 rows/s)",
    ]
    assert row_of(rows, "lastpoint (hot)")[1:3] == ["QuestDB", "510 qps"]
    # TimescaleDB's wrong answer / query error keep it out of the race for those types
    assert row_of(rows, "groupby-orderby-limit (hot)")[1:4] == [
        "QuestDB",
        "260 qps",
        "4.3× faster than PostgreSQL (61.0 qps)",
    ]
    assert row_of(rows, "high-cpu-all (hot)")[3].endswith("PostgreSQL (8.50 qps)")
    # QuestDB does not run cpu-max-all-8: TimescaleDB wins it
    assert row_of(rows, "cpu-max-all-8 (hot)")[1:3] == ["TimescaleDB", "21.0 qps"]
    assert row_of(rows, "Footprint, disk bytes")[1:3] == ["QuestDB", "66.0 MB"]


def test_caveats_are_honest(html: str) -> None:
    caveats = text_of(
        html[html.index('<ul class="caveats">') : html.index("</ul>", html.index('<ul class="caveats">'))]
    )
    assert f"InfluxDB failed in load: {LOAD_ERROR}" in caveats
    assert (
        "TimescaleDB compression: none: the Apache-2 edition has no native (columnar) compression" in caveats
    )
    assert f"QuestDB does not run cpu-max-all-8, ycsb-read: {UNSUPPORTED_REASON}" not in caveats
    assert f"QuestDB does not run cpu-max-all-8: {UNSUPPORTED_REASON}" in caveats
    assert "TimescaleDB: high-cpu-all (1 error(s), 0 wrong answer(s)) and groupby-orderby-limit" in caveats
    assert "QuestDB: the OS page cache was not dropped before the cold pass" in caveats
    assert "permission denied" in caveats
    assert "Only 4 queries per type" in caveats
    assert "same machine (2 cores)" in caveats


def test_environment_lists_machine_servers_and_clients(html: str) -> None:
    env = text_of(section(html, "environment"))
    for fact in ("AMD EPYC 7B13", "23.5 GiB", "Debian GNU/Linux 12 (bookworm)", "6.1.0-18-amd64", "3.11.7"):
        assert fact in env
    for version in ("questdb 9.3.4", "timescaledb 2.19.3", "postgres 15.18", "influxdb 1.6.7"):
        assert version in env
    assert "psycopg 3.3.9" in env and "duckdb 2.0.0" in env
    assert "local, 127.0.0.1 (main 41007)" in env


def test_methodology_states_how_it_was_measured(html: str) -> None:
    method = text_of(section(html, "methodology"))
    assert "2 workers, batches of 10,000 rows, hash-workers off; 3 trial(s) per target" in method
    assert "median" in method
    assert "then 2 hot pass(es)" in method
    assert "opens its connection inside its first query" in method
    assert "DuckDB" in method and "1e-9" in method
    assert "a" * 64 in method and "b" * 64 in method
    cache = table_with(section(html, "methodology"), "full")
    assert row_of(cache, "QuestDB")[1:5] == [
        "yes",
        "yes",
        "no",
        "cannot write /proc/sys/vm/drop_caches: permission denied",
    ]
    assert row_of(cache, "PostgreSQL")[3] == "yes"


def test_load_table_has_the_median_figures(html: str) -> None:
    rows = table_with(html, "load-table")
    assert rows[0][:5] == ["Target", "Rows", "Seconds", "Rows/s", "Metrics/s"]
    assert row_of(rows, "QuestDB")[:6] == ["QuestDB", "864,000", "2.11", "410,000", "4,100,000", "best"]
    assert row_of(rows, "TimescaleDB")[3:6] == ["170,850", "1,708,500", "2.4× slower"]
    assert row_of(rows, "PostgreSQL")[3:10] == [
        "120,500",
        "1,205,000",
        "3.4× slower",
        "80.0 %",
        "120.0 %",
        "900 MB",
        "1.25 GB",
    ]
    assert row_of(rows, "InfluxDB")[1] == f"failed in load: {LOAD_ERROR}"
    assert (
        "rows/s per trial: 410,000, 432,100, 395,000; "
        "min 395,000 · med 410,000 · max 432,100 rows/s · CV 4.5 %"
    ) in text_of(section(html, "load"))


def test_query_tables(html: str) -> None:
    overview = table_with(html, "qps-overview")
    assert overview[0] == ["Query type", "QuestDB", "TimescaleDB", "PostgreSQL", "InfluxDB"]
    assert row_of(overview, "lastpoint")[1:] == ["510", "140", "25.0", "failed in load"]
    assert row_of(overview, "cpu-max-all-8")[1] == f"unsupported: {UNSUPPORTED_REASON}"
    assert row_of(overview, "groupby-orderby-limit")[2] == "88.0 ✗ 1 wrong"
    assert row_of(overview, "high-cpu-all")[2] == "9.75 ✗ 1 err"
    queries = section(html, "queries")
    assert 'class="num bad">88.0 ✗ 1 wrong' in queries
    detail = queries[queries.index('id="q-lastpoint"') :]
    lastpoint = table_with(detail, "full")
    # p50 = 1000 / qps ms; p95 = 1.5 × p50; p99 = 2 × p50; cold mean = 1.05 × 3 × 1000 / (qps / 3)
    assert row_of(lastpoint, "QuestDB")[:8] == ["QuestDB", "510", "1.96", "2.94", "3.92", "4.12", "18.5", "8"]
    assert row_of(lastpoint, "PostgreSQL")[1:4] == ["25.0", "40.0", "60.0"]
    cpu_max = table_with(queries[queries.index('id="q-cpu-max-all-8"') :], "full")
    assert row_of(cpu_max, "QuestDB")[1] == f"unsupported: {UNSUPPORTED_REASON}"
    gol = table_with(queries[queries.index('id="q-groupby-orderby-limit"') :], "full")
    assert row_of(gol, "TimescaleDB")[-2:] == ["0", "1"]


def test_footprint_and_resources(html: str) -> None:
    rows = table_with(html, "footprint-table")
    assert row_of(rows, "QuestDB")[1:] == ["61.2 MB", "58.9 MB", "70.0 MB", "66.0 MB"]
    assert row_of(rows, "TimescaleDB")[1:] == ["412 MB", "415 MB", "440 MB", "441 MB"]
    assert row_of(rows, "InfluxDB")[1] == "failed in load"
    assert "questdb's own accounting: tables, indexes and WAL" in text_of(section(html, "footprint"))
    resources = table_with(section(html, "resources"), "full")
    postgres = [r for r in resources if r[0] == "PostgreSQL"]
    assert postgres[0][1:] == [
        "load (trial 1 of 3, the median)",
        "80.0 %",
        "120.0 %",
        "900 MB",
        "1.25 GB",
        "12",
    ]
    assert postgres[1][1:] == ["queries (cold + 2 hot passes)", "55.5 %", "160.0 %", "700 MB", "800 MB", "30"]


def test_validation_results(html: str) -> None:
    validation = section(html, "validation")
    text = text_of(validation)
    assert "1 expectation(s) passed, 1 failed, 1 warning(s)" in text
    assert "Critical failures: query_success." in text
    for suite in VALIDATION["suites"]:
        assert suite["name"] in text
    assert "pill-fail" in validation and "pill-warning" in validation and "pill-pass" in validation
    assert "every query answers (timescaledb high-cpu-all)" in text
    assert "bounds [200000, 292000]" in text


def test_not_validated_when_no_validation_file(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path, synthetic_result(), None)
    result = read_result(run_dir)
    page = render_html(result, read_validation(run_dir), read_examples(run_dir, result.targets))
    assert 'class="banner banner-none"' in page
    assert "Not validated" in text_of(page[: page.index('<nav class="toc">')])
    assert "Not enough history" in section(page, "trends")


def test_answer_check_with_mismatch_samples(html: str) -> None:
    answers = section(html, "answers")
    rows = table_with(answers, "answers-table")
    assert row_of(rows, "TimescaleDB")[1:] == ["69", "68", "1", "1"]
    assert row_of(rows, "QuestDB")[1:] == ["70", "70", "0", "0"]
    diff = table_with(answers, "diff")
    assert diff[0] == ["Row", "", "bucket", "max_usage_user"]
    assert diff[1] == ["0", "expected", "2016-01-01T23:55:00Z", "98"]
    assert diff[2] == ["got", "2016-01-01T00:00:00Z", "97"]
    assert diff[4] == ["got", "(missing)"]
    assert "5 of 5 expected rows differ" in answers
    assert "QueryCanceled: statement timeout" in answers


def test_trend_charts_from_history(html: str) -> None:
    trends = section(html, "trends")
    text = text_of(trends)
    assert "The last 4 runs with the same use case and scale" in text
    assert "1 earlier run(s) at another use case or scale left out" in text
    assert trends.count("<svg") == 5  # load + 4 headline query types
    assert "20251201T120000Z-old1" in text and "(this)" in text


def test_charts_keep_each_target_colour(html: str) -> None:
    for anchor in ("load", "queries", "trends"):
        part = section(html, anchor)
        for name in ("questdb", "timescaledb", "postgres"):
            assert target_colour(name).lower() in part.lower(), (anchor, name)


def test_appendix_has_query_texts_and_configs(html: str) -> None:
    appendix = section(html, "appendix-queries")
    assert "SAMPLE BY 1m ALIGN TO CALENDAR /* lastpoint #0 */" in appendix
    assert "/* lastpoint #1 */" not in appendix  # one example per type
    assert "hostname IN (&#39;host_7&#39;)" in appendix  # escaped, shown verbatim
    assert f"unsupported: {UNSUPPORTED_REASON}" in text_of(appendix)
    configs = section(html, "appendix-configs")
    assert "# written by tsbench for timescaledb" in configs
    assert "max_parallel_workers" in configs


def test_history_at_another_scale_only_is_not_a_trend(run_dir: Path) -> None:
    other = synthetic_result("20251215T120000Z-bigger", "2025-12-15T12:00:00Z")
    other["spec"]["scale"] = 4000
    result = read_result(run_dir)
    page = render_html(result, None, None, [other])
    assert "Not enough history" in section(page, "trends")


# -- the PDF and how both look -----------------------------------------------------------------
def test_pdf_has_pages_and_text(report: dict[str, Any], pdf_text: str) -> None:
    pages = pdf_text.count("\f")
    assert pages > 1
    flat = " ".join(pdf_text.split())
    assert "Executive summary" in flat
    assert "Validation FAILED" in flat
    assert "page 1 of" in flat
    # the load table
    assert re.search(r"QuestDB\s+864,000\s+2\.11\s+410,000\s+4,100,000\s+best", pdf_text)
    assert re.search(r"TimescaleDB\s+864,000\s+5\.06\s+170,850\s+1,708,500\s+2\.4× slower", pdf_text)


def test_screenshot_of_the_html_is_not_blank(report: dict[str, Any], tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.fail(
            "chromium is not installed: scripts/install_report_tools.sh installs it (scripts/test.sh runs it)"
        )
    png = _look_dir(tmp_path) / "report-html.png"
    png.unlink(missing_ok=True)
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'chromium-profile'}",
            f"--screenshot={png}",
            "--window-size=1280,2000",
            report["files"].html.as_uri(),
        ],
        capture_output=True,
        check=True,
        timeout=120,
    )
    from PIL import Image

    ink, levels = _ink(png)
    assert levels > 50, "screenshot is (nearly) one colour"
    assert 0.03 < ink < 0.6, f"share of non-white pixels {ink:.3f}"
    with Image.open(png) as image:
        rgb = image.convert("RGB")
        assert rgb.size == (1280, 2000)
        # the red "validation failed" banner is visible near the top
        banner = sum(
            1
            for x in range(0, 1280, 4)
            for y in range(0, 400, 4)
            if abs(rgb.getpixel((x, y))[0] - 0xFF) < 6 and abs(rgb.getpixel((x, y))[1] - 0xEB) < 8
        )
        assert banner > 500


def test_pdf_pages_render_to_non_blank_images(report: dict[str, Any], tmp_path: Path) -> None:
    pdftoppm = _tool("pdftoppm")
    folder = _look_dir(tmp_path)
    for old in folder.glob("report-pdf-*.png"):
        old.unlink()
    subprocess.run(
        [pdftoppm, "-png", "-r", "50", str(report["files"].pdf), str(folder / "report-pdf")],
        check=True,
        timeout=120,
    )
    pages = sorted(folder.glob("report-pdf-*.png"))
    assert len(pages) > 1
    inks = []
    for page in pages:
        ink, levels = _ink(page, body_only=True)
        assert levels > 10, f"{page.name} is (nearly) one colour"
        assert ink > 0.004, (
            f"{page.name}: only {ink:.3%} of the page above the footer is not white (orphan lines?)"
        )
        inks.append(ink)
    # pages carry text, tables and charts, not a word here and there
    assert sum(inks) / len(inks) > 0.02, inks
    assert inks[0] > 0.05  # the first page carries the title, banner and summary


def test_weasyprint_logs_no_warning_for_the_report(
    run_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The report's HTML, charts included, is CSS WeasyPrint knows: no "Ignored `fill: …`,
    unknown property" per SVG declaration (the fontTools notice of a machine without
    libharfbuzz-subset is logged at DEBUG by html_to_pdf), and no per-page progress lines. (Rendered
    into another folder: ``out_dir`` is honoured.)"""
    caplog.set_level(logging.DEBUG, logger="weasyprint")
    logging.getLogger("weasyprint.progress").info("canary")  # capture works, or the check proves nothing
    assert [r.getMessage() for r in caplog.records] == ["canary"]
    caplog.clear()
    files = render_report(run_dir, synthetic_history(), out_dir=tmp_path / "published")
    assert files == ReportFiles(tmp_path / "published" / "report.html", tmp_path / "published" / "report.pdf")
    assert files.html.is_file() and files.pdf.read_bytes().startswith(b"%PDF-")
    weasyprint = [r for r in caplog.records if r.name.split(".")[0] == "weasyprint"]
    warnings = [r.getMessage() for r in weasyprint if r.levelno >= logging.WARNING]
    assert warnings == [], f"{len(warnings)} WeasyPrint warnings, e.g. {sorted(set(warnings))[:5]}"
    progress = [r.getMessage() for r in weasyprint if r.name == "weasyprint.progress"]
    assert progress == [], f"{len(progress)} progress lines (one per layout step) in the task log"


def test_fixture_is_shaped_like_a_real_result() -> None:
    """The synthetic result has the keys collect() writes (so the fixture cannot drift silently)."""
    result = synthetic_result()
    assert {
        "format",
        "run_id",
        "created_at",
        "finished_at",
        "spec",
        "dataset",
        "machine",
        "clients",
        "oracle_s",
        "targets",
        "queries",
        "samples",
    } <= set(result)
    ok = result["targets"]["postgres"]
    assert set(ok) == {
        "provision",
        "prepare",
        "load",
        "footprint",
        "cache_reset",
        "queries",
        "teardown",
        "status",
    }
    assert set(ok["queries"]) == {
        "cold",
        "hot",
        "hot_passes",
        "unsupported",
        "answer_checks",
        "errors",
        "resources",
    }
    from tsbench.measure.stats import client_cpu, latency_stats

    shape = set(latency_stats([1.0, 2.0], 1.0)) | set(client_cpu(0.1, 1.0))  # as PassResult.stats
    assert set(ok["queries"]["hot"]["lastpoint"]) == shape
    failed = result["targets"]["influxdb"]
    assert failed["status"] == "failed" and failed["failed_phase"] == "load"
    copy.deepcopy(result)  # plain JSON data
    json.dumps(result)


def test_a_run_where_every_target_failed_still_renders(tmp_path: Path) -> None:
    result = synthetic_result()
    for name in ("questdb", "timescaledb", "postgres"):
        result["targets"][name] = {
            "provision": result["targets"][name]["provision"],
            "teardown": {"seconds": 0.1},
            "status": "failed",
            "failed_phase": "prepare",
            "error": f"TargetError: {name}: schema could not be created",
        }
    result["targets"]["incomplete"] = {"status": "incomplete", "stopped_before": "acquire_machine"}
    page = render_html(result)
    assert "No target produced comparable figures." in page
    assert 'class="banner banner-none"' in page
    header = text_of(page[: page.index('<nav class="toc">')])
    assert "QuestDB (failed in prepare: TargetError: questdb: schema could not be created)" in header
    assert "incomplete (incomplete: acquire_machine never ran (its task did not start:" in header
    assert row_of(table_with(page, "load-table"), "PostgreSQL")[1].startswith("failed in prepare")
    assert "qps-chart" not in page and "footprint-chart" not in page


def write_comparison(root: Path) -> Path:
    """A comparison folder (tsbench.run.comparison): scale-100 and scale-1000, validation per scale."""
    folder = root / "20260101T120000Z-cmp001"
    small = synthetic_result(folder.name)
    big = synthetic_result(folder.name)
    big["spec"]["scale"] = 1000
    big["dataset"]["rows_total"] = big["dataset"]["rows"]["cpu"] = ROWS * 10
    for body in big["targets"].values():
        if "load" in body:
            body["load"]["median_rows_per_s"] *= 1.5
            for trial in body["load"]["trials"]:
                trial["rows_per_s"] *= 1.5
    passed = {**VALIDATION, "success": True, "critical_failed": [], "warnings": []}
    (folder).mkdir()
    for result, validation in ((small, VALIDATION), (big, passed)):
        scale = result["spec"]["scale"]
        run_dir = write_run(folder, {**result, "run_id": f"scale-{scale}"}, validation)
        body = json.loads((run_dir / "result.json").read_text())
        body["run_id"] = folder.name  # a scale folder's result carries the comparison's id
        (run_dir / "result.json").write_text(json.dumps(body))
    comparison = {
        "format": "tsbench-comparison/1",
        "run_id": folder.name,
        "scales": [100, 1000],
        "targets": small["spec"]["targets"],
        "failed_targets": ["influxdb"],
        "results": {"100": small, "1000": big},
    }
    (folder / "comparison.json").write_text(json.dumps(comparison))
    return folder


def test_a_comparison_folder_gives_one_report_over_every_scale(tmp_path: Path) -> None:
    folder = write_comparison(tmp_path)
    page = render_document(read_inputs(folder), [synthetic_history()[0]])  # the PDF: tests above
    assert '<h1 class="doc-title">cpu-only at scale 100, 1,000:' in page
    across = table_with(page, "across-load")
    assert across[0] == ["Scale", "QuestDB", "TimescaleDB", "PostgreSQL", "InfluxDB"]
    assert across[1] == ["100", "410,000", "170,850", "120,500", "–"]
    assert across[2] == ["1,000", "615,000", "256,275", "180,750", "–"]
    # every scale keeps its own sections, with distinct anchors and chart ids
    for prefix in ("s100-", "s1000-"):
        assert f'<section id="{prefix}load"' in page and f'id="{prefix}part"' in page
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids))
    header = text_of(page[: page.index('<nav class="toc">')])
    assert "Validation FAILED" in header and "scale 100: query_success" in header
    assert "scale 1,000: InfluxDB (failed in load" in header
    # a scale folder on its own reads the comparison-level validation when it has none itself
    (folder / "scale-1000" / "validation.json").unlink()
    (folder / "validation.json").write_text(
        json.dumps({**VALIDATION, "success": True, "critical_failed": []})
    )
    single = read_inputs(folder / "scale-1000")
    assert len(single) == 1 and single[0][1] is not None and single[0][1].success
    assert "Validation passed" in render_document(single)


def test_placement_rows_flatten_runtime_facts() -> None:
    from tsbench.report.model import placement_rows

    rows = placement_rows(
        {
            "provider": "aws",
            "benchmark_host": {"instance_type": "m5.2xlarge", "data_volume": {"type": "gp3", "iops": None}},
            "host": {"cpus": 8, "block_devices": {"x": 1}},
            "client_host": None,
        }
    )
    assert rows == [
        ("provider", "aws"),
        ("benchmark_host.instance_type", "m5.2xlarge"),
        ("benchmark_host.data_volume.type", "gp3"),
        ("host.cpus", "8"),
    ]


def test_the_report_says_when_the_client_mattered(html: str) -> None:
    rows = table_with(html, "load-table")
    assert rows[0][-2:] == ["Client CPU-s", "Client share"]
    assert row_of(rows, "QuestDB")[-1] == "31.0 %" and row_of(rows, "PostgreSQL")[-1] == "5.0 %"
    load = text_of(section(html, "load"))
    assert "Request bodies were encoded before the timed window" in load
    assert "QuestDB 299 MB in 87 bodies, 1.52 s (2.90 CPU-s, 2 processes)" in load
    assert "PostgreSQL 299 MB in 87 bodies, 1.52 s (2.90 CPU-s, 2 processes, from the cache)" in load
    assert "Request bodies were streamed: encoded during the timed window" in load
    assert (
        "on the server's cores" in load
        and "TimescaleDB 299 MB in 87 bodies, 2.90 CPU-s in 2 processes" in load
    )
    assert "TimescaleDB 299 MB in 87 bodies, 1.52 s" not in load
    client = table_with(html, "client-table")
    assert row_of(client, "high-cpu-all")[1] == "0.40 · 42.0 %"
    caveats = text_of(
        html[html.index('<ul class="caveats">') : html.index("</ul>", html.index('<ul class="caveats">'))]
    )
    assert "The benchmark client used more than 25% of the machine's CPU in QuestDB load (31%)" in caveats
    assert "QuestDB high-cpu-all (42%)" in caveats and "PostgreSQL load" not in caveats


def test_targets_are_named_and_coloured_as_their_folders_declare() -> None:
    """The report takes a target's title and colour from its folder (``Target.title``/``colour``):
    ``mongodb_naive`` shows as its title, never as the raw id."""
    result = synthetic_result()
    result["targets"]["mongodb_naive"] = result["targets"].pop("postgres")
    page = render_html(result)
    title = target_title("mongodb_naive")
    assert title == "MongoDB (event documents)"
    assert row_of(table_with(page, "load-table"), title)[1] == "864,000"
    assert target_colour("mongodb_naive").lower() in section(page, "load").lower()
    assert "mongodb_naive" not in text_of(section(page, "summary"))
    assert "mongodb_naive" not in text_of(section(page, "load"))
