"""The live phase's run parameters: named before any work, every bad one at once."""

from __future__ import annotations

import pytest

from tsbench.spec import RunSpec, SpecError, live_rate_parts


def test_every_bad_live_parameter_is_named_at_once() -> None:
    with pytest.raises(SpecError) as caught:
        RunSpec.parse(
            targets=["postgres"],
            live_seconds=-1,
            live_rate="fast",
            query_rate=-2,
            query_workers=0,
            live_batch_size=0,
        )
    text = str(caught.value)
    for name in ("live_seconds", "live_rate", "query_rate", "query_workers", "live_batch_size"):
        assert name in text, (name, text)


def test_an_slo_without_a_ramp_and_a_ramp_without_a_live_phase_are_refused() -> None:
    with pytest.raises(SpecError) as caught:
        RunSpec.parse(targets=["postgres"], live_seconds=10, slo_p99_ms=200)
    assert "slo_p99_ms: an SLO needs a ramp" in str(caught.value)
    with pytest.raises(SpecError) as caught:
        RunSpec.parse(targets=["postgres"], query_rate_ramp=[5, 10])
    assert "give live_seconds" in str(caught.value)
    with pytest.raises(SpecError) as caught:
        RunSpec.parse(targets=["postgres"], live_seconds=5, query_rate_ramp=[10, 5])
    assert "ascending" in str(caught.value)


def test_live_queries_need_queries() -> None:
    with pytest.raises(SpecError) as caught:
        RunSpec.parse(targets=["postgres"], live_seconds=5, queries_per_type=0)
    assert "has no queries to send live" in str(caught.value)
    assert (
        RunSpec.parse(targets=["postgres"], live_seconds=5, queries_per_type=0, query_rate=0).live_seconds
        == 5
    )


@pytest.mark.parametrize(
    ("text", "parts"), [("1000", (1000.0, False)), ("0.5x", (0.5, True)), (" 2X ", (2.0, True))]
)
def test_a_live_rate_is_rows_per_second_or_a_fraction_of_the_load(
    text: str, parts: tuple[float, bool]
) -> None:
    assert live_rate_parts(text) == parts


@pytest.mark.parametrize("text", ["0", "-1x", "x", "nan", "inf", "fast"])
def test_a_live_rate_that_is_neither_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="rate"):
        live_rate_parts(text)
