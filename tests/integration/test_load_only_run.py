"""A load-only run (``queries_per_type`` 0, as study B's preset): loads measured and row counts
checked, no query set, no cold restart, no query passes; validated and reported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tsbench.results.files import read_json

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
TARGETS = ("questdb", "influxdb")


def test_a_load_only_run_loads_checks_and_reports(tmp_path: Path, dataset_cache: Path) -> None:
    out, state = tmp_path / "out", Path("/var/tmp/tsbench-tests") / tmp_path.name
    run = ["run", "--targets", ",".join(TARGETS), "--scales", "100", "--duration", "1h"]
    run += ["--queries-per-type", "0", "--workers", "2", "--trials", "2", "--run-id", "lo"]
    run += ["--runtime", "local", "--results-dir", str(out), "--cache-dir", str(dataset_cache)]
    run += ["--state-dir", str(state)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    result = subprocess.run([sys.executable, "-m", "tsbench", *run], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "answers agree" not in result.stdout  # nothing was asked: no "0/0" line
    assert "Queries: none (a load-only run: queries_per_type 0)" in result.stdout
    point = out / "lo" / "scale-100"
    assert (point / "queries.jsonl").read_text() == ""
    comparison = read_json(out / "lo" / "comparison.json")
    assert comparison["failed_targets"] == []
    for name in TARGETS:
        body = comparison["results"]["100"]["targets"][name]
        assert body["status"] == "ok" and body["load"]["row_count_ok"], body.get("error")
        assert [t["row_counts"] for t in body["load"]["trials"]] == [{"cpu": 36_000}] * 2
        assert not body["cache_reset"].get("restarted"), body["cache_reset"]
        assert "no queries" in body["cache_reset"]["note"]
    assert read_json(out / "lo" / "validation.json")["success"]
    report = out / "lo" / "report"
    assert (report / "report.pdf").is_file()
    text = (report / "report.html").read_text()
    assert text.count("A load-only run: no query ran (queries per type 0)") == 3  # queries, answers, texts
    assert "Cache reset before the cold pass" not in text and "its cold figures are warm" not in text
