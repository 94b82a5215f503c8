"""``runtime=aws`` through the DAG, against a local EC2/S3-compatible endpoint (moto's server).

moto creates the instance, volumes and security group for real (in its own state) but boots no
machine, so the benchmark host never becomes ready: the run fails midway, after ``terraform apply``
created everything. That is the case to prove — teardown runs ``terraform destroy`` anyway, nothing
is left, and the report is still published with the failure — and with what the host cost.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from integration.moto import FAKE_CREDENTIALS, leftovers, run_options

from tsbench.airflow.params import DEFAULTS
from tsbench.results.files import read_json

pytest_plugins = ("integration.moto",)
pytestmark = [pytest.mark.integration, pytest.mark.slow]
MIRROR = "/opt/tf-plugins"
CANARY = "canary-db-password-5f1d0c"  # the database password the run is given: must appear nowhere


@pytest.fixture
def aws_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    state = Path("/var/tmp/tsbench-tests") / uuid.uuid4().hex[:8]
    for key, value in {
        **FAKE_CREDENTIALS,
        "TSBENCH_RESULTS": str(tmp_path / "out" / "runs"),
        "TSBENCH_DATASETS": str(tmp_path / "datasets"),
        "TSBENCH_STATE": str(state),
        "TSBENCH_TF_PLUGIN_MIRROR": MIRROR,
        "TSBENCH_QUESTDB_PASSWORD": CANARY,
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AIRFLOW_CONN_TSBENCH_S3", raising=False)
    return {"out": tmp_path / "out", "state": state}


def test_aws_run_failing_midway_is_destroyed_and_reported(
    dagbag,
    aws_env: dict[str, Path],
    moto_url: str,
    aws_client: Callable[[str], Any],
    caplog,
) -> None:
    ami = aws_client("ec2").describe_images()["Images"][0]["ImageId"]
    conf = {
        **DEFAULTS,
        "scales": [10],
        "duration": "12h",
        "queries_per_type": 1,
        "hot_runs": 1,
        "targets": ["questdb"],
        "runtime": "aws",
        "aws": run_options(moto_url, ami),
    }
    dag = dagbag.get_dag("tsbench_comparison")
    with caplog.at_level(logging.INFO, logger="tsbench"):
        run = dag.test(run_conf=conf)
    assert run is not None and run.state == "failed"

    folder = next(p for p in (aws_env["out"] / "runs").iterdir() if p.is_dir())
    target_dir = folder / "scale-10" / "targets" / "questdb"
    error = read_json(target_dir / "error.json")
    assert error["failed_phase"] == "provision" and "not ready" in error["error"]
    assert "benchmark host i-" in error["error"] and "m5.large" in error["error"]  # which host
    assert (target_dir / "teardown.json").is_file(), "teardown did not run"

    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "Destroy complete!" in logged  # Terraform's own lines
    assert logged.count("Apply complete!") == 1, "a host that never became ready was provisioned again"
    assert read_json(target_dir / "cloud_instance.json")["state"]["stage"] == "destroyed"
    assert CANARY not in logged
    assert not [p for p in folder.rglob("*") if p.is_file() and CANARY.encode() in p.read_bytes()]
    assert leftovers(aws_client) == {
        "instances": [],
        "volumes": [],
        "security_groups": [],
        "key_pairs": [],
        "buckets": [],
    }
    assert not any((aws_env["state"] / "aws").glob("*")), "the runtime kept state of a destroyed host"
    report = (folder / "report" / "report.html").read_text()
    assert "provision" in report and "not ready" in report
    # What the host cost, from the lease taken before its (failed) provisioning to the end of destroy
    cost = report[report.index("Cost and price-performance") : report.index("<h2>Methodology</h2>")]
    assert "m5.large benchmark host" in cost and "data volume (gp3, 10 GB)" in cost
    assert "from the lease taken before provisioning (which failed) to the end of teardown" in cost
    result = read_json(folder / "scale-10" / "result.json")
    assert result["price"]["priced"] and result["price"]["table_date"]
