"""An iot comparison through the CLI pipeline on four local servers: nameless trucks and field-less
points reach every target, each holds what its data model can keep, and the report says why; the
iot query types that fit an hour run on each, every answer checked, and InfluxDB's refusals are in
the report with their reasons."""

from __future__ import annotations

import html
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tsbench.results.files import read_json
from tsbench.spec import DatasetSpec
from tsbench.workload.dataset import ensure_dataset
from tsbench.workload.stored_rows import stored_rows

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
TARGETS = ("questdb", "timescaledb", "postgres", "influxdb")


def test_an_iot_run_stores_nameless_trucks_on_every_target(tmp_path: Path, dataset_cache: Path) -> None:
    """100 trucks × 1 h: every target's row count is checked by the run against what its model
    keeps (InfluxDB: no field-less points, one point per nameless instant); the others hold every
    row, nameless ones included."""
    spec = DatasetSpec.parse(use_case="iot", scale=100, end="2016-01-01T01:00:00Z")
    dataset, _ = ensure_dataset(spec, dataset_cache)
    nameless = {m: dataset.read(m).column("name").null_count for m in dataset.measurements}
    assert all(nameless.values()), nameless
    out, state = tmp_path / "out", Path("/var/tmp/tsbench-tests") / tmp_path.name
    run = ["run", "--targets", ",".join(TARGETS), "--use-case", "iot", "--scales", "100"]
    run += ["--duration", "1h", "--run-id", "iot", "--runtime", "local", "--results-dir", str(out)]
    run += ["--cache-dir", str(dataset_cache), "--state-dir", str(state)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    result = subprocess.run([sys.executable, "-m", "tsbench", *run], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    comparison = read_json(out / "iot" / "comparison.json")
    assert comparison["failed_targets"] == []
    kept = {  # what each model keeps (the run checked each target's count against this)
        "influxdb": stored_rows(dataset, keeps_fieldless=False, merges_nameless=True),
        "questdb": stored_rows(dataset, keeps_bare=False),  # a line needs a tag or a field
    }
    for name in TARGETS:
        body = comparison["results"]["100"]["targets"][name]
        assert body["status"] == "ok" and body["load"]["row_count_ok"], body.get("error")
        assert body["load"]["trials"][0]["row_counts"] == kept.get(name, dataset.rows), name
        checks = body["queries"]["answer_checks"]  # the iot types that fit 1 h, every answer checked
        assert checks["checked"] >= 10 * 8 and checks["mismatches"] == 0, (name, checks)
    for rows in kept.values():
        assert sum(rows.values()) < sum(dataset.rows.values())
    report = html.unescape((out / "iot" / "report" / "report.html").read_text())
    assert "Rows it cannot keep as they are:" in report and "nameless iot row" in report
    refused = comparison["results"]["100"]["targets"]["influxdb"]["queries"]["unsupported"]
    assert set(refused) == {
        "last-loc",
        "low-fuel",
        "high-load",
        "avg-daily-driving-session",
        "daily-activity",
        "breakdown-frequency",
    }
    assert all(reason in report for reason in refused.values())  # said in the report, with why
