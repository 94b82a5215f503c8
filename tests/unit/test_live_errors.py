"""A live phase's failed writes and queries keep their reasons: the record's ``error_samples`` and
the report's caveat name the first ones, so an error count never stands without its cause."""

from __future__ import annotations

from tsbench.measure.live import ERROR_SAMPLES, _Checks
from tsbench.report.sections.live import _caveats
from tsbench.results.live_records import LivePhase


def test_the_first_failures_are_kept_with_their_reasons() -> None:
    checks = _Checks({})
    for attempt in range(ERROR_SAMPLES + 3):
        checks.failed("high-cpu-1", ConnectionResetError(f"reset #{attempt}"))
    checks.failed("ingest", KeyError(7))
    assert len(checks.error_samples) == ERROR_SAMPLES
    assert checks.error_samples[0] == {"what": "high-cpu-1", "reason": "ConnectionResetError: reset #0"}


def test_the_report_names_the_first_failure() -> None:
    live = LivePhase(
        error_samples=[{"what": "ingest", "reason": "TargetError: /write answered 500"}], rows_removed=True
    )
    assert _caveats(live) == ["writes or queries failed; the first: ingest: TargetError: /write answered 500"]
    assert _caveats(LivePhase(rows_removed=True)) == []
