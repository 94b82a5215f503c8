"""RunSpec validation: every bad value is rejected with a message naming the field."""

from __future__ import annotations

import pytest

from tsbench.spec import DatasetSpec, QuerySetSpec, RunSpec, SpecError
from tsbench.timeutil import NS_PER_SECOND, parse_instant


def problems(**values: object) -> dict[str, str]:
    with pytest.raises(SpecError) as caught:
        RunSpec.parse(**{"targets": ["x"], **values}) if "targets" in values else QuerySetSpec.parse(**values)
    return dict(caught.value.problems)


def test_defaults_match_tsbs_cpu_only_scale_100() -> None:
    spec = DatasetSpec.parse()
    assert spec.scale == 100 and spec.interval == 10 * NS_PER_SECOND
    assert spec.epochs == 8_640 and spec.rows_total == 864_000


def test_texts_are_parsed_and_serialised_back() -> None:
    spec = DatasetSpec.parse(
        start="2016-01-01T00:00:00Z", end="2016-01-04T00:00:00Z", interval="10s", scale=4000
    )
    assert spec.rows_total == 103_680_000  # WORKLOAD.md: 4,000 hosts × 3 days
    dumped = spec.model_dump()
    assert dumped["start"] == "2016-01-01T00:00:00Z" and dumped["interval"] == "10s"
    assert DatasetSpec.parse(**dumped) == spec


@pytest.mark.parametrize(
    ("values", "field", "fragment"),
    [
        ({"scale": 0}, "scale", "greater than or equal to 1"),
        ({"scale": -5}, "scale", "greater than or equal to 1"),
        ({"scale": 20_000_000}, "scale", "less than or equal"),
        ({"end": "2015-12-31T00:00:00Z"}, "end", "must be after start"),
        ({"end": "2016-01-01T00:00:00Z"}, "end", "must be after start"),
        ({"interval": "0s"}, "interval", "at least 1ms"),
        ({"interval": "-10s"}, "interval", "not a duration"),
        ({"interval": "7s"}, "interval", "does not divide"),
        ({"interval": "2d"}, "interval", "longer than the data span"),
        ({"interval": "ten seconds"}, "interval", "not a duration"),
        ({"start": "yesterday"}, "start", "not an ISO-8601 timestamp"),
        ({"use_case": "weather"}, "use_case", "unknown use case"),
        ({"ingestion": "random"}, "ingestion", "interleaved"),
        ({"run_length": 0}, "run_length", "greater than or equal to 1"),
        ({"seed": -1}, "seed", "greater than or equal to 0"),
        ({"scale": 10_000_000, "end": "2016-02-01T00:00:00Z"}, "scale", "exceeds the limit"),
        ({"end": "2040-01-01T00:00:00Z"}, "end", "at most 10 years"),
        ({"query_types": []}, "query_types", "at least one"),
        ({"query_types": ["lastpoint", "nope"]}, "query_types", "unknown query type(s) nope"),
        ({"query_types": ["lastpoint", "lastpoint"]}, "query_types", "listed twice"),
        (
            {"query_types": ["double-groupby-1"], "end": "2016-01-01T06:00:00Z"},
            "query_types",
            "window longer",
        ),
        ({"query_types": ["cpu-max-all-8"], "scale": 4}, "query_types", "more hosts than scale 4"),
        ({"query_types": ["lastpoint"], "use_case": "iot"}, "query_types", "do not apply to use case 'iot'"),
        (
            {"query_types": ["ycsb-read", "lastpoint"], "use_case": "ycsb-ts", "scale": 8},
            "query_types",
            "lastpoint do not apply to use case 'ycsb-ts'",
        ),
        ({"queries_per_type": -1}, "queries_per_type", "greater than or equal to 0"),
        ({"colour": "blue"}, "colour", "Extra inputs are not permitted"),
    ],
)
def test_bad_values_are_rejected_naming_the_field(values: dict, field: str, fragment: str) -> None:
    found = problems(**values)
    assert field in found, found
    assert fragment in found[field]


@pytest.mark.parametrize(
    ("values", "field", "fragment"),
    [
        ({"targets": []}, "targets", "at least one target"),
        ({"targets": ["oracle-db"]}, "targets", "unknown target(s) oracle-db"),
        ({"targets": ["x"], "workers": 0}, "workers", "greater than or equal to 1"),
        ({"targets": ["x"], "batch_size": 0}, "batch_size", "greater than or equal to 1"),
        ({"targets": ["x"], "batch_size": 10_000_000}, "batch_size", "less than or equal"),
        ({"targets": ["x"], "trials": 0}, "trials", "greater than or equal to 1"),
        ({"targets": ["x"], "runtime": "mainframe"}, "runtime", "local"),
    ],
)
def test_run_options_are_checked(values: dict, field: str, fragment: str) -> None:
    with pytest.raises(SpecError) as caught:
        RunSpec.parse(**values)
    found = dict(caught.value.problems)
    assert field in found and fragment in found[field], found


def test_all_problems_are_reported_at_once() -> None:
    found = problems(scale=0, interval="bad", use_case="nope")
    assert {"scale", "interval", "use_case"} <= set(found)
    message = str(SpecError(list(found.items())))
    assert message.startswith("invalid run parameters:") and "scale:" in message


def test_default_query_types_fit_the_data() -> None:
    short = QuerySetSpec.parse(end="2016-01-01T02:00:00Z", scale=4)
    types = short.resolved_query_types
    assert "lastpoint" in types and "single-groupby-1-1-1" in types
    assert "double-groupby-1" not in types and "cpu-max-all-8" not in types
    assert len(QuerySetSpec.parse().resolved_query_types) == 20
    iot_hour = QuerySetSpec.parse(use_case="iot", end="2016-01-01T01:00:00Z").resolved_query_types
    assert iot_hour[:4] == ["last-loc", "low-fuel", "high-load", "stationary-trucks"]
    assert "long-driving-sessions" not in iot_hour and len(iot_hour) == 10  # 4 h and 24 h windows
    assert len(QuerySetSpec.parse(use_case="iot").resolved_query_types) == 12


def test_dataset_key_ignores_run_options() -> None:
    a = QuerySetSpec.parse(queries_per_type=5)
    b = QuerySetSpec.parse(queries_per_type=50)
    assert a.dataset_key() == b.dataset_key() == DatasetSpec.parse().dataset_key()
    assert a.start == parse_instant("2016-01-01T00:00:00Z")


def test_zero_queries_per_type_is_a_load_only_run() -> None:
    spec = RunSpec.parse(targets=["questdb"], queries_per_type=0)
    assert spec.resolved_query_types == []
    found = problems(targets=["questdb"], queries_per_type=0, query_types=["lastpoint"])
    assert "load-only" in found["query_types"]
