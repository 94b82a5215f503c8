"""Change detection over a run history: series per target × metric × use case × scale, change
records naming the runs on either side and what differed between them, and the report's Trends
section showing them."""

from __future__ import annotations

import numpy as np
from unit.test_report import synthetic_result

from tsbench.changes.history import detect_changes
from tsbench.changes.series import HistoryRun, build_series
from tsbench.report.render import render_document
from tsbench.results.documents import StoredResult
from tsbench.results.model import Comparison, MachineState, RunResult


def _result(night: int, rows_per_s: float, version: str, commit: str = "abc") -> RunResult:
    """The report fixture's run as night ``night``, QuestDB at ``version`` loading ``rows_per_s``."""
    body = synthetic_result(f"night-{night:02d}", f"2026-10-{night + 1:02d}T02:30:00Z")
    body["tsbench_commit"] = commit
    questdb = body["targets"]["questdb"]
    questdb["provision"]["version"] = version
    questdb["load"]["median_rows_per_s"] = rows_per_s
    return RunResult.from_json(body)


def _history(
    rates: list[float], versions: list[str], states: list[dict[str, float]] | None = None
) -> tuple[Comparison, list[StoredResult]]:
    results = [
        _result(i, rate, version) for i, (rate, version) in enumerate(zip(rates, versions, strict=True))
    ]
    if states:
        results = [
            result.model_copy(update={"machine_state": MachineState.from_json(state)})
            for result, state in zip(results, states, strict=True)
        ]
    *earlier, tonight = results
    comparison = Comparison(run_id=tonight.run_id, results={"100": tonight})
    return comparison, [StoredResult(r, r.run_id) for r in earlier]


def _noisy(level: float, n: int, seed: int) -> list[float]:
    return list(level * (1 + 0.05 * np.random.default_rng(seed).standard_normal(n)))


def test_a_release_that_speeds_up_the_load_is_one_change_naming_the_versions_and_runs() -> None:
    rates = _noisy(100_000, 12, 1) + _noisy(130_000, 12, 2)
    versions = ["9.3.3"] * 12 + ["9.3.4"] * 12
    report = detect_changes(*_history(rates, versions))
    load = [c for c in report.changes if c.metric == "load rows/s"]
    assert len(load) == 1, [c.summary() for c in report.changes]
    change = load[0]
    assert (change.before.run_id, change.after.run_id) == ("night-11", "night-12")
    assert change.verdict == "improvement" and change.better == "higher"
    assert change.low is not None and change.high is not None and change.low < change.relative < change.high
    assert 0.2 < change.relative < 0.4
    assert [d.text() for d in change.differences] == ["questdb version: 9.3.3 → 9.3.4"]
    assert "from run night-11 to run night-12" in change.summary()
    # every other figure stayed the same throughout: no change on those series
    assert len(report.changes) == 1
    assert report.runs == 24 and report.series > 10


def test_noise_alone_gives_no_change() -> None:
    report = detect_changes(*_history(_noisy(100_000, 30, 7), ["9.3.4"] * 30))
    assert report.changes == []


def test_a_change_the_machine_made_names_its_state_and_a_wiggle_is_not_named() -> None:
    """Nothing recorded changed but the machine: its state figures that moved beyond their
    tolerance are the change's differences (freshly booted, slower fresh pages); figures that
    moved within it (the CPU probe by 3 %, the load by 0.4) are not."""
    rates = _noisy(60_000, 10, 5) + _noisy(100_000, 10, 6)
    state = {"load_1min": 0.3, "busy_percent": 2.0, "steal_percent": 0.0, "cpu_probe_ms": 30.0}
    fresh = [{**state, "uptime_s": 600.0 + 60 * i, "fresh_page_us": 9.0} for i in range(10)]
    settled = [
        {**state, "uptime_s": 4000.0 + 60 * i, "fresh_page_us": 4.5, "cpu_probe_ms": 30.9, "load_1min": 0.7}
        for i in range(10)
    ]
    report = detect_changes(*_history(rates, ["9.3.4"] * 20, fresh + settled))
    [load] = [c for c in report.changes if c.metric == "load rows/s"]
    assert (load.before.run_id, load.after.run_id) == ("night-09", "night-10")
    assert [d.text() for d in load.differences] == [
        "machine state freshly booted: yes (up 19 min) → no (up 67 min)",
        "machine state fresh_page_us: 9 µs per page → 4.5 µs per page",
    ]


def test_series_are_kept_apart_by_study_and_scale() -> None:
    tonight = _result(0, 1.0, "9.3.4")
    other_scale = RunResult.from_json({**tonight.to_json(), "spec": {**tonight.spec, "scale": 1000}})
    series = build_series(
        [
            HistoryRun("a", tonight),
            HistoryRun("b", other_scale),
            HistoryRun("c", tonight, origin="b_tdengine"),
        ]
    )
    keys = {(s.key.origin, s.key.scale, s.key.metric.name) for s in series}
    assert ("", 100, "load rows/s") in keys and ("", 1000, "load rows/s") in keys
    assert ("b_tdengine", 100, "load rows/s") in keys
    assert all(len(s.values) == 1 for s in series)


def test_the_trends_section_lists_the_change_and_marks_it() -> None:
    rates = _noisy(100_000, 6, 3) + _noisy(60_000, 6, 4)
    comparison, history = _history(rates, ["9.3.3"] * 6 + ["9.3.4"] * 6)
    report = detect_changes(comparison, history)
    assert [(c.target, c.metric, c.verdict) for c in report.changes] == [
        ("questdb", "load rows/s", "regression")
    ]
    tonight = comparison.results["100"]
    html = render_document([(tonight, None, {})], history, changes=report)
    assert "Detected changes" in html and "regression" in html
    assert "questdb version: 9.3.3 → 9.3.4" in html
    quiet = render_document([(tonight, None, {})], history, changes=None)
    assert "Change detection did not run for this run." in quiet
    # the dashed change marker on the load chart: one more dashed line than without the change
    assert html.count("stroke-dasharray") == quiet.count("stroke-dasharray") + 1
