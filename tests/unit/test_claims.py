"""Published vs measured (``tsbench.verdicts``) on a fixture: sweep points at workers 1, 2 and 4
with QuestDB and InfluxDB measured (3 load trials, 3 hot passes), TimescaleDB failed at load, the
full edition of TimescaleDB compressed at one point. Every verdict — reproduced, direction only,
tie, reversed, not comparable — at check and claim level, the noise rule, the conditions, and one
verdict per claim."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
import yaml

from tsbench.results.model import RunResult
from tsbench.spec import SpecError
from tsbench.studies import load_study
from tsbench.verdicts.checks import Verdict
from tsbench.verdicts.claims import check_study, figure_beside, judge_claim
from tsbench.verdicts.noise import Lead, compare
from tsbench.verdicts.published import Claim, Condition, Published, PublishedFigure

MACHINE = {"cores": 2, "memory_bytes": 24 * 2**30}
# rows/s of the three trials per point × target: QuestDB behind at 1 worker, level at 2, ahead at 4
RATES = {
    1: {"questdb": (90e3, 100e3, 110e3), "influxdb": (120e3, 121e3, 119e3)},
    2: {"questdb": (115e3, 125e3, 135e3), "influxdb": (120e3, 121e3, 119e3)},
    4: {"questdb": (300e3, 310e3, 305e3), "influxdb": (150e3, 151e3, 149e3)},
}
QPS = {"questdb": (80.0, 82.0, 78.0), "influxdb": (20.0, 21.0, 19.0)}
DISK = {"questdb": 1_000_000, "influxdb": 1_040_000, "timescaledb": 25_000_000, "timescaledb_tsl": 900_000}


def _loaded(name: str, workers: int) -> dict[str, Any]:
    rates = RATES[workers].get(name, (400e3, 401e3, 399e3))
    trials = [
        {"rows": 864_000, "seconds": 864_000 / r, "rows_per_s": r, "metrics_per_s": r * 10} for r in rates
    ]
    qps = [q * workers for q in QPS.get(name, (40.0, 41.0, 39.0))]
    hot = {"lastpoint": {"count": 30, "errors": 0, "mismatches": 0, "qps": sorted(qps)[1], "mean_ms": 5.0}}
    body: dict[str, Any] = {
        "status": "ok",
        "provision": {
            "version": {"questdb": "9.3.4"}.get(name, "1.6.7"),
            "capabilities": {"compression": ""},
        },
        "load": {"trials": trials, "row_count_ok": True, "median_rows_per_s": sorted(rates)[1]},
        "footprint": {
            "after_load": {"bytes": 1, "disk_bytes": DISK[name]},
            "after_settle": {"bytes": 1, "disk_bytes": DISK[name]},
        },
        "queries": {"hot": hot, "cold": hot, "hot_qps_by_pass": {"lastpoint": qps}},
    }
    if name == "timescaledb_tsl":
        body["footprint"]["compression"] = {"units": 12, "bytes_before": 24_000_000, "bytes_after": 800_000}
        body["provision"]["capabilities"]["compression"] = "native columnar compression"
    return body


def _point(workers: int) -> RunResult:
    failed = {"status": "failed", "failed_phase": "load", "error": "LoadError: boom"}
    targets = {name: _loaded(name, workers) for name in ("questdb", "influxdb", "timescaledb_tsl")}
    apache = _loaded("timescaledb", workers) if workers == 4 else failed
    return RunResult.from_json(
        {
            "spec": {"scale": 100, "workers": workers, "use_case": "cpu-only"},
            "machine": MACHINE,
            "dataset": {"rows": {"cpu": 864_000}},
            "point": {
                "name": f"scale-100_workers-{workers}",
                "axes": {"workers": workers},
                "label": f"{workers} workers",
            },
            "targets": {**targets, "timescaledb": apache},
        }
    )


RUNS = [_point(1), _point(2), _point(4)]
PUBLISHED = Published(source="QuestDB 2021", machine="AWS m5.8xlarge", versions={"questdb": "6.0.4"})


def claim(*checks: dict[str, Any], **fields: Any) -> Claim:
    return Claim.model_validate(
        {"text": "line 1: claim", "checks": [{"metric": "load_rows_per_s", **c} for c in checks], **fields}
    )


def verdict(*checks: dict[str, Any], **fields: Any) -> Verdict:
    return judge_claim(PUBLISHED, claim(*checks, **fields), RUNS).verdict


def test_the_noise_rule_separates_or_ties() -> None:
    assert compare((3, 4, 5), (1, 2, 2.9), True).lead is Lead.FIRST
    overlapping = compare((3, 4, 5), (1, 2, 3.5), True)
    assert overlapping.lead is Lead.TIE and "overlap" in overlapping.rule
    assert compare((1, 2, 2.9), (3, 4, 5), True).lead is Lead.SECOND
    assert compare((1, 2, 2.9), (3, 4, 5), False).lead is Lead.FIRST  # lower is better
    # fewer than 3 repeats: the medians within the tolerance are a tie
    assert compare((108,), (100,), True, 0.10).lead is Lead.TIE
    assert compare((111,), (100,), True, 0.10).lead is Lead.FIRST
    assert compare((1.04e6,), (1e6,), False, 0.05).lead is Lead.TIE
    gap = compare((300, 310, 305), (150, 151, 149), True)
    assert gap.shown() == "2.03× (1.99–2.08×)"


def test_under_pure_noise_the_rule_calls_a_lead_one_time_in_ten() -> None:
    """Six repeats of one figure split 3 + 3 every possible way (all 20, equally likely when only
    noise separates them): a lead beyond noise in 2 of them (1 in 20 each way), as documented."""
    values = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
    splits = list(itertools.combinations(values, 3))
    leads = [compare(first, tuple(v for v in values if v not in first), True).lead for first in splits]
    assert len(splits) == 20 and leads.count(Lead.FIRST) == 1 and leads.count(Lead.SECOND) == 1


def test_a_lead_of_the_wrong_size_is_direction_only() -> None:
    """6.4× published, 2.03× measured: beyond noise, outside ×2 of the published ratio."""
    checked = judge_claim(
        PUBLISHED, claim({"ranking": ["questdb", "influxdb"], "at": {"workers": 4}, "ratio": 6.4}), RUNS
    )
    assert checked.verdict is Verdict.DIRECTION_ONLY
    (check,) = checked.checks
    assert check.measured == [
        "4 workers: questdb 305,000 (300,000–310,000), influxdb 150,000 (149,000–151,000) — "
        "questdb vs influxdb "
        "2.03× (1.99–2.08×): published 6.4× (stated in the quote), measured 2.03×: outside ×2; "
        "3 and 3 repeats: every one of the first beats every one of the second"
    ]
    assert check.differences == ["questdb version: study 6.0.4; here 9.3.4"]


def test_a_lead_within_the_band_is_reproduced_and_no_published_ratio_is_direction_only() -> None:
    at_four = {"ranking": ["questdb", "influxdb"], "at": {"workers": 4}}
    assert verdict({**at_four, "ratio": 2.5}) is Verdict.REPRODUCED
    assert (
        verdict({**at_four, "ratio": 6.4}, band=4, band_reason="the study rounds to 1 digit")
        is Verdict.REPRODUCED
    )
    unnamed = judge_claim(PUBLISHED, claim(at_four), RUNS)
    assert (
        unnamed.verdict is Verdict.DIRECTION_ONLY
        and "no published magnitude" in unnamed.checks[0].measured[0]
    )
    with pytest.raises(ValueError, match="give band_reason"):
        claim(at_four, band=3)


def test_the_study_s_own_figures_give_the_published_ratio_and_a_floor_is_a_floor() -> None:
    """No ratio in the quote: the study's printed figures at the check's conditions give it."""
    figures = [
        PublishedFigure(
            metric="load_rows_per_s", target=name, value=value, unit="rows/s", source=f"line {n} / T1", at=at
        )
        for name, value, n, at in (
            ("questdb", 500_000.0, 7, {"scale": 4000}),
            ("influxdb", 200_000.0, 8, {"scale": 4000}),
            ("influxdb", 50_000.0, 9, {"scale": 100_000}),
        )
    ]
    study = PUBLISHED.model_copy(update={"figures": figures})
    at_four = {"ranking": ["questdb", "influxdb"], "at": {"workers": 4}, "study_at": {"scale": 4000}}
    checked = judge_claim(study, claim(at_four), RUNS)
    assert checked.verdict is Verdict.REPRODUCED  # 2.5× published, 2.03× measured
    assert (
        "published 2.5× (the study's figures: 500,000 vs 200,000 rows/s, line 7 and line 8)"
        in checked.checks[0].measured[0]
    )
    ambiguous = judge_claim(study, claim({**at_four, "study_at": {}}), RUNS)  # which InfluxDB figure?
    assert ambiguous.verdict is Verdict.DIRECTION_ONLY
    assert verdict({**at_four, "ratio": 1.2, "at_least": True}) is Verdict.REPRODUCED
    assert verdict({**at_four, "ratio": 8.0, "at_least": True}) is Verdict.DIRECTION_ONLY


def test_overlapping_trials_are_a_tie_and_the_other_side_beyond_noise_reversed() -> None:
    assert verdict({"ranking": ["questdb", "influxdb"], "at": {"workers": 2}}) is Verdict.TIE
    assert verdict({"ranking": ["questdb", "influxdb"], "at": {"workers": 1}}) is Verdict.REVERSED
    # over every point the weakest decides: reversed at 1 worker
    assert verdict({"ranking": ["questdb", "influxdb"], "ratio": 2.0}) is Verdict.REVERSED
    assert (
        verdict(
            {"ranking": ["questdb", "influxdb"], "at": {"workers": 4}},
            {"ranking": ["questdb", "influxdb"], "at": {"workers": 2}},
        )
        is Verdict.TIE
    )


def test_one_database_across_two_conditions_and_footprints_of_one_figure() -> None:
    assert (
        verdict({"target": "questdb", "better_at": {"workers": 4}, "worse_at": {"workers": 1}})
        is Verdict.DIRECTION_ONLY
    )
    assert (
        verdict({"target": "influxdb", "better_at": {"workers": 1}, "worse_at": {"workers": 4}})
        is Verdict.REVERSED
    )
    smaller = {
        "metric": "footprint_bytes_after_load",
        "ranking": ["questdb", "influxdb"],
        "at": {"workers": 4},
    }
    assert verdict(smaller) is Verdict.TIE  # one figure each, 4 % apart: within the 5 % tolerance
    similar = {
        "metric": "footprint_bytes_after_load",
        "similar": ["questdb", "influxdb"],
        "at": {"workers": 4},
    }
    assert verdict({**similar, "within": 0.05}) is Verdict.REPRODUCED
    assert verdict({**similar, "within": 0.01}) is Verdict.TIE


def test_the_compression_claim_on_the_apache_edition_is_not_comparable() -> None:
    """C line 246: TimescaleDB smaller "as it uses a compression technique" — never judged on an
    edition that cannot compress, judged on the full edition that did."""
    smaller = {"metric": "footprint_bytes_after_settle", "at": {"workers": 4}}
    apache = judge_claim(
        PUBLISHED,
        claim(
            {**smaller, "ranking": ["timescaledb", "influxdb"], "requires": [{"compressed": "timescaledb"}]}
        ),
        RUNS,
    )
    assert apache.verdict is Verdict.NOT_COMPARABLE
    assert (
        "needs timescaledb's data compressed; timescaledb stored uncompressed here (no native compression)"
        in apache.reason
    )
    # the figures are shown, not judged: 25 MB against 1.04 MB
    assert "measured here, not judged: 4 workers: timescaledb 25,000,000, influxdb 1,040,000" in apache.reason
    both = judge_claim(
        PUBLISHED,
        claim(
            {**smaller, "ranking": ["timescaledb", "influxdb"], "requires": [{"compressed": "timescaledb"}]},
            {
                **smaller,
                "ranking": ["timescaledb_tsl", "influxdb"],
                "requires": [{"compressed": "timescaledb_tsl"}],
            },
        ),
        RUNS,
    )
    assert both.verdict is Verdict.DIRECTION_ONLY and both.partly and both.made == 1


@pytest.mark.parametrize(
    ("condition", "reason"),
    [
        ({"min_cores": 8, "why": "the study's 32 vCPUs"}, "needs ≥ 8 cores; here 2 (the study's 32 vCPUs)"),
        ({"min_scale": 4000}, "needs ≥ 4,000 hosts; here 100"),
        ({"min_rows": 100_000_000}, "needs ≥ 100,000,000 rows; here 864,000"),
        ({"rollup": "influxdb"}, "needs a rollup built on influxdb; none was built here"),
        (
            {"larger_than_memory": ["questdb"]},
            "needs data larger than memory; here questdb 0.00 GiB against 24 GiB of memory",
        ),
    ],
)
def test_an_unmet_condition_is_named_and_never_reproduced(condition: dict[str, Any], reason: str) -> None:
    checked = judge_claim(
        PUBLISHED,
        claim({"ranking": ["questdb", "influxdb"], "at": {"workers": 4}, "ratio": 2.0}, requires=[condition]),
        RUNS,
    )
    assert checked.verdict is Verdict.NOT_COMPARABLE and reason in checked.reason
    assert (
        verdict({"ranking": ["questdb", "influxdb"], "at": {"workers": 4}, "ratio": 2.0})
        is Verdict.REPRODUCED
    )
    with pytest.raises(ValueError, match="exactly one of"):
        Condition.model_validate({"min_cores": 2, "min_scale": 3})


def test_one_verdict_per_claim_and_the_pills_count_claims() -> None:
    study = PUBLISHED.model_copy(
        update={
            "claims": [
                claim(
                    {"ranking": ["questdb", "influxdb"], "at": {"workers": 4}, "ratio": 2.0},
                    {"ranking": ["questdb", "timescaledb"], "at": {"workers": 4}},
                ),
                claim({"ranking": ["questdb", "clickhouse"]}, {"not_comparable": "a client's no-op mode"}),
                claim(
                    {"ranking": ["questdb", "influxdb"], "at": {"workers": 4}, "ratio": 2.0},
                    {"ranking": ["questdb", "influxdb"], "at": {"workers": 1}},
                ),
            ]
        }
    )
    checked = check_study(study, RUNS)
    first, second, third = checked.verdicts
    assert [c.verdict for c in first.checks] == [Verdict.REPRODUCED, Verdict.REVERSED]
    assert first.verdict is Verdict.REVERSED  # loses to one of the two beyond noise
    assert second.verdict is Verdict.NOT_COMPARABLE
    assert second.reason == "none of its 2 checks could be made (each says why)"
    assert [c.reason for c in second.checks] == ["clickhouse is not in this run", "a client's no-op mode"]
    assert third.verdict is Verdict.REVERSED
    counts = checked.counts()
    assert counts[Verdict.REVERSED] == 2 and counts[Verdict.NOT_COMPARABLE] == 1 and sum(counts.values()) == 3


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        (
            {"ranking": ["questdb", "timescaledb"], "at": {"workers": 1}},
            "timescaledb has no complete load (load)",
        ),
        ({"ranking": ["questdb", "influxdb"], "at": {"workers": 14}}, "no point of this run has workers 14"),
        (
            {"metric": "query_qps", "query_type": "high-cpu-all", "ranking": ["questdb", "influxdb"]},
            "high-cpu-all was not run",
        ),
        (
            {"metric": "query_qps", "query_type": "lastpoint", "rollup_beats_raw": "questdb"},
            "questdb built no rollup in this run",
        ),
        (
            {"target": "questdb", "better_at": {"workers": 14}, "worse_at": {"workers": 4}},
            "no pair of points of this run, one with workers 14, the other with workers 4, otherwise alike",
        ),
    ],
)
def test_not_comparable_says_why(fields: dict[str, Any], reason: str) -> None:
    checked = judge_claim(PUBLISHED, claim(fields), RUNS)
    assert checked.verdict is Verdict.NOT_COMPARABLE and checked.reason == reason


def test_a_study_condition_this_run_lacks_is_named() -> None:
    checked = judge_claim(
        PUBLISHED, claim({"ranking": ["questdb", "influxdb"], "study_at": {"scale": 4000}}), RUNS
    )
    assert "scale: study 4000; here 100" in checked.differences
    assert check_study(PUBLISHED, RUNS).machine == "study: AWS m5.8xlarge; here: 2 cores, 24 GiB"


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


def test_a_check_takes_one_form_and_query_metrics_a_type() -> None:
    with pytest.raises(ValueError, match="exactly one of"):
        claim({"ranking": ["questdb", "influxdb"], "not_comparable": "why"})
    with pytest.raises(ValueError, match="needs a query_type"):
        claim({"metric": "query_qps", "ranking": ["questdb", "influxdb"]})
    with pytest.raises(ValueError, match="ratio is first ÷ second"):
        claim({"ranking": ["questdb", "influxdb", "timescaledb"], "ratio": 2.0})


def test_study_files_of_the_flat_form_read_as_claims_of_checks() -> None:
    """Runs planned before claims had checks (their ``plan.json``) still render their claims."""
    flat = Published.model_validate(
        {
            "source": "s",
            "machine": "m",
            "claims": [
                {"text": "line 1: a", "metric": "load_rows_per_s", "ranking": ["questdb", "influxdb"]},
                {"text": "line 1: a", "metric": "load_rows_per_s", "ranking": ["questdb", "timescaledb"]},
                {"text": "line 2: b", "metric": "load_rows_per_s", "not_comparable": "why"},
            ],
        }
    )
    assert [(c.text, len(c.checks)) for c in flat.claims] == [("line 1: a", 2), ("line 2: b", 1)]


def test_a_study_file_naming_an_unknown_target_is_refused(tmp_path: Path) -> None:
    body = yaml.safe_load(
        (Path(__file__).resolve().parents[2] / "studies" / "b_questdb_tsbs.yaml").read_text()
    )
    body["published"] = {
        "source": "s",
        "machine": "m",
        "claims": [
            {"text": "t", "checks": [{"metric": "load_rows_per_s", "ranking": ["questdb", "cassandra"]}]}
        ],
    }
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(body))
    with pytest.raises(SpecError, match=r"bad.yaml: published.claims\[0\].*no target 'cassandra'"):
        load_study(path)


def test_the_cli_table_lists_each_claim_once_with_its_checks_made() -> None:
    from tsbench.verdicts.table import claims_table

    study = PUBLISHED.model_copy(
        update={
            "claims": [
                claim({"ranking": ["questdb", "influxdb"], "at": {"workers": 4}}, {"not_comparable": "why"}),
                claim({"not_comparable": "a vendor's claim"}),
            ]
        }
    )
    table = claims_table(study, RUNS)
    rows = [line for line in table.splitlines() if line.startswith("| line 1")]
    assert len(rows) == 2 and "| direction only |" in rows[0] and "| 1/2 " in rows[0]
    assert "| not comparable |" in rows[1] and "| 0/1 " in rows[1]
    assert table.endswith("2 claims: direction only 1 · not comparable 1 (1 judged on part of their checks)")
