"""A notice's run in an S3 run store (a real MinIO): found by its run's suffix, and only the files a
notice reads pulled into the task's scratch copy (not the reference answers, not the queries)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest

from tsbench.notify.redact import Redactor
from tsbench.notify.summary import NOTICE_PART, Outcome, RunEnd, summarize
from tsbench.results.folder import RunFolder
from tsbench.results.model import Comparison, RunResult, TargetResult, Validation
from tsbench.results.workspace import find_run_folder, run_folder_name

if TYPE_CHECKING:
    from integration.minio import MinioServer

pytest_plugins = ("integration.minio",)
pytestmark = pytest.mark.integration
RUN_ID = "scheduled__2026-11-24T02:30:00+00:00"


def test_a_notice_reads_only_its_files_of_a_run_in_an_s3_run_store(
    minio_server: MinioServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in minio_server.aws_environment().items():
        monkeypatch.setenv(key, value)
    bucket, s3 = minio_server.new_bucket("notice"), minio_server.client()
    name = run_folder_name(RUN_ID, datetime(2026, 11, 24, 2, 30, tzinfo=UTC))
    result = RunResult(spec={"scale": 10}, targets={"questdb": TargetResult(status="ok")})
    files = {
        "comparison.json": json.dumps(Comparison(run_id=name, results={"10": result}).to_json()),
        "validation.json": json.dumps(Validation(success=True).to_json()),
        "report/report.pdf": "%PDF-1.7 test",
        "scale-10/answers.jsonl": "{}\n",
        "scale-10/queries.jsonl": "{}\n",
    }
    for relative, body in files.items():
        s3.put_object(Bucket=bucket, Key=f"team/runs/{name}/{relative}", Body=body.encode())
    s3.put_object(Bucket=bucket, Key="team/runs/20261123T023000Z-000000/plan.json", Body=b"{}")
    store = f"s3://{bucket}/team/runs"
    url = find_run_folder(store, RUN_ID)  # the start time unknown: by the suffix
    assert url == f"{store}/{name}"
    assert find_run_folder(store, RUN_ID, datetime(2026, 11, 24, 2, 30, tzinfo=UTC)) == url
    with RunFolder.opened(url, part=NOTICE_PART) as folder:
        pulled = sorted(p.relative_to(folder.path).as_posix() for p in folder.path.rglob("*") if p.is_file())
        summary = summarize(folder, RunEnd("tsbench_nightly", RUN_ID, True), Redactor())
        assert summary.report is not None and summary.report.read_bytes().startswith(b"%PDF")
    assert pulled == ["comparison.json", "report/report.pdf", "validation.json"]
    assert summary.outcome is Outcome.PASSED and summary.run == name
