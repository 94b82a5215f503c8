"""End to end: a streamed dataset (``dataset_rows: streamed``) through dag.test() of the comparison
DAG against the real QuestDB, PostgreSQL and GridDB servers: only its extract is stored, every load
reads the rows generated again (QuestDB's and PostgreSQL's wire encoders, GridDB's Arrow batches),
every row is counted in the databases and every answer equals the oracle's over the extract; the
validation passes and the report says so."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from integration.builds import wait_for_build
from integration.dag_runs import TINY, only_run

from tsbench.results.files import read_json

pytest_plugins = ("integration.minio", "integration.dag_runs")
pytestmark = pytest.mark.integration


def test_a_streamed_dataset_runs_through_the_dag(dagbag, pipeline_env: dict) -> None:
    wait_for_build("TSBENCH_GRIDDB_BUILD_STATUS", "GridDB 5.9.0 (targets/griddb/build.sh)")
    conf = {**TINY, "duration": "4d", "dataset_rows": "streamed", "wire_bodies": "streamed"}
    conf["targets"] = ["questdb", "postgres", "griddb"]
    conf["query_types"] = ["single-groupby-1-1-1", "high-cpu-all", "lastpoint", "groupby-orderby-limit"]
    run = dagbag.get_dag("tsbench_comparison").test(run_conf=conf)
    assert run.state == "success"
    folder = only_run(pipeline_env["out"])
    result = read_json(folder / "comparison.json")["results"]["10"]
    dataset = result["dataset"]
    assert dataset["rows_total"] == 10 * 4 * 8_640
    datasets = pipeline_env["out"].parent / "datasets"
    files = [p for p in datasets.rglob("cpu/*.parquet") if "-streamed-" in str(p)]
    stored = sum(pq.ParquetFile(p).metadata.num_rows for p in files)
    assert 0 < stored == dataset["kept_rows"] < dataset["rows_total"] // 2  # the extract, not the rows
    for name in conf["targets"]:
        target = result["targets"][name]
        assert target["status"] == "ok"
        (trial,) = target["load"]["trials"]
        assert trial["rows"] == dataset["rows_total"] and target["load"]["row_count_ok"]
        assert trial["source"] == ("arrow" if name == "griddb" else "wire-streamed")
        for passes in ("cold", "hot"):
            checks = target["queries"][passes]
            assert set(checks) == set(conf["query_types"])
            assert all(c["count"] == 2 and not c["errors"] and not c["mismatches"] for c in checks.values())
    validation = read_json(folder / "validation.json")
    assert validation["success"], validation["critical_failed"]
    report = (folder / "report" / "report.html").read_text()
    assert f"{dataset['kept_rows']:,} rows of the queries' windows kept" in report
