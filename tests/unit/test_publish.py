"""Local publication (tsbench.run.pipeline.publish_run): index.html and the latest folders, on real files.

A run folder here is shaped like the pipeline's: comparison.json, validation.json and
report/report.{html,pdf}, recorded in a real RunStore under ``$TSBENCH_RESULTS``.
"""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path
from urllib.parse import unquote

import pytest

from tsbench.results import publish
from tsbench.results.store import RunStore
from tsbench.run import pipeline

PDF = (
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
    b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n%%EOF\n"
)


@pytest.fixture
def out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The publication root (``reports/out``); runs under ``out/runs``; no S3."""
    monkeypatch.setenv("TSBENCH_RESULTS", str(tmp_path / "out" / "runs"))
    monkeypatch.delenv("TSBENCH_S3_BUCKET", raising=False)
    return tmp_path / "out"


def make_run(out: Path, run_id: str, created_at: str, passed: bool = True) -> Path:
    """A collected, validated and reported comparison folder, recorded in the run index."""
    folder = out / "runs" / run_id
    result = {
        "run_id": run_id,
        "created_at": created_at,
        "spec": {"use_case": "cpu-only", "scale": 100, "targets": ["questdb", "postgres"]},
        "dataset": {"id": "cpu-only-100-abc", "rows_total": 864_000},
        "targets": {
            "questdb": {"status": "ok", "load": {"median_rows_per_s": 410_000.0}},
            "postgres": {"status": "ok", "load": {"median_rows_per_s": 120_500.0}},
        },
    }
    comparison = {
        "format": "tsbench-comparison/1",
        "run_id": run_id,
        "created_at": created_at,
        "use_case": "cpu-only",
        "targets": ["questdb", "postgres"],
        "scales": [100],
        "failed_targets": [],
        "results": {"100": result},
    }
    validation = {"success": passed, "critical_failed": [] if passed else ["query_success"], "warnings": []}
    (folder / "report").mkdir(parents=True)
    (folder / "comparison.json").write_text(json.dumps(comparison))
    (folder / "validation.json").write_text(json.dumps(validation))
    (folder / "report" / "report.html").write_text(
        f"<!doctype html><title>{run_id}</title><h1>{run_id}</h1>\n"
    )
    (folder / "report" / "report.pdf").write_bytes(PDF + run_id.encode())
    RunStore(out / "runs").record(folder)
    return folder


def latest_lines(page: str) -> dict[str, str]:
    """The index's "Latest validated run [in <folder>/]: …" paragraphs, by folder."""
    found = {}
    for line in re.findall(r"<p[^>]*>(Latest validated run.*?)</p>", page, re.S):
        folder = re.match(r"Latest validated run in <code>([^<]+)/</code>", line)
        found[folder.group(1) if folder else "latest"] = line
    return found


def links(fragment: str) -> dict[str, str]:
    """Link text → href (unquoted) of every <a> in an HTML fragment."""
    return {
        unescape(text): unquote(unescape(href))
        for href, text in re.findall(r'<a href="([^"]+)">([^<]+)</a>', fragment)
    }


def test_index_latest_line_links_to_the_latest_report(out: Path) -> None:
    folder = make_run(out, "20261101T020000Z-night1", "2026-11-01T02:30:00Z")
    outcome = pipeline.publish_run(folder)
    assert outcome["local"]["latest_replaced"] and outcome["s3"].startswith("skipped")

    page = (out / "index.html").read_text()
    line = latest_lines(page)["latest"]
    assert "<code>20261101T020000Z-night1</code>" in line
    found = links(line)
    assert set(found) == {"report (HTML)", "PDF", "comparison.json"}, line
    # relative to index.html, each link opens the latest run's own file
    assert (out / found["report (HTML)"]).read_bytes() == (folder / "report" / "report.html").read_bytes()
    assert (out / found["PDF"]).read_bytes() == (folder / "report" / "report.pdf").read_bytes()
    assert json.loads((out / found["comparison.json"]).read_text())["run_id"] == folder.name
    for href in re.findall(r'href="([^"]+)"', page):  # the run rows' links work too
        assert (out / unquote(unescape(href))).is_file(), href


def test_each_latest_folder_keeps_its_own_run(out: Path) -> None:
    nightly = make_run(out, "20261101T020000Z-night1", "2026-11-01T02:30:00Z")
    adhoc = make_run(out, "20261101T150000Z-adhoc1", "2026-11-01T15:00:00Z")
    pipeline.publish_run(nightly)
    pipeline.publish_run(adhoc, latest_folder="latest-tsbench_comparison")
    assert (out / "latest" / "RUN").read_text().strip() == nightly.name
    assert (out / "latest-tsbench_comparison" / "RUN").read_text().strip() == adhoc.name

    # a failing ad-hoc run replaces nothing; a newer nightly replaces only latest/
    failing = make_run(out, "20261102T100000Z-adhoc2", "2026-11-02T10:00:00Z", passed=False)
    assert not pipeline.publish_run(failing, latest_folder="latest-tsbench_comparison")["local"][
        "latest_replaced"
    ]
    newer = make_run(out, "20261102T020000Z-night2", "2026-11-02T02:30:00Z")
    pipeline.publish_run(newer, latest_folder="latest")
    assert (out / "latest" / "RUN").read_text().strip() == newer.name
    assert (out / "latest-tsbench_comparison" / "RUN").read_text().strip() == adhoc.name
    assert (
        json.loads((out / "latest-tsbench_comparison" / "comparison.json").read_text())["run_id"]
        == adhoc.name
    )

    lines = latest_lines((out / "index.html").read_text())
    assert list(lines) == ["latest", "latest-tsbench_comparison"]
    assert newer.name in lines["latest"] and adhoc.name in lines["latest-tsbench_comparison"]
    for folder, line in lines.items():
        assert all(href.startswith(f"{folder}/") and (out / href).is_file() for href in links(line).values())


@pytest.mark.parametrize(
    "name",
    ["", "nightly", "Latest", ".latest", "../latest", "latest/../../etc", "latest/x", "latest x", "latest\n"],
)
def test_a_bad_latest_folder_is_refused_before_anything_is_published(out: Path, name: str) -> None:
    folder = make_run(out, "20261101T020000Z-night1", "2026-11-01T02:30:00Z")
    with pytest.raises(ValueError, match=r"latest_folder .* one path component starting with 'latest'"):
        pipeline.publish_run(folder, latest_folder=name)
    with pytest.raises(ValueError, match="latest_folder"):  # the S3 side checks before connecting
        publish.publish_run(folder, "tsbench-unused", latest_folder=name)
    assert sorted(p.name for p in out.iterdir()) == ["runs"]


def test_results_go_under_the_repository_s_reports_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ``$TSBENCH_RESULTS`` runs land in ``reports/out/runs`` of the repository (where the
    main job and a newcomer look), wherever the module that says so sits in the package."""
    monkeypatch.delenv("TSBENCH_RESULTS", raising=False)
    assert (pipeline.REPO / "pyproject.toml").is_file()
    assert pipeline.results_root() == pipeline.REPO / "reports" / "out" / "runs"
