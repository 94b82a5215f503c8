"""The results explorer (tsbench.explorer): its data from a published history, and the page as a
person uses it, in headless Chromium (Debian's, driven by Playwright) opened from disk (file://).

The history: 14 nightly runs of the report fixture's comparison (questdb, timescaledb, postgres;
influxdb fails its load), QuestDB's load rate stepping down by 30 % at night 7 with its version
(9.3.3 → 9.3.4), night 4's validation failed (its postgres figure is off the chart), and two runs of
a study. Screenshots of each state go to the test's folder, and to
``reports/out/screenshots/explorer/`` when ``TSBENCH_SCREENSHOTS`` is set.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np
import pytest
from playwright.sync_api import Page, expect, sync_playwright
from unit.test_report import synthetic_result

from tsbench.explorer.data import ExplorerData
from tsbench.explorer.page import DATA, VARIABLE
from tsbench.results.store import RunStore
from tsbench.run import pipeline

ROOT = Path(__file__).resolve().parents[2]
NIGHTS, STEP, FAILED = 14, 7, 4
STUDY = "b_questdb_tsbs"
TIMEOUT_MS = 30_000


@dataclass(frozen=True)
class History:
    """The published history: the publication root and each database's load rate per night."""

    out: Path
    rates: dict[str, list[float]]


def _night(i: int) -> str:
    return f"night-{i:02d}"


def _rates(seed: int) -> dict[str, list[float]]:
    noise = np.random.default_rng(seed).standard_normal((3, NIGHTS)) * 0.03
    questdb = [(400_000 if i < STEP else 280_000) * (1 + noise[0][i]) for i in range(NIGHTS)]
    return {
        "questdb": [round(v) for v in questdb],
        "timescaledb": [round(200_000 * (1 + e)) for e in noise[1]],
        "postgres": [round(120_000 * (1 + e)) for e in noise[2]],
    }


def _write_run(out: Path, run_id: str, created_at: str, rates: dict[str, float], **more: object) -> Path:
    """A collected, validated and reported comparison of the report fixture, recorded in the store."""
    passed = bool(more.get("passed", True))
    result = synthetic_result(run_id, created_at)
    for name, rate in rates.items():
        result["targets"][name]["load"]["median_rows_per_s"] = rate
    result["targets"]["questdb"]["provision"]["version"] = str(more.get("version", "9.3.4"))
    comparison = {
        "format": "tsbench-comparison/1",
        "run_id": run_id,
        "created_at": created_at,
        "use_case": "cpu-only",
        "targets": result["spec"]["targets"],
        "scales": [100],
        "study": more.get("study"),
        "failed_targets": ["influxdb"],
        "results": {"100": result},
    }
    folder = out / "runs" / run_id
    (folder / "report").mkdir(parents=True)
    (folder / "comparison.json").write_text(json.dumps(comparison))
    critical = [] if passed else ["load: row counts"]
    validation = {"success": passed, "critical_failed": critical, "warnings": []}
    (folder / "validation.json").write_text(json.dumps(validation))
    report = f"<!doctype html><title>{run_id}</title><h1>{run_id}</h1>\n"
    (folder / "report" / "report.html").write_text(report)
    RunStore(out / "runs").record(folder)
    return folder


@pytest.fixture
def history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> History:
    """The history above, published locally (index.html, explorer.html) after every run."""
    monkeypatch.setenv("TSBENCH_RESULTS", str(tmp_path / "out" / "runs"))
    monkeypatch.delenv("TSBENCH_S3_BUCKET", raising=False)
    out, rates = tmp_path / "out", _rates(11)
    for i in range(NIGHTS):
        night = {name: values[i] for name, values in rates.items()}
        if i == FAILED:
            night["postgres"] = 900_000
        version = "9.3.3" if i < STEP else "9.3.4"
        created = f"2026-10-{i + 1:02d}T02:30:00Z"
        folder = _write_run(out, _night(i), created, night, version=version, passed=i != FAILED)
        pipeline.publish_run(folder)
    for i in range(2):
        created = f"2026-10-{20 + i}T12:00:00Z"
        night = {name: values[i] for name, values in rates.items()}
        pipeline.publish_run(_write_run(out, f"study-{i}", created, night, study=STUDY))
    return History(out, rates)


def _data(out: Path) -> ExplorerData:
    text = (out / DATA).read_text()
    prefix = f"window.{VARIABLE} = "
    assert text.startswith(prefix) and text.endswith(";\n")
    return ExplorerData.from_json(json.loads(text[len(prefix) : -2]))


def test_the_data_has_every_run_the_step_as_one_change_and_the_failed_run_marked(history: History) -> None:
    data = _data(history.out)
    assert [r.run_id for r in data.runs] == [_night(i) for i in range(NIGHTS)] + ["study-0", "study-1"]
    assert [r.verdict for r in data.runs].count("failed") == 1 and data.runs[FAILED].verdict == "failed"
    assert data.runs[0].report == "runs/night-00/report/report.html"
    assert all((history.out / r.report).is_file() for r in data.runs if r.report)

    nightly = [s for s in data.series if s.origin == "" and s.scale == 100]
    load = {s.target: s for s in nightly if s.metric == "load rows/s"}
    assert set(load) == {"questdb", "timescaledb", "postgres"}  # influxdb failed its load
    assert load["postgres"].runs == list(range(NIGHTS)) and load["postgres"].values[FAILED] == 900_000
    changes = [(s.target, s.metric, c) for s in data.series for c in s.changes]
    assert len(changes) == 1, changes
    target, metric, change = changes[0]
    assert (target, metric, change.verdict) == ("questdb", "load rows/s", "regression")
    sides = (data.runs[change.before].run_id, data.runs[change.after].run_id)
    assert sides == (_night(STEP - 1), _night(STEP))
    assert change.low is not None and change.high is not None
    assert change.low < -0.30 < change.high < 0  # the interval holds the true step: −30 %
    assert change.differences == ["questdb version: 9.3.3 → 9.3.4"]
    assert {s.origin for s in data.series} == {"", STUDY}

    index = (history.out / "index.html").read_text()
    assert '<a href="explorer.html">results explorer</a>' in index
    assert (history.out / "explorer.html").read_bytes().count(b"<script") == 2


# -- in the browser ------------------------------------------------------------------------------------
def _chromium() -> str:
    path = shutil.which("chromium")
    assert path, "Debian's chromium is missing: scripts/install_report_tools.sh installs it"
    return path


class Shots:
    """Full-page screenshots into ``folder`` (and the repository's reports/out when asked)."""

    def __init__(self, folder: Path):
        self.folder = folder
        asked = bool(os.environ.get("TSBENCH_SCREENSHOTS"))
        self.keep = ROOT / "reports" / "out" / "screenshots" / "explorer" if asked else None

    def take(self, page: Page, name: str) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        assert path.stat().st_size > 10_000
        if self.keep is not None:
            self.keep.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, self.keep / path.name)
        return path


def _bars(page: Page) -> dict[str, str]:
    """Database → its bar's label, in the order shown."""
    rows = page.locator("#bars .bar-row")
    return {
        rows.nth(i).get_attribute("data-target") or "": rows.nth(i).locator(".bar-label").inner_text()
        for i in range(rows.count())
    }


def _ratios(medians: dict[str, float], higher: bool) -> dict[str, str]:
    best = max(medians.values()) if higher else min(medians.values())
    ratio = {n: (best / v if higher else v / best) for n, v in medians.items()}
    return {n: f"×{r:.2f}" for n, r in sorted(ratio.items(), key=lambda item: item[1])}


def _valid(values: list[float], nights: range) -> list[float]:
    return [values[i] for i in nights if i != FAILED]


def _check_load_bars(page: Page, rates: dict[str, list[float]], names: list[str], nights: range) -> None:
    """The bars of the load rate: each database's median over the validated ``nights``."""
    medians = {n: statistics.median(_valid(rates[n], nights)) for n in names}
    _check_bars(page, medians, {n: f"median of {len(_valid(rates[n], nights))} runs" for n in names})


def _check_bars(page: Page, figures: dict[str, float], what: dict[str, str]) -> None:
    """Bars in order of their ratio to the best (higher is better), each label naming its figure."""
    expected = _ratios(figures, higher=True)
    shown = _bars(page)
    assert list(shown) == list(expected), shown
    for name, ratio in expected.items():
        assert shown[name].startswith(ratio), (name, shown[name], ratio)
        assert shown[name].endswith(f"{figures[name]:,.0f} rows/s · {what[name]}"), shown[name]
    assert shown[next(iter(expected))].startswith("×1.00 best")


def test_the_explorer_in_headless_chromium(history: History, tmp_path: Path) -> None:
    shots = Shots(tmp_path / "screenshots")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(TIMEOUT_MS)
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto((history.out / "explorer.html").as_uri())
            _default_view(page, history, shots)
            _the_newest_run(page, history, shots)
            _another_metric(page, shots)
            _a_database_unticked(page, history, shots)
            _a_narrower_range(page, history, shots)
            _the_study(page, shots)
            assert errors == []
        finally:
            browser.close()


def _default_view(page: Page, history: History, shots: Shots) -> None:
    """Everything: load rows/s, three databases, all nightly runs, QuestDB's step marked."""
    series = len(_data(history.out).series)
    expect(page.locator("#summary")).to_have_text(f"{NIGHTS + 2} run(s), {series} series")
    expect(page.locator("#metric")).to_have_value("load rows/s")
    selected = page.locator("#metric option:checked")
    expect(selected).to_have_text("load rows/s (rows/s, higher is better)")
    expect(page.locator("#origin-field")).to_be_visible()  # two origins: the nightly and a study
    expect(page.locator("#point-field")).to_be_hidden()
    _check_load_bars(page, history.rates, ["questdb", "timescaledb", "postgres"], range(NIGHTS))
    note = "median load rows/s over the validated runs in the range"
    expect(page.locator("#bars-note")).to_contain_text(note)
    expect(page.locator("#trend polyline.line")).to_have_count(3)
    expect(page.locator("#trend path.failed")).to_have_count(3)  # night 4: one × per database
    marker = page.locator("#trend line.change")
    expect(marker).to_have_count(1)
    expect(marker).to_have_attribute("data-target", "questdb")
    expect(marker).to_have_attribute("stroke-dasharray", "6 4")
    caption = page.locator("#changes li")
    expect(caption).to_have_count(1)
    text = caption.inner_text()
    assert text.startswith("questdb load rows/s: regression −3"), text
    assert f"last run before: {_night(STEP - 1)}" in text and f"first run after: {_night(STEP)}" in text
    assert "changed: questdb version: 9.3.3 → 9.3.4" in text
    assert marker.locator("title").text_content() == "1. " + text
    expect(page.locator("#runs tbody tr")).to_have_count(NIGHTS)
    expect(page.locator("#runs tr.failed")).to_have_count(1)
    for href in page.locator("#runs a.report").evaluate_all("links => links.map(a => a.href)"):
        assert Path(unquote(urlparse(href).path)).is_file(), href
    shots.take(page, "1-load-all")


def _the_newest_run(page: Page, history: History, shots: Shots) -> None:
    """Bars of the newest run in the range instead of the median: QuestDB's lead after its step."""
    page.locator("#statistic").select_option("newest")
    newest = {name: values[-1] for name, values in history.rates.items()}
    _check_bars(page, newest, dict.fromkeys(newest, f"run {_night(NIGHTS - 1)}"))
    expect(page.locator("#bars-note")).to_contain_text("newest load rows/s among the validated runs")
    shots.take(page, "2-newest-run")
    page.locator("#statistic").select_option("median")


def _another_metric(page: Page, shots: Shots) -> None:
    """The footprint: lower is better, in bytes; no change (the fixture's footprints are constant)."""
    page.locator("#metric").select_option("footprint")
    expect(page.locator("#metric option:checked")).to_have_text("footprint (bytes, lower is better)")
    expect(page.locator("#trend polyline.line")).to_have_count(3)
    expect(page.locator("#trend line.change")).to_have_count(0)
    expect(page.locator("#changes-note")).to_contain_text("No change detected")
    labels = _bars(page)
    assert next(iter(labels.values())).startswith("×1.00 best") and all("iB" in v for v in labels.values())
    expect(page.locator("#bars-note")).to_contain_text("value ÷ best: lower is better")
    shots.take(page, "3-footprint")
    page.locator("#metric").select_option("load rows/s")


def _a_database_unticked(page: Page, history: History, shots: Shots) -> None:
    """QuestDB unticked: two lines and two bars, the best is now TimescaleDB, no change marked."""
    page.locator("#targets input[value=questdb]").uncheck()
    expect(page.locator("#trend polyline.line")).to_have_count(2)
    expect(page.locator("#trend line.change")).to_have_count(0)
    _check_load_bars(page, history.rates, ["timescaledb", "postgres"], range(NIGHTS))
    assert "questdb" not in page.locator("#runs thead").inner_text()
    shots.take(page, "4-questdb-unticked")
    page.locator("#targets input[value=questdb]").check()
    expect(page.locator("#trend polyline.line")).to_have_count(3)


def _a_narrower_range(page: Page, history: History, shots: Shots) -> None:
    """The last five nights: after the step, so no change is marked; bars over those runs only."""
    first = NIGHTS - 5
    page.locator("#from").select_option(label=f"2026-10-{first + 1:02d} 02:30 · {_night(first)}")
    expect(page.locator("#runs tbody tr")).to_have_count(5)
    expect(page.locator("#trend line.change")).to_have_count(0)
    expect(page.locator("#trend circle.dot")).to_have_count(15)
    _check_load_bars(page, history.rates, ["questdb", "timescaledb", "postgres"], range(first, NIGHTS))
    shots.take(page, "5-last-five-runs")
    page.locator("#from").select_option(label=f"2026-10-{STEP - 1:02d} 02:30 · {_night(STEP - 2)}")
    page.locator("#to").select_option(label=f"2026-10-{STEP + 3:02d} 02:30 · {_night(STEP + 2)}")
    expect(page.locator("#runs tbody tr")).to_have_count(5)
    expect(page.locator("#trend line.change")).to_have_count(1)  # both sides of the step in range
    shots.take(page, "6-around-the-step")


def _the_study(page: Page, shots: Shots) -> None:
    """The study's own runs: two, no change (too few runs)."""
    page.locator("#origin").select_option(STUDY)
    expect(page.locator("#runs tbody tr")).to_have_count(2)
    expect(page.locator("#trend polyline.line")).to_have_count(3)
    expect(page.locator("#trend line.change")).to_have_count(0)
    shots.take(page, "7-study")
