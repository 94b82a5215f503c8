"""A study's report over a two-axis sweep (cardinality 100 → 100,000 hosts × workers 1, 4):
a table and a line chart per axis and value of the other (log axis for hosts), min / median / max
and CV of every load figure with the CVs above 5 % flagged (cell and caveat), hot-pass spreads of
the queries, and the "Published vs measured" section with the study's claims and figures."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from unit.test_report import synthetic_result

from tsbench.report.model import ReportView, build_report_context
from tsbench.report.render import render_document
from tsbench.studies import Study

SCALES = (100, 1_000, 100_000)
WORKERS = (1, 4)
NOISY = (100_000, 4)  # the point where QuestDB's trials spread: 300k, 380k, 450k rows/s


def _point(scale: int, workers: int) -> dict[str, Any]:
    result = copy.deepcopy(synthetic_result(run_id="20260101T120000Z-sweep1"))
    result["spec"] |= {"scale": scale, "workers": workers}
    name = f"scale-{scale}_workers-{workers}"
    result["point"] = {"name": name, "axes": {"scales": scale, "workers": workers}, "label": name}
    for target, body in result["targets"].items():
        if body.get("load") and body["load"].get("trials"):
            base = 100_000.0 * workers * (2 if target == "questdb" else 1)
            rates = (
                (300e3, 380e3, 450e3)
                if (scale, workers) == NOISY and target == "questdb"
                else (base * 0.99, base, base * 1.01)
            )
            for trial, rate in zip(body["load"]["trials"], rates, strict=True):
                trial["rows_per_s"] = rate
            body["load"]["median_rows_per_s"] = sorted(rates)[1]
        if body.get("queries"):
            body["queries"]["hot_qps_by_pass"] = {
                "lastpoint": [100.0, 130.0, 70.0],
                "high-cpu-all": [10.0, 10.1, 9.9],
            }
    return result


STUDY = Study.model_validate(
    {
        "name": "sweep_fixture",
        "title": "Fixture study",
        "sizes": {"small": {}},
        "published": {
            "source": "a fixture",
            "machine": "a bigger machine",
            "figures": [
                {
                    "metric": "load_rows_per_s",
                    "target": "questdb",
                    "value": 959000,
                    "unit": "rows/s",
                    "at": {"workers": 4},
                    "source": "line 46",
                }
            ],
            "claims": [
                {
                    "text": "line 48: QuestDB beats TimescaleDB at 4 workers",
                    "metric": "load_rows_per_s",
                    "at": {"workers": 4},
                    "ranking": ["questdb", "timescaledb"],
                    "ratio": 6.5,
                },
                {
                    "text": "line 50: more workers are faster",
                    "metric": "load_rows_per_s",
                    "target": "timescaledb",
                    "better_at": {"workers": 1},
                    "worse_at": {"workers": 4},
                },
                {
                    "text": "line 52: ClickHouse",
                    "metric": "load_rows_per_s",
                    "ranking": ["clickhouse", "questdb"],
                },
            ],
        },
    }
)


@pytest.fixture(scope="module")
def points() -> list[tuple[dict[str, Any], None, None]]:
    return [(_point(scale, workers), None, None) for scale in SCALES for workers in WORKERS]


@pytest.fixture(scope="module")
def context(points) -> ReportView:
    return build_report_context(points, study=STUDY)


@pytest.fixture(scope="module")
def html(points) -> str:
    return render_document(points, study=STUDY)


def test_a_table_and_chart_per_axis_and_value_of_the_other(context: ReportView) -> None:
    across = context.across
    assert across is not None
    shown = [(t.axis, t.fixed) for t in across.sweep]
    assert shown == [
        ("scales", "workers 1"),
        ("scales", "workers 4"),
        ("workers", "scale 100"),
        ("workers", "scale 1,000"),
        ("workers", "scale 100,000"),
    ]
    by_hosts = across.sweep[0]
    assert [label for label, _ in by_hosts.rows] == ["100", "1,000", "100,000"]
    assert "hosts (log scale)" in by_hosts.chart and "workers (log scale)" not in across.sweep[2].chart
    assert not across.chart, "the per-axis charts replace the chart over point labels"


def test_every_load_figure_carries_its_spread_and_high_cvs_are_flagged(
    context: ReportView, html: str
) -> None:
    across = context.across
    assert across is not None
    by_workers_at_noisy = next(t for t in across.sweep if t.fixed == "scale 100,000")
    questdb = [t.name for t in by_workers_at_noisy.targets].index("questdb")
    quiet, noisy = (cells[questdb] for _, cells in by_workers_at_noisy.rows)
    assert quiet.spread is not None and not quiet.spread.flagged and quiet.spread.cv == pytest.approx(0.01)
    assert noisy.spread is not None and noisy.spread.flagged
    assert (noisy.spread.min, noisy.spread.median, noisy.spread.max) == (300e3, 380e3, 450e3)
    assert (
        "load rate varied by CV 19.9% over 3 trials (min / median / max 300,000 / 380,000 / 450,000" in html
    )
    assert html.count("cv-high") >= 1


def test_hot_passes_give_the_queries_spread(context: ReportView, html: str) -> None:
    scale = context.scales[0]
    row = next(r for r in scale.queries.rows if r.type == "lastpoint")
    cell = next(c for t, c in row.cells if t.name == "questdb")
    assert cell.spread is not None and cell.spread.flagged and cell.spread.n == 3
    assert "queries/s varied above 5% between hot passes for lastpoint (CV 30%)" in html


def test_the_study_s_claims_and_figures_are_checked_in_the_report(context: ReportView, html: str) -> None:
    published = context.published
    assert published is not None
    verdicts = {row.text: row.verdict for row in published.claims}
    assert verdicts == {
        # 2× ahead beyond noise at two points (6.5× published: direction only), but at the noisy
        # point QuestDB's trials (300–450 k) overlap TimescaleDB's (396–404 k): the weakest, a tie
        "line 48: QuestDB beats TimescaleDB at 4 workers": "tie",
        "line 50: more workers are faster": "reversed",
        "line 52: ClickHouse": "not comparable",
    }
    (check,) = published.claims[0].checks
    assert check.verdict == "tie" and len(check.measured) == 3
    assert (
        sum("published 6.5× (stated in the quote), measured 2.00×: outside ×2" in m for m in check.measured)
        == 2
    )
    assert sum("3 and 3 repeats: the repeats overlap" in m for m in check.measured) == 1
    assert "3 published claims of Fixture study: tie 1 · reversed 1 · not comparable 1." in html
    figure = published.figures[0]
    assert figure.published == "959,000 rows/s" and len(figure.measured) == 3
    assert "Published vs measured: Fixture study" in html and "never compared as equal" in html
    assert "clickhouse is not in this run" in html
    assert build_report_context(context_free_point()).published is None


def test_a_lead_within_noise_is_a_tie_in_the_summary(context: ReportView, html: str) -> None:
    """At the noisy point QuestDB's median leads TimescaleDB's (380 k vs 400 k: no, behind) — the
    trials overlap, so the summary calls neither the faster."""
    noisy = next(
        s for s in context.scales if s.run.spec["scale"] == NOISY[0] and s.run.spec["workers"] == NOISY[1]
    )
    load = next(w for w in noisy.summary.winners if w.metric == "Load")
    assert load.runner_up is not None and load.runner_up.tied
    assert "the repeats overlap" in load.runner_up.rule
    assert any("load at the same rate within noise" in line for line in noisy.summary.headlines)
    calm = next(s for s in context.scales if s.run.spec["scale"] == 100 and s.run.spec["workers"] == 4)
    assert not next(w for w in calm.summary.winners if w.metric == "Load").runner_up.tied
    assert "tie within noise with" in html
    # the across-sweep table highlights the best and every figure within noise of it
    across = context.across
    assert across is not None
    row = next(r for r in across.load if r.prefix == noisy.prefix)
    assert {t.name for t, _, best in row.cells if best} == {
        "questdb",
        "timescaledb",
        "postgres",
    }  # 400 k ± 1 %
    calm_row = next(r for r in across.load if r.prefix == calm.prefix)
    assert {t.name for t, _, best in calm_row.cells if best} == {"questdb"}


def context_free_point() -> list[tuple[dict[str, Any], None, None]]:
    """One point without a study: no such section."""
    return [(_point(100, 1), None, None)]
