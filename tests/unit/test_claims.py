"""Published vs measured (``tsbench.claims``) on a fixture: two sweep points (workers 1 and 4) with
QuestDB and InfluxDB measured, TimescaleDB failed at load. Each verdict — holds, reversed, mixed,
does not hold, not comparable — with the figures it rests on and the conditions that differ; and
every preset's claims list every claim of its study."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tsbench.claims import Verdict, check_claim, check_study, figure_beside
from tsbench.published import Claim, Published, PublishedFigure
from tsbench.results.model import RunResult
from tsbench.spec import SpecError
from tsbench.studies import all_studies, load_study

MACHINE = {"cores": 2, "memory_bytes": 24 * 2**30}
# rows/s of the three trials per point × target: QuestDB ahead at 4 workers, behind at 1
RATES = {
    1: {"questdb": (90e3, 100e3, 110e3), "influxdb": (120e3, 121e3, 119e3)},
    4: {"questdb": (300e3, 310e3, 305e3), "influxdb": (150e3, 151e3, 149e3)},
}
QPS = {"questdb": 80.0, "influxdb": 20.0}
DISK = {"questdb": 1_000_000, "influxdb": 1_040_000}


def _target(name: str, workers: int) -> dict[str, Any]:
    trials = [
        {"rows": 864_000, "seconds": 864_000 / r, "rows_per_s": r, "metrics_per_s": r * 10}
        for r in RATES[workers][name]
    ]
    hot = {
        "lastpoint": {"count": 10, "errors": 0, "mismatches": 0, "qps": QPS[name] * workers, "mean_ms": 5.0}
    }
    return {
        "status": "ok",
        "provision": {"version": {"questdb": "9.3.4", "influxdb": "1.6.7"}[name]},
        "load": {
            "trials": trials,
            "row_count_ok": True,
            "median_rows_per_s": sorted(RATES[workers][name])[1],
        },
        "footprint": {"after_load": {"bytes": 1, "disk_bytes": DISK[name]}},
        "queries": {"hot": hot, "cold": hot},
    }


def _point(workers: int) -> RunResult:
    failed = {"status": "failed", "failed_phase": "load", "error": "LoadError: boom"}
    return RunResult.from_json(
        {
            "spec": {"scale": 100, "workers": workers, "use_case": "cpu-only"},
            "machine": MACHINE,
            "point": {
                "name": f"scale-100_workers-{workers}",
                "axes": {"workers": workers},
                "label": f"{workers} workers",
            },
            "targets": {
                "questdb": _target("questdb", workers),
                "influxdb": _target("influxdb", workers),
                "timescaledb": failed,
            },
        }
    )


RUNS = [_point(1), _point(4)]
PUBLISHED = Published(source="QuestDB 2021", machine="AWS m5.8xlarge", versions={"questdb": "6.0.4"})


def claim(**fields: Any) -> Claim:
    return Claim.model_validate({"text": "line 1: claim", "metric": "load_rows_per_s", **fields})


def test_a_ranking_that_holds_shows_its_figures_and_the_published_ratio() -> None:
    checked = check_claim(
        PUBLISHED, claim(ranking=["questdb", "influxdb"], at={"workers": 4}, ratio=6.4), RUNS
    )
    assert checked.verdict is Verdict.HOLDS
    assert checked.measured == [
        "published ratio 6.4×",
        "4 workers: questdb 305,000, influxdb 150,000 (2.03×)",
    ]
    assert checked.differences == ["questdb version: study 6.0.4; here 9.3.4"]
    same_influx = PUBLISHED.model_copy(update={"versions": {"influxdb": "InfluxDB 1.6 (open source)"}})
    assert check_claim(same_influx, claim(ranking=["questdb", "influxdb"]), RUNS).differences == []
    assert check_study(PUBLISHED, RUNS).machine == "study: AWS m5.8xlarge; here: 2 cores, 24 GiB"


def test_reversed_and_mixed_are_told_apart() -> None:
    at_one = check_claim(PUBLISHED, claim(ranking=["questdb", "influxdb"], at={"workers": 1}), RUNS)
    assert at_one.verdict is Verdict.REVERSED
    anywhere = check_claim(PUBLISHED, claim(ranking=["questdb", "influxdb"]), RUNS)
    assert anywhere.verdict is Verdict.MIXED and anywhere.reason == "holds at 1, reversed at 1 of 2 points"


def test_lower_is_better_metrics_rank_the_smaller_first() -> None:
    smaller = claim(metric="footprint_bytes_after_load", ranking=["questdb", "influxdb"], ratio=1.04)
    assert check_claim(PUBLISHED, smaller, RUNS).verdict is Verdict.HOLDS
    similar = claim(metric="footprint_bytes_after_load", similar=["questdb", "influxdb"], within=0.01)
    checked = check_claim(PUBLISHED, similar, RUNS)
    assert checked.verdict is Verdict.DOES_NOT_HOLD and "(4% apart, within 1% claimed)" in checked.measured[0]
    assert check_claim(PUBLISHED, similar.model_copy(update={"within": 0.05}), RUNS).verdict is Verdict.HOLDS


def test_one_database_across_two_conditions() -> None:
    more_workers = claim(target="questdb", better_at={"workers": 4}, worse_at={"workers": 1})
    checked = check_claim(PUBLISHED, more_workers, RUNS)
    assert checked.verdict is Verdict.HOLDS
    assert checked.measured == ["4 workers: 305,000 vs 1 workers: 100,000 (3.05×)"]
    fewer = claim(target="influxdb", better_at={"workers": 1}, worse_at={"workers": 4})
    assert check_claim(PUBLISHED, fewer, RUNS).verdict is Verdict.REVERSED


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"ranking": ["questdb", "timescaledb"]}, "timescaledb has no complete load (load)"),
        ({"ranking": ["questdb", "clickhouse"]}, "clickhouse is not in this run"),
        ({"ranking": ["questdb", "influxdb"], "at": {"workers": 14}}, "no point of this run has workers 14"),
        ({"not_comparable": "about the Go client's no-op mode"}, "about the Go client's no-op mode"),
        (
            {"metric": "query_qps", "query_type": "high-cpu-all", "ranking": ["questdb", "influxdb"]},
            "high-cpu-all was not run",
        ),
    ],
)
def test_not_comparable_says_why(fields: dict[str, Any], reason: str) -> None:
    checked = check_claim(PUBLISHED, claim(**fields), RUNS)
    assert checked.verdict is Verdict.NOT_COMPARABLE and checked.reason == reason


def test_a_study_condition_this_run_lacks_is_named() -> None:
    checked = check_claim(
        PUBLISHED, claim(ranking=["questdb", "influxdb"], at={"workers": 4}, study_at={"scale": 4000}), RUNS
    )
    assert "scale: study 4000; here 100" in checked.differences


def test_a_published_figure_stands_beside_ours_without_a_verdict() -> None:
    figure = PublishedFigure(
        metric="query_qps",
        query_type="lastpoint",
        target="questdb",
        value=1234.0,
        unit="queries/s",
        source="Table 2",
        at={"workers": 4},
    )
    beside = figure_beside(figure, RUNS)
    assert beside.measured == [("4 workers", 320.0)] and not beside.missing
    absent = figure_beside(figure.model_copy(update={"at": {"workers": 16}}), RUNS)
    assert absent.measured == [] and absent.missing == "no point of this run has workers 16"
    unpaired = check_claim(
        PUBLISHED, claim(target="questdb", better_at={"workers": 14}, worse_at={"workers": 4}), RUNS
    )
    assert unpaired.reason == (
        "no pair of points of this run, one with workers 14, the other with workers 4, otherwise alike"
    )
    counts = check_study(PUBLISHED.model_copy(update={"figures": [figure]}), RUNS).figures
    assert len(counts) == 1


def test_a_claim_takes_one_form_and_query_metrics_a_type() -> None:
    with pytest.raises(ValueError, match="exactly one of"):
        claim(ranking=["questdb", "influxdb"], not_comparable="why")
    with pytest.raises(ValueError, match="needs a query_type"):
        claim(metric="query_qps", ranking=["questdb", "influxdb"])
    with pytest.raises(ValueError, match="ratio is first ÷ second"):
        claim(ranking=["questdb", "influxdb", "timescaledb"], ratio=2.0)


def test_a_study_file_naming_an_unknown_target_is_refused(tmp_path: Path) -> None:
    body = yaml.safe_load(
        (Path(__file__).resolve().parents[2] / "studies" / "b_questdb_tsbs.yaml").read_text()
    )
    body["published"] = {
        "source": "s",
        "machine": "m",
        "claims": [{"text": "t", "metric": "load_rows_per_s", "ranking": ["questdb", "cassandra"]}],
    }
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(body))
    with pytest.raises(SpecError, match=r"bad.yaml: published.claims\[0\].*no target 'cassandra'"):
        load_study(path)


@pytest.mark.parametrize("study", all_studies(), ids=lambda s: s.name)
def test_every_preset_quotes_its_study_s_claims_with_their_lines(study) -> None:
    """Completeness against ``../shared/studies/published.json`` was checked when the blocks were
    written (closing note of session 9); here: every claim quoted with its line, every figure sourced."""
    assert study.published is not None and study.published.claims
    assert all(re.match(r"(line|lines|table|Table) [0-9A-Za-z]", c.text) for c in study.published.claims)
    assert all(f.source for f in study.published.figures)
