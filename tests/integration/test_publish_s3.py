"""Publication to a real S3 server (MinIO, started by ``integration.minio``) with boto3."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import pytest

from tsbench.explorer.data import ExplorerData
from tsbench.explorer.page import VARIABLE, explorer_pages, render_page
from tsbench.results.files import write_bytes_atomic, write_json_atomic
from tsbench.results.publish import PublishError, publish_run
from tsbench.results.store import RunStore

if TYPE_CHECKING:
    from integration.minio import MinioServer

pytestmark = pytest.mark.integration
pytest_plugins = ("integration.minio",)  # the session fixture ``minio_server``

PDF = (
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
    b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n%%EOF\n"
)


def make_run(root: Path, run_id: str, created_at: str, passed: bool = True) -> Path:
    """A run folder as the pipeline leaves it: result, samples, phase files, validation, report."""
    run_dir = root / run_id
    targets = {
        "questdb": {"status": "ok", "load": {"median_rows_per_s": 1_250_000.0, "row_count_ok": True}},
        "postgres": {"status": "ok", "load": {"median_rows_per_s": 310_000.0, "row_count_ok": True}},
    }
    if not passed:
        targets["postgres"] = {
            "status": "failed",
            "failed_phase": "load",
            "error": "TargetError: rows differ",
        }
    write_json_atomic(
        run_dir / "result.json",
        {
            "format": "tsbench-result/1",
            "run_id": run_id,
            "created_at": created_at,
            "finished_at": created_at,
            "spec": {"use_case": "cpu-only", "scale": 100, "targets": ["questdb", "postgres"]},
            "dataset": {"id": "cpu-only-100-abc", "rows_total": 864_000},
            "targets": targets,
        },
    )
    write_bytes_atomic(run_dir / "samples.jsonl", b'{"metric": "load_rows_per_s", "value": 1.0}\n')
    write_json_atomic(run_dir / "targets" / "questdb" / "load.json", {"phase": "load", "trials": []})
    critical = [] if passed else ["load: postgres: finished every phase"]
    write_json_atomic(
        run_dir / "validation.json",
        {"success": passed, "critical_failed": critical, "warnings": [], "suites": []},
    )
    write_json_atomic(run_dir / "validation" / "load.json", {"suite": "load", "validations": []})
    report = f'<!doctype html><title>{run_id}</title><h1>Run {run_id}</h1><a href="report.pdf">PDF</a>\n'
    write_bytes_atomic(run_dir / "report" / "report.html", report.encode())
    write_bytes_atomic(run_dir / "report" / "report.pdf", PDF)
    write_bytes_atomic(run_dir / "report" / "style.css", b"body{font-family:sans-serif}\n")
    return run_dir


def objects(s3: Any, bucket: str) -> dict[str, str]:
    """Key → ETag of every object in the bucket."""
    found = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for item in page.get("Contents", []):
            found[item["Key"]] = item["ETag"]
    return found


def get(s3: Any, bucket: str, key: str) -> tuple[bytes, str]:
    response = s3.get_object(Bucket=bucket, Key=key)
    return response["Body"].read(), response["ContentType"]


def publish(server: MinioServer, run_dir: Path, bucket: str, prefix: str = "bench", **kwargs: Any) -> dict:
    return publish_run(
        run_dir,
        bucket,
        prefix,
        endpoint_url=server.endpoint_url,
        region=server.region,
        aws_access_key_id=server.access_key,
        aws_secret_access_key=server.secret_key,
        **kwargs,
    )


def test_publish_a_passing_run(minio_server: MinioServer, tmp_path: Path) -> None:
    s3 = minio_server.client()
    bucket = "tsbench-new-bucket"
    run_dir = make_run(tmp_path, "20261101T000000Z-pass01", "2026-11-01T00:00:00Z")
    outcome = publish(minio_server, run_dir, bucket, "bench/nightly", create_bucket=True)
    assert outcome["verdict"] == "passed" and outcome["latest"] == "20261101T000000Z-pass01"
    assert outcome["latest_updated"] and outcome["uploaded"] == 8 and outcome["unchanged"] == 0

    base = "bench/nightly/runs/20261101T000000Z-pass01/"
    page, kind = get(s3, bucket, base + "report/report.html")
    assert kind.startswith("text/html") and b"Run 20261101T000000Z-pass01" in page
    assert get(s3, bucket, base + "report/report.pdf") == (PDF, "application/pdf")
    assert get(s3, bucket, base + "result.json")[1] == "application/json"
    assert get(s3, bucket, base + "samples.jsonl")[1] == "application/x-ndjson"
    assert get(s3, bucket, base + "report/style.css")[1].startswith("text/css")

    latest_html, kind = get(s3, bucket, "bench/nightly/latest/report.html")
    assert latest_html == page and kind.startswith("text/html")
    assert (
        json.loads(get(s3, bucket, "bench/nightly/latest/result.json")[0])["run_id"]
        == "20261101T000000Z-pass01"
    )
    assert get(s3, bucket, "bench/nightly/latest/report.pdf")[0] == PDF

    index_html, kind = get(s3, bucket, "bench/nightly/index.html")
    assert kind.startswith("text/html")
    text = index_html.decode()
    assert "20261101T000000Z-pass01" in text and "PASSED" in text
    links = [unquote(h) for h in re.findall(r'href="([^"]+)"', text)]
    assert "runs/20261101T000000Z-pass01/report/report.html" in links
    assert "runs/20261101T000000Z-pass01/report/report.pdf" in links
    assert "latest/report.html" in links
    for link in links:  # every link resolves to an object, relative to index.html
        body, _ = get(s3, bucket, f"bench/nightly/{link}")
        assert body
    index = json.loads(get(s3, bucket, "bench/nightly/index.json")[0])
    assert index["latest"]["latest"]["run_id"] == "20261101T000000Z-pass01"
    assert [r["run_id"] for r in index["runs"]] == ["20261101T000000Z-pass01"]
    assert index["runs"][0]["load_rows_per_s"] == {"questdb": 1_250_000.0, "postgres": 310_000.0}


def test_failed_run_is_listed_as_failed_and_keeps_latest(minio_server: MinioServer, tmp_path: Path) -> None:
    s3, bucket = minio_server.client(), minio_server.new_bucket()
    good = make_run(tmp_path, "20261101T000000Z-good01", "2026-11-01T00:00:00Z")
    bad = make_run(tmp_path, "20261102T000000Z-bad001", "2026-11-02T00:00:00Z", passed=False)
    publish(minio_server, good, bucket)
    latest_before = {k: v for k, v in objects(s3, bucket).items() if k.startswith("bench/latest/")}
    outcome = publish(minio_server, bad, bucket)
    assert outcome["verdict"] == "failed" and outcome["latest"] == "20261101T000000Z-good01"
    assert not outcome["latest_updated"]

    after = objects(s3, bucket)
    assert {k: v for k, v in after.items() if k.startswith("bench/latest/")} == latest_before
    assert "bench/runs/20261102T000000Z-bad001/report/report.html" in after  # still published
    latest = json.loads(get(s3, bucket, "bench/latest/result.json")[0])
    assert latest["run_id"] == "20261101T000000Z-good01"

    text = get(s3, bucket, "bench/index.html")[0].decode()
    table = text[text.index("<tbody>") :]
    assert table.index("20261102T000000Z-bad001") < table.index("20261101T000000Z-good01")  # newest first
    bad_row = next(row for row in text.split("<tr") if "20261102T000000Z-bad001" in row)
    assert "FAILED" in bad_row and "load: postgres: finished every phase" in bad_row
    assert 'href="runs/20261102T000000Z-bad001/report/report.html"' in bad_row
    index = json.loads(get(s3, bucket, "bench/index.json")[0])
    assert [(r["run_id"], r["verdict"]) for r in index["runs"]] == [
        ("20261102T000000Z-bad001", "failed"),
        ("20261101T000000Z-good01", "passed"),
    ]
    assert index["latest"]["latest"]["run_id"] == "20261101T000000Z-good01"

    # a newer passing run replaces latest; re-publishing the older one does not move it back
    newer = make_run(tmp_path, "20261103T000000Z-good02", "2026-11-03T00:00:00Z")
    assert publish(minio_server, newer, bucket)["latest_updated"]
    assert publish(minio_server, good, bucket)["latest"] == "20261103T000000Z-good02"
    latest = json.loads(get(s3, bucket, "bench/latest/result.json")[0])
    assert latest["run_id"] == "20261103T000000Z-good02"

    # the latest run fails a re-validation: published again, latest/ goes back to the one before
    write_json_atomic(
        newer / "validation.json",
        {
            "success": False,
            "critical_failed": ["queries: questdb: no query errors"],
            "warnings": [],
            "suites": [],
        },
    )
    outcome = publish(minio_server, newer, bucket)
    assert outcome["latest"] == "20261101T000000Z-good01" and outcome["latest_updated"]
    latest = json.loads(get(s3, bucket, "bench/latest/result.json")[0])
    assert latest["run_id"] == "20261101T000000Z-good01"
    assert get(s3, bucket, "bench/latest/report.html")[0].find(b"Run 20261101T000000Z-good01") > 0


def test_each_latest_folder_mirrors_its_own_runs(minio_server: MinioServer, tmp_path: Path) -> None:
    """A run replaces only the latest folder it was published under, also after an index rebuild."""
    s3, bucket = minio_server.client(), minio_server.new_bucket()
    nightly = make_run(tmp_path, "20261101T023000Z-night1", "2026-11-01T02:30:00Z")
    adhoc = make_run(tmp_path, "20261101T150000Z-adhoc1", "2026-11-01T15:00:00Z")
    assert publish(minio_server, nightly, bucket)["latest"] == nightly.name
    outcome = publish(minio_server, adhoc, bucket, latest_folder="latest-tsbench_comparison")
    assert outcome["latest"] == adhoc.name and outcome["latest_folder"] == "latest-tsbench_comparison"

    def holder(folder: str) -> str:
        return json.loads(get(s3, bucket, f"bench/{folder}/result.json")[0])["run_id"]

    assert holder("latest") == nightly.name and holder("latest-tsbench_comparison") == adhoc.name
    index = json.loads(get(s3, bucket, "bench/index.json")[0])
    assert {folder: entry["run_id"] for folder, entry in index["latest"].items()} == {
        "latest": nightly.name,
        "latest-tsbench_comparison": adhoc.name,
    }
    text = get(s3, bucket, "bench/index.html")[0].decode()
    links = [unquote(h) for h in re.findall(r'href="([^"]+)"', text)]
    assert {"latest/report.html", "latest-tsbench_comparison/report.html"} <= set(links)
    for link in links:
        assert get(s3, bucket, f"bench/{link}")[0]

    # a newer ad-hoc run after an index rebuild: the rebuilt index still knows each run's folder
    s3.delete_object(Bucket=bucket, Key="bench/index.json")
    newer = make_run(tmp_path, "20261102T150000Z-adhoc2", "2026-11-02T15:00:00Z")
    publish(minio_server, newer, bucket, latest_folder="latest-tsbench_comparison")
    assert holder("latest") == nightly.name and holder("latest-tsbench_comparison") == newer.name
    index = json.loads(get(s3, bucket, "bench/index.json")[0])
    assert [(r["run_id"], r["latest_folder"]) for r in index["runs"]] == [
        (newer.name, "latest-tsbench_comparison"),
        (adhoc.name, "latest-tsbench_comparison"),
        (nightly.name, "latest"),
    ]
    assert {folder: entry["run_id"] for folder, entry in index["latest"].items()} == {
        "latest": nightly.name,
        "latest-tsbench_comparison": newer.name,
    }
    with pytest.raises(ValueError, match="latest_folder"):
        publish(minio_server, newer, bucket, latest_folder="latest/../runs")


def test_publishing_twice_leaves_the_same_objects(minio_server: MinioServer, tmp_path: Path) -> None:
    s3, bucket = minio_server.client(), minio_server.new_bucket()
    first = make_run(tmp_path, "20261101T000000Z-once01", "2026-11-01T00:00:00Z")
    second = make_run(tmp_path, "20261102T000000Z-once02", "2026-11-02T00:00:00Z", passed=False)
    publish(minio_server, first, bucket)
    publish(minio_server, second, bucket)
    before = objects(s3, bucket)
    again = publish(minio_server, second, bucket)
    assert again["uploaded"] == 0 and again["deleted"] == 0 and again["unchanged"] == 8
    assert objects(s3, bucket) == before  # same keys, same bytes (ETags)
    publish(minio_server, first, bucket)
    assert objects(s3, bucket) == before

    # a file gone from the run folder disappears from runs/<id>/ (and from latest/)
    (first / "report" / "style.css").unlink()
    outcome = publish(minio_server, first, bucket)
    assert outcome["deleted"] == 1
    after = objects(s3, bucket)
    assert "bench/runs/20261101T000000Z-once01/report/style.css" not in after
    assert "bench/latest/style.css" not in after


def test_every_publication_rewrites_the_results_explorer(minio_server: MinioServer, tmp_path: Path) -> None:
    """explorer.html and explorer-data.js beside index.html (which links to the explorer): every
    published run on it, a failed one marked, each report link an object relative to the page."""
    s3, bucket = minio_server.client(), minio_server.new_bucket()
    runs = [
        make_run(tmp_path, "20261101T000000Z-expl01", "2026-11-01T00:00:00Z"),
        make_run(tmp_path, "20261102T000000Z-expl02", "2026-11-02T00:00:00Z", passed=False),
        make_run(tmp_path, "20261103T000000Z-expl03", "2026-11-03T00:00:00Z"),
    ]
    for run_dir in runs:
        outcome = publish(minio_server, run_dir, bucket, pages=explorer_pages())
    assert outcome["pages"] == ["bench/explorer-data.js", "bench/explorer.html"]
    page, kind = get(s3, bucket, "bench/explorer.html")
    assert kind.startswith("text/html") and page.decode() == render_page()
    script, kind = get(s3, bucket, "bench/explorer-data.js")
    assert kind.startswith("text/javascript")
    prefix = f"window.{VARIABLE} = ".encode()
    data = ExplorerData.from_json(json.loads(script[len(prefix) : -2]))
    assert [(r.run_id, r.verdict) for r in data.runs] == [
        ("20261101T000000Z-expl01", "passed"),
        ("20261102T000000Z-expl02", "failed"),
        ("20261103T000000Z-expl03", "passed"),
    ]
    for run in data.runs:
        assert run.report == f"runs/{run.run_id}/report/report.html"
        assert get(s3, bucket, f"bench/{run.report}")[0].startswith(b"<!doctype html>")
    load = {s.target: s for s in data.series if s.metric == "load rows/s"}
    assert load["questdb"].runs == [0, 1, 2] and load["questdb"].values == [1_250_000.0] * 3
    assert load["postgres"].runs == [0, 2]  # the failed run's postgres failed its load
    assert 'href="explorer.html"' in get(s3, bucket, "bench/index.html")[0].decode()

    before = objects(s3, bucket)
    publish(minio_server, runs[0], bucket, pages=explorer_pages())
    assert objects(s3, bucket) == before  # the same runs: the same explorer, byte for byte


def test_index_is_rebuilt_from_the_runs(minio_server: MinioServer, tmp_path: Path) -> None:
    s3, bucket = minio_server.client(), minio_server.new_bucket()
    store = RunStore(tmp_path / "store")
    for day in (1, 2, 3):
        run_dir = make_run(tmp_path / "work", f"2026110{day}T000000Z-idx00{day}", f"2026-11-0{day}T00:00:00Z")
        store.record(run_dir)
        publish(minio_server, store.run_dir(run_dir.name), bucket, prefix="")
    s3.delete_object(Bucket=bucket, Key="index.json")
    outcome = publish(minio_server, store.run_dir("20261102T000000Z-idx002"), bucket, prefix="")
    assert outcome["latest"] == "20261103T000000Z-idx003"
    index = json.loads(get(s3, bucket, "index.json")[0])
    assert [r["run_id"] for r in index["runs"]] == [s.run_id for s in store.index()]
    assert [r["run_id"] for r in index["runs"]] == [f"2026110{d}T000000Z-idx00{d}" for d in (3, 2, 1)]


def test_wrong_credentials_give_a_clear_error(minio_server: MinioServer, tmp_path: Path) -> None:
    bucket = minio_server.new_bucket()
    run_dir = make_run(tmp_path, "20261101T000000Z-creds1", "2026-11-01T00:00:00Z")
    wrong = "not-the-secret-" + minio_server.secret_key[:4]
    with pytest.raises(PublishError, match="S3 rejected the credentials") as caught:
        publish_run(
            run_dir,
            bucket,
            endpoint_url=minio_server.endpoint_url,
            aws_access_key_id=minio_server.access_key,
            aws_secret_access_key=wrong,
        )
    assert wrong not in str(caught.value) and minio_server.secret_key not in str(caught.value)
    with pytest.raises(PublishError, match="S3 rejected the credentials"):
        publish_run(
            run_dir,
            bucket,
            endpoint_url=minio_server.endpoint_url,
            aws_access_key_id="nobody",
            aws_secret_access_key=wrong,
        )
    with pytest.raises(PublishError, match="does not exist"):
        publish(minio_server, run_dir, "tsbench-no-such-bucket")
    assert "Contents" not in minio_server.client().list_objects_v2(Bucket=bucket)


def test_credentials_and_endpoint_from_the_environment(
    minio_server: MinioServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bucket = minio_server.new_bucket()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", minio_server.access_key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", minio_server.secret_key)
    monkeypatch.setenv("AWS_ENDPOINT_URL", minio_server.endpoint_url)
    monkeypatch.setenv("AWS_DEFAULT_REGION", minio_server.region)
    run_dir = make_run(tmp_path, "20261101T000000Z-envir1", "2026-11-01T00:00:00Z")
    outcome = publish_run(run_dir, bucket, "from-env")
    assert outcome["latest"] == "20261101T000000Z-envir1"
    keys = objects(minio_server.client(), bucket)
    assert "from-env/runs/20261101T000000Z-envir1/result.json" in keys
    assert not any(minio_server.secret_key in key for key in keys)


def test_publish_a_comparison_folder(minio_server: MinioServer, tmp_path: Path) -> None:
    """A comparison (``comparison.json`` + ``scale-<N>/`` run folders) publishes the same way; its
    comparison.json stands in for result.json in the index and in latest/."""
    s3, bucket = minio_server.client(), minio_server.new_bucket()
    folder = tmp_path / "20261105T000000Z-cmp001"
    results = {}
    for scale in (10, 100):
        scale_dir = make_run(folder, f"scale-{scale}", "2026-11-05T00:00:00Z")
        result = json.loads((scale_dir / "result.json").read_text())
        result["spec"]["scale"] = scale
        write_json_atomic(scale_dir / "result.json", result)
        if scale == 10:  # a comparison's report and verdict live in the comparison folder
            (scale_dir / "report").rename(folder / "report")
            (scale_dir / "validation.json").rename(folder / "validation.json")
        else:
            shutil.rmtree(scale_dir / "report")
        results[str(scale)] = result
    comparison = {
        "format": "tsbench-comparison/1",
        "run_id": folder.name,
        "created_at": "2026-11-05T00:00:00Z",
        "use_case": "cpu-only",
        "targets": ["questdb", "postgres"],
        "scales": [10, 100],
        "failed_targets": [],
        "results": results,
    }
    write_json_atomic(folder / "comparison.json", comparison)
    outcome = publish(minio_server, folder, bucket)
    assert outcome["verdict"] == "passed" and outcome["latest"] == folder.name
    keys = objects(s3, bucket)
    assert f"bench/runs/{folder.name}/scale-100/result.json" in keys
    assert json.loads(get(s3, bucket, "bench/latest/comparison.json")[0])["scales"] == [10, 100]
    index = json.loads(get(s3, bucket, "bench/index.json")[0])
    line = index["runs"][0]
    assert line["kind"] == "comparison" and line["scales"] == [10, 100]
    assert line["links"]["result"] == f"runs/{folder.name}/comparison.json"
    text = get(s3, bucket, "bench/index.html")[0].decode()
    for link in (unquote(h) for h in re.findall(r'href="([^"]+)"', text)):
        assert get(s3, bucket, f"bench/{link}")[0]


def test_runs_published_at_the_same_moment_all_reach_the_index(
    minio_server: MinioServer, tmp_path: Path
) -> None:
    """Eight publishers (a team's workers) start together on one prefix: every run gets its index
    line, latest/ holds the newest, and index.html lists every run (index.json is written by
    compare-and-swap)."""
    import threading

    bucket, count = minio_server.new_bucket(), 8
    runs = [
        make_run(tmp_path, f"202611{day:02d}T000000Z-race{day:02d}", f"2026-11-{day:02d}T00:00:00Z")
        for day in range(1, count + 1)
    ]
    start, failures = threading.Barrier(count), []

    def publish_one(run_dir: Path) -> None:
        start.wait()
        try:
            publish(minio_server, run_dir, bucket)
        except Exception as error:  # collected: a thread's exception would not fail the test
            failures.append(error)

    threads = [threading.Thread(target=publish_one, args=(run_dir,)) for run_dir in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures
    s3 = minio_server.client()
    index = json.loads(get(s3, bucket, "bench/index.json")[0])
    assert sorted(r["run_id"] for r in index["runs"]) == sorted(run.name for run in runs)
    assert index["latest"]["latest"]["run_id"] == runs[-1].name
    assert get(s3, bucket, "bench/latest/report.html")[0].decode().count(runs[-1].name) >= 1
    page = get(s3, bucket, "bench/index.html")[0].decode()
    assert all(run.name in page for run in runs), "index.html was rendered from an older index"
