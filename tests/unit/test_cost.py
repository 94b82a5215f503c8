"""What a cloud run costs: the price table's lookup (runtimes/aws_pricing.py), "no price" wherever the
table has none or the runtime rents nothing, a host's hours from its records (results/cost.py), the
report's cost section, and the estimated cost of the studies' paper sizes in ``--plan-only``.

The aws run folder is made from a real recorded one (tests/data/run_before_issue43, a local run):
only what an aws run records differently is changed (the spec's runtime and options, provision's
runtime and placement as ``AwsRuntime.attach`` records them, the instants a host lived), then it is
collected and its report rendered as any run's."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tsbench.report.render import read_inputs, render_document
from tsbench.report.sections.cost import cost_section
from tsbench.report.sections.load import load_section
from tsbench.report.sections.status import target_view
from tsbench.results.cost import host_hours
from tsbench.results.files import read_json
from tsbench.results.model import (
    LeaseTaken,
    Provision,
    QueriesPhase,
    QueryStats,
    RunResult,
    TargetResult,
    Teardown,
)
from tsbench.run.collect import collect, recorded_price
from tsbench.runtimes.aws_pricing import host_price, price_table, terraform_defaults
from tsbench.runtimes.options import AwsOptions
from tsbench.runtimes.select import machine_price
from tsbench.spec import RunSpec
from tsbench.studies import load_study

ROOT = Path(__file__).resolve().parents[2]
OLD = ROOT / "tests" / "data" / "run_before_issue43"
DATE = "2024-06-01"
STUDY_A = AwsOptions(
    instance_type="m5.2xlarge",
    data_volume_gb=1024,
    data_volume_iops=5000,
    data_volume_throughput=200,
    orchestrator_cidr=["203.0.113.7/32"],
)
# Study A's host: the instance, a 30 GB gp3 root volume, the data volume's GB, IOPS above 3,000 and
# MiB/s above 125 (per month ÷ 730 h), one public IPv4 address.
STUDY_A_PER_H = 0.384 + 30 * 0.08 / 730 + (1024 * 0.08 + 2000 * 0.005 + 75 * 0.04) / 730 + 0.005


def test_the_price_table_is_dated_and_sourced_and_prices_a_study_host() -> None:
    table = price_table()
    assert str(table.date) == DATE and "aws.amazon.com/ec2/pricing" in table.source
    assert {"us-east-1", "eu-central-1", "eu-west-1"} <= set(table.regions)
    price = host_price(STUDY_A)
    assert price.priced and price.usd_per_h == pytest.approx(STUDY_A_PER_H)
    assert [line.item for line in price.lines] == [
        "m5.2xlarge benchmark host",
        "benchmark host's root volume (gp3, 30 GB)",
        "data volume (gp3, 1,024 GB)",
        "public IPv4 address",
    ]
    assert DATE in price.table and "verify" in price.table and "data transfer" in price.not_counted
    frankfurt = host_price(STUDY_A.model_copy(update={"region": "eu-central-1"}))
    assert frankfurt.lines[0].usd_per_h == 0.46


def test_a_client_host_and_tiered_iops_are_priced_from_terraforms_own_defaults() -> None:
    defaults = terraform_defaults()  # what Terraform uses where the runtime passes nothing
    assert (defaults["root_volume_type"], defaults["client_root_volume_size_gb"]) == ("gp3", 50)
    assert defaults["associate_public_ip"] is True
    price = host_price(AwsOptions(client_host=True, client_instance_type="c5.2xlarge"))
    items = {line.item: line.usd_per_h for line in price.lines}
    assert items["c5.2xlarge client host"] == 0.34
    assert items["client host's root volume (gp3, 50 GB)"] == pytest.approx(50 * 0.08 / 730)
    assert items["public IPv4 addresses"] == pytest.approx(0.01)
    io2 = host_price(AwsOptions(data_volume_type="io2", data_volume_gb=100, data_volume_iops=40_000))
    data = next(line for line in io2.lines if line.item.startswith("data volume"))
    assert data.usd_per_h == pytest.approx((100 * 0.125 + 32_000 * 0.065 + 8_000 * 0.0455) / 730)


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (AwsOptions(instance_type="c7a.large"), f"no price for c7a.large in us-east-1 (table of {DATE})"),
        (AwsOptions(region="ap-south-1"), f"no price for m5.2xlarge in ap-south-1 (table of {DATE})"),
        (
            AwsOptions(region="eu-central-1", data_volume_type="io2", data_volume_iops=1000),
            f"no price for io2 volumes in eu-central-1 (table of {DATE})",
        ),
        (
            AwsOptions(data_volume_type="standard"),
            f"no price for standard volumes in us-east-1 (table of {DATE})",
        ),
    ],
)
def test_what_the_table_does_not_list_has_no_price_never_a_guess(options: AwsOptions, said: str) -> None:
    price = host_price(options)
    assert not price.priced and price.usd_per_h is None and price.no_price == said
    assert price.cost_usd(3.0) is None


def test_local_and_docker_runs_have_no_price() -> None:
    for runtime in ("local", "docker"):
        spec = RunSpec.parse(targets=["postgres"], scale=10, runtime=runtime)
        price = machine_price(spec)
        assert not price.priced and price.no_price == f"no price ({runtime})"


def _target(**records: object) -> TargetResult:
    return TargetResult.from_json({"status": "ok", **records})


def test_a_hosts_hours_come_from_when_it_was_provisioned_and_torn_down() -> None:
    lived = _target(
        provision={"started_at": "2026-12-01T10:00:00Z"},
        teardown={"finished_at": "2026-12-01T12:30:00Z"},
    )
    assert host_hours(lived).hours == pytest.approx(2.5) and not host_hours(lived).lower_bound
    failed = TargetResult.from_json(
        {
            "status": "failed",
            "failed_phase": "provision",
            "acquire_machine": LeaseTaken(taken_at="2026-12-01T10:00:00Z").to_json(),
            "teardown": Teardown(finished_at="2026-12-01T10:21:00Z").to_json(),
        }
    )
    assert host_hours(failed).hours == pytest.approx(0.35) and "lease" in host_hours(failed).how
    old = _target(provision={"wall_s": 1800.0}, load={"wall_s": 1800.0}, teardown={"wall_s": 360.0})
    assert host_hours(old).hours == pytest.approx(1.1) and host_hours(old).lower_bound
    stuck = TargetResult.from_json({"status": "failed", "failed_phase": "teardown"})
    assert host_hours(stuck).hours is None and "may still exist" in host_hours(stuck).how


def _hot(count: int, wall_s: float) -> QueryStats:
    return QueryStats(count=count, errors=0, mismatches=0, wall_s=wall_s, qps=count / wall_s)


def test_cost_rows_per_s_per_dollar_hour_and_queries_per_dollar() -> None:
    """Two targets on study A's host for 2 h and 4 h: cost = hours × price; queries per dollar from
    the mix both answered cleanly (b's wrong answers in ``lastpoint`` leave it out of the mix)."""
    price = host_price(STUDY_A)
    loaded = {"row_count_ok": True, "median_rows_per_s": 50_000.0, "trials": [{"rows_per_s": 50_000.0}]}
    a_hot = {"high-cpu-1": _hot(300, 3.0), "lastpoint": _hot(100, 1.0)}
    b_hot = {"high-cpu-1": _hot(300, 6.0), "lastpoint": QueryStats(count=100, mismatches=3, wall_s=1.0)}
    bodies = {
        "questdb": _target(
            provision=Provision(started_at="2026-12-01T00:00:00Z").to_json(),
            load=loaded,
            queries=QueriesPhase(hot=a_hot).to_json(),
            teardown=Teardown(finished_at="2026-12-01T02:00:00Z").to_json(),
        ),
        "postgres": _target(
            provision=Provision(started_at="2026-12-01T00:00:00Z").to_json(),
            queries=QueriesPhase(hot=b_hot).to_json(),
            teardown=Teardown(finished_at="2026-12-01T04:00:00Z").to_json(),
        ),
    }
    run = RunResult(spec={"scale": 100}, targets=bodies, price=price)
    views = [target_view(name, body) for name, body in bodies.items()]
    section = cost_section(run, views, load_section(run, views, ""))
    assert section.priced and section.mix == ["high-cpu-1"]
    a, b = section.rows
    assert (a.hours, b.hours) == (pytest.approx(2.0), pytest.approx(4.0))
    assert a.usd == pytest.approx(2 * STUDY_A_PER_H) and b.usd == pytest.approx(4 * STUDY_A_PER_H)
    assert a.rows_per_s_per_usd_h == pytest.approx(50_000 / STUDY_A_PER_H)
    assert b.rows_per_s_per_usd_h is None  # no load recorded
    assert a.queries_per_usd == pytest.approx(100 * 3_600 / STUDY_A_PER_H)  # 100 q/s of high-cpu-1
    assert b.queries_per_usd == pytest.approx(50 * 3_600 / STUDY_A_PER_H)


def _as_aws_run(folder: Path, hours: float) -> None:
    """Rewrite a recorded local point folder as runtime aws records it (see the module docstring)."""
    run_file = folder / "run.json"
    run = read_json(run_file)
    run["spec"].update(runtime="aws", aws=STUDY_A.model_dump(mode="json"))
    run_file.write_text(json.dumps(run))
    for target in (folder / "targets").iterdir():
        provision = read_json(target / "provision.json")
        provision.update(runtime="aws", started_at="2026-12-01T08:00:00Z")
        provision["placement"] = {
            "provider": "aws",
            "region": "us-east-1",
            "benchmark_host": {"instance_id": "i-0123456789abcdef0", "instance_type": "m5.2xlarge"},
            "client_host": None,
            "results_bucket": None,
            "image_or_package": provision["placement"].get("image_or_package", ""),
        }
        (target / "provision.json").write_text(json.dumps(provision))
        teardown = read_json(target / "teardown.json")
        teardown["finished_at"] = f"2026-12-01T{8 + int(hours):02d}:{round(hours % 1 * 60):02d}:00Z"
        (target / "teardown.json").write_text(json.dumps(teardown))


def test_an_aws_runs_report_shows_each_targets_cost(tmp_path: Path) -> None:
    copy = tmp_path / OLD.name
    shutil.copytree(OLD, copy)
    point = copy / "scale-20"
    _as_aws_run(point, hours=1.5)
    result = collect(point)
    assert result.price is not None and result.price.usd_per_h == pytest.approx(STUDY_A_PER_H)
    html = render_document(read_inputs(copy))
    cost = html[html.index("Cost and price-performance") : html.index("<h2>Methodology</h2>")]
    assert f"${STUDY_A_PER_H:.3g} per hour" in cost and "m5.2xlarge benchmark host" in cost
    assert cost.count(">1.500<") == 3 and cost.count(f"${1.5 * STUDY_A_PER_H:.3g}") == 3
    assert "from the start of provisioning to the end of teardown" in cost and DATE in cost
    assert "a query mix every target answered cleanly (none here)" in cost  # a load-only run


def test_a_local_runs_report_says_no_price_in_one_line(tmp_path: Path) -> None:
    copy = tmp_path / OLD.name
    shutil.copytree(OLD, copy)
    result = collect(copy / "scale-20")
    assert result.price == recorded_price(result.spec) and result.price.no_price == "no price (local)"
    html = render_document(read_inputs(copy))
    cost = html[html.index("Cost and price-performance") : html.index("<h2>Methodology</h2>")]
    assert "Cost: no price (local)." in cost and "<table" not in cost


def _plan_only(study: str, size: str, *more: str) -> str:
    command = [sys.executable, "-m", "tsbench", "study", str(ROOT / "studies" / study), "--plan-only"]
    shown = subprocess.run(
        [*command, "--size", size, *more],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT / "plugins"), "PATH": os.environ["PATH"]},  # aws: Terraform on it
        timeout=300,
    )
    assert shown.returncode == 0, shown.stderr
    return shown.stdout


def test_plan_only_shows_a_paper_sizes_estimated_cost_and_no_price_locally() -> None:
    cidr = '{"orchestrator_cidr": ["203.0.113.7/32"]}'
    paper = _plan_only("c_sjsu_2023.yaml", "paper", "--aws", cidr)
    per_h = machine_price(
        load_study(ROOT / "studies" / "c_sjsu_2023.yaml")
        .plan("paper", {"aws": json.loads(cidr)})
        .points[0]
        .spec
    ).usd_per_h
    cost = re.search(
        r"estimated cost ≥ \$([\d,.]+): ([\d,.]+) host-hours of loading and querying × "
        r"\$([\d.]+) per host-hour",
        paper,
    )
    assert cost is not None, paper
    usd, hours, shown_per_h = (float(g.replace(",", "")) for g in cost.groups())
    assert shown_per_h == pytest.approx(per_h, abs=0.0005) and usd == pytest.approx(
        hours * per_h,
        abs=0.05 * per_h + 0.01,  # the hours are shown to 0.1
    )
    assert f"m5.2xlarge benchmark host, its volumes and address; AWS on-demand prices of {DATE}" in paper
    assert "(an estimate, not a quote)" in paper
    assert "; no price (local);" in _plan_only("a_fixstars_2023.yaml", "small")
