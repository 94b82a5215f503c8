"""VictoriaMetrics (the pin, 1.151.0) against a real server built from its Go module
(targets/victoriametrics/install.sh; scripts/test.sh builds it in the background and these tests wait
for that build, failing when it failed)."""

from __future__ import annotations

import dataclasses

import pytest
import requests
from builds import wait_for_build
from conftest import check_all_queries, check_ycsb_ts, load_all

from tsbench.targets.base import TargetError
from tsbench.targets.victoriametrics.definition import DEFINITION
from tsbench.targets.victoriametrics.target import login
from tsbench.workload.answers import Answer, compare
from tsbench.workload.dataset import Dataset
from tsbench.workload.oracle import Oracle
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_types import QUERY_TYPES

pytestmark = pytest.mark.integration
FIVE = QUERY_TYPES["single-groupby-5-1-1"].fields


@pytest.fixture(scope="module")
def victoria(serve, small_dataset: Dataset):
    wait_for_build("TSBENCH_VICTORIAMETRICS_BUILD_STATUS", "victoria-metrics (install.sh)")
    with serve("victoriametrics", small_dataset) as (server, target):
        yield server, target


def test_load_is_exact_and_retry_safe(victoria, small_dataset: Dataset) -> None:
    _, target = victoria
    target.create_schema()
    writer = target.writer()  # a half-done attempt that a retry must not double
    first = next(small_dataset.iter_batches("cpu", 7_000))
    assert writer.write("cpu", first) == first.num_rows
    writer.close()
    target.flush()
    assert target.count_rows("cpu", ("usage_user",)) == 7_000
    assert load_all(target, small_dataset) == small_dataset.rows["cpu"] == 103_680
    assert target.count_rows("cpu", small_dataset.complete_fields("cpu")) == 103_680
    with pytest.raises(TargetError, match="counted by a field every loaded row carries"):
        target.count_rows("cpu", ())


def test_every_query_type_it_can_express_matches_the_oracle(victoria, small_dataset: Dataset) -> None:
    _, target = victoria
    families = small_dataset.use_case.query_families
    types = {name for name, q in QUERY_TYPES.items() if q.family in families}
    unsupported = set(target.capabilities.unsupported) & types
    assert unsupported == {"high-cpu-1", "high-cpu-all", "groupby-orderby-limit"}
    nonempty = check_all_queries(target, small_dataset, per_type=4)
    assert set(nonempty) == types - unsupported
    assert all(count > 0 for count in nonempty.values()), nonempty


def test_windows_on_bucket_edges_and_inside_one_bucket(victoria, small_dataset: Dataset) -> None:
    """The renderings' edge cases against the oracle: a window starting and ending on bucket edges
    (no partial bucket), one shorter than a bucket, and one with partial hour buckets at both ends."""
    _, target = victoria
    hour = 3_600 * 10**9
    start = small_dataset.start_ns + hour
    eight = tuple(f"host_{i}" for i in range(8))
    queries = [
        LogicalQuery("edges", "single-groupby-1-1-1", ("usage_user",), ("host_1",), start, start + hour),
        LogicalQuery("inside", "single-groupby-5-8-1", FIVE, eight, start + 7 * 10**9, start + 43 * 10**9),
        LogicalQuery("hours", "double-groupby-5", FIVE, None, start + hour // 2, start + 5 * hour // 2),
    ]
    oracle, session = Oracle(small_dataset), target.session()
    try:
        for query in queries:
            text = target.render(query)
            expected = oracle.answer(query)
            result = compare(expected, Answer.build(query.query_type, session.execute(text), query.fields))
            assert expected.rows and result.ok, (query.id, result.reason, result.diff[:2], text)
        assert target.render(queries[0]).count("\ninstant ") == 0
        assert target.render(queries[1]).count("\ninstant ") == 1
        assert target.render(queries[2]).count("\ninstant ") == 2
    finally:
        session.close()
        oracle.close()


def test_only_its_user_with_the_password_gets_in_also_after_a_restart(
    victoria, small_dataset: Dataset
) -> None:
    """Every path but /health asks for the login: none and a wrong password are refused (401); the
    instance's own password (0600, beside its data, on no command line and in no log) gets in, and
    the data are all there after a cold restart."""
    server, target = victoria
    url = f"{target.url}/api/v1/query"
    password = server.endpoint().secrets["password"]
    wrong = dataclasses.replace(server.endpoint(), secrets={"password": "not-" + password})
    for headers, status in (({}, 401), (login(wrong), 401), (login(server.endpoint()), 200)):
        assert requests.get(url, params={"query": "1"}, headers=headers, timeout=10).status_code == status
    assert requests.get(f"{target.url}/health", timeout=10).status_code == 200
    secret = next(server.recipe.home.glob(".secret-*"))
    assert secret.stat().st_mode & 0o777 == 0o600 and secret.read_text().strip() == password
    assert password not in " ".join(server.recipe.command()) and password not in server.log_file.read_text()
    server.restart_cold()
    assert target.count_rows("cpu", ("usage_user",)) == small_dataset.rows["cpu"]


def test_facts_version_footprint_settings(victoria) -> None:
    _, target = victoria
    assert target.version() == DEFINITION.version
    footprint = target.footprint()
    assert footprint.bytes > 100_000 and any(kind.startswith("indexdb") for kind in footprint.parts)
    # the newest samples were waited for until on disk: counted as parts on disk, none in memory
    assert footprint.parts.get("storage/inmemory", 0) == 0 < footprint.parts["storage/small"]
    settings = target.settings()
    assert settings["-retentionPeriod"] == "100y" and "password" not in str(settings).lower().replace(
        "httpauth", ""
    )


def test_ycsb_ts_records(serve, ycsb_dataset: Dataset) -> None:
    wait_for_build("TSBENCH_VICTORIAMETRICS_BUILD_STATUS", "victoria-metrics (install.sh)")
    with serve("victoriametrics", ycsb_dataset) as (_, target):
        check_ycsb_ts(target, ycsb_dataset)
