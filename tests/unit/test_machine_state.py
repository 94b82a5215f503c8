"""The machine's state as a point starts (``tsbench.machine_state``), measured on this machine."""

from __future__ import annotations

from tsbench.machine_state import TOLERANCES, Tolerance, describe, measure_machine_state
from tsbench.results.model import MachineState


def test_the_state_is_measured_here_and_described_in_one_line() -> None:
    figures = measure_machine_state()
    assert set(figures) == {"uptime_s", *TOLERANCES}
    state = MachineState.from_json(figures)
    assert state.uptime_s > 0 and state.fresh_page_us > 0 and state.cpu_probe_ms > 0
    assert 0 <= state.steal_percent <= 100
    assert 0 <= state.busy_percent <= 100 and state.load_1min >= 0
    text = describe(state)
    assert text.startswith("up ") and f"CPU probe {state.cpu_probe_ms} ms" in text
    assert describe(None) == describe(MachineState()) == "not recorded"


def test_a_tolerance_is_a_ratio_or_points() -> None:
    assert Tolerance(ratio=1.3).differs(9.0, 4.5) and not Tolerance(ratio=1.3).differs(4.5, 5.0)
    assert Tolerance(points=3.0).differs(0.0, 3.5) and not Tolerance(points=3.0).differs(1.0, 3.5)
    assert not Tolerance(ratio=1.3).differs(0.0, 5.0)  # no ratio to a zero
