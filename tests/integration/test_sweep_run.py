"""A worker sweep through the CLI's ``study`` command on a real server: one point per worker count,
one provisioned server for all of them, each point loaded and queried with its own settings and
checked against the oracle; the report's sweep section and the study's claims checked on the run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tsbench.results.files import read_json

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
POINTS = ("scale-10_workers-1", "scale-10_workers-2")
TYPES = ["single-groupby-1-1-1", "double-groupby-1"]
STUDY = {
    "name": "worker_sweep",
    "title": "Workers sweep (test)",
    "params": {"targets": ["postgres"], "scales": [10], "duration": "12h", "workers": [1, 2]},
    "sizes": {"tiny": {"params": {"query_types": TYPES, "queries_per_type": 2, "hot_runs": 1}}},
    "default_size": "tiny",
    "published": {
        "source": "a test",
        "machine": "a bigger machine",
        "claims": [
            {"text": "line 1: two workers load faster", "metric": "load_rows_per_s", "target": "postgres",
             "better_at": {"workers": 2}, "worse_at": {"workers": 1}},
            {"text": "line 2: a client claim", "metric": "load_rows_per_s", "not_comparable": "client code"},
        ],
    },
}  # fmt: skip


def test_a_worker_sweep_measures_every_point_on_one_server(tmp_path: Path, dataset_cache: Path) -> None:
    out, state = tmp_path / "out", Path("/var/tmp/tsbench-tests") / tmp_path.name
    study = tmp_path / "worker_sweep.yaml"
    study.write_text(yaml.safe_dump(STUDY))
    run = [
        "study",
        str(study),
        "--run-id",
        "sweep",
        "--results-dir",
        str(out / "runs"),
        "--cache-dir",
        str(dataset_cache),
        "--state-dir",
        str(state),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    result = subprocess.run([sys.executable, "-m", "tsbench", *run], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    folder = out / "runs" / "sweep"

    walked = [line.removeprefix("· ") for line in result.stderr.splitlines() if line.startswith("· ")]
    branch = "scale-10_workers-1 … +1 × postgres"  # one branch: the server group of both points
    for phase in ("provision", "load", "queries", "teardown"):
        assert [step for step in walked if step.startswith(phase + " ")] == [f"{phase} {branch}"]

    plan = read_json(folder / "plan.json")
    assert [p["name"] for p in plan["points"]] == list(POINTS) and plan["varied"] == ["workers"]
    assert plan["study"]["name"] == "worker_sweep" and plan["study"]["published"]["claims"]
    assert {p["server_group"] for p in plan["points"]} == {POINTS[0]}
    comparison = read_json(folder / "comparison.json")
    assert list(comparison["results"]) == ["10_workers-1", "10_workers-2"]
    assert comparison["failed_targets"] == [] and comparison["varied"] == ["workers"]
    assert comparison["study"] == "worker_sweep"
    endpoints = set()
    for workers, key in enumerate(comparison["results"], start=1):
        body = comparison["results"][key]["targets"]["postgres"]
        assert body["status"] == "ok", body.get("error")
        trial = body["load"]["trials"][0]
        assert trial["workers"] == workers and trial["rows"] == 43_200 and body["load"]["row_count_ok"]
        assert body["cache_reset"]["restarted"], key  # every point's queries start cold
        checks = body["queries"]["answer_checks"]
        assert checks["mismatches"] == 0 and checks["agreed"] == checks["checked"] > 0
        endpoints.add(repr(body["provision"]["endpoint"]))
    assert len(endpoints) == 1, "the points were not measured on one server"
    second = comparison["results"]["10_workers-2"]["targets"]["postgres"]
    assert second["provision"]["shared_from"] == POINTS[0]
    assert second["footprint"]["loaded_by"] == POINTS[1]

    html = (folder / "report" / "report.html").read_text()
    assert "Across the sweep: workers" in html and "Load rate by workers" in html
    assert "each with its own schema reset, loads and cold restart before its queries;" in html
    start = html.index('id="published"')
    claims = html[start : html.index("</section>", start)]
    assert "Published vs measured: Workers sweep (test)" in claims and "client code" in claims
    # no published ratio: direction only at best (or a tie, or reversed — all beyond the noise rule)
    checked = re.search(r"pill-(warning|neutral|fail)\">(direction only|tie|reversed)</span>", claims)
    assert checked, "the workers claim was not checked"
    assert "2 published claims of Workers sweep (test): " in html
    assert "claims of worker_sweep" in result.stdout
    assert re.search(r"\| line 1 +\| (direction only|tie|reversed) +\| 1/1 ", result.stdout), result.stdout
    assert "10 hosts · 2 workers: " in claims  # the figures it rests on
    assert read_json(folder / "validation.json")["success"] is True
    assert not list(state.glob("sweep-*")), "a server instance was left behind"
