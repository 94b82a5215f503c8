"""A run comparing a target's pinned server with one other release of it (``versions``), through the
CLI, and the checks every such run must pass: shared by the targets' release tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tsbench.results.files import read_json
from tsbench.targets.registry import load_target
from tsbench.targets.releases import instance_name

ROOT = Path(__file__).resolve().parents[2]
SCALE = 10
ROWS = 43_200  # cpu-only, 10 hosts × 12 h at 10 s


@dataclass(frozen=True)
class ReleaseRun:
    result: subprocess.CompletedProcess[str]
    folder: Path
    state: Path


def run_with_release(tmp: Path, dataset_cache: Path, target: str, release: str) -> ReleaseRun:
    """``release``'s server installed by its recipe, then ``tsbench run --targets <target> --versions
    {"<target>": ["<release>"]}`` at scale 10 × 12 h, 2 queries per type, one hot run."""
    load_target(instance_name(target, release)).server_recipe()(Path("/nonexistent"), {}).install()
    out, state = tmp / "out", Path("/var/tmp/tsbench-tests") / tmp.name
    run = ["run", "--targets", target, "--versions", json.dumps({target: [release]}), "--scales", str(SCALE)]
    run += ["--duration", "12h", "--queries-per-type", "2", "--hot-runs", "1", "--run-id", "releases"]
    run += ["--results-dir", str(out / "runs"), "--cache-dir", str(dataset_cache), "--state-dir", str(state)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    result = subprocess.run([sys.executable, "-m", "tsbench", *run], capture_output=True, text=True, env=env)
    return ReleaseRun(result, out / "runs" / "releases", state)


def check_both_branches(run: ReleaseRun, versions: dict[str, str]) -> dict[str, Any]:
    """Every branch (target name → the version its server must report) ok: every row loaded, all 20
    query types cold and hot with every answer agreeing with the oracle, restarted for the cold
    pass, no instance left behind. Returns the scale's targets from ``comparison.json``."""
    assert run.result.returncode == 0, run.result.stderr[-3000:]
    comparison = read_json(run.folder / "comparison.json")
    assert comparison["failed_targets"] == [] and comparison["targets"] == list(versions)
    targets = comparison["results"][str(SCALE)]["targets"]
    assert list(targets) == list(versions)
    for name, version in versions.items():
        body = targets[name]
        assert body["status"] == "ok", body.get("error")
        assert body["provision"]["version"] == version
        assert body["load"]["row_count_ok"] and body["load"]["trials"][0]["rows"] == ROWS
        checks = body["queries"]["answer_checks"]
        assert checks["mismatches"] == 0 and checks["agreed"] == checks["checked"] > 0
        assert len(body["queries"]["cold"]) == len(body["queries"]["hot"]) == 20
        assert body["cache_reset"]["restarted"]
    assert not list(run.state.glob("releases-*")), "a server instance was left behind"
    return targets
