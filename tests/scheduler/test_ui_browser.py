"""The Airflow UI looked at in a real browser (headless Chromium, Debian's, driven by Playwright):
log in, open a run's grid and one ``load`` log, check what the page shows, keep screenshots in
``reports/out/ui/``. Runs after test_real_scheduler.py (same deployment); triggers its own run when
run alone."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect, sync_playwright

from scheduler.deployment import ROOT, AirflowDeployment
from scheduler.test_real_scheduler import DAG, TWO_TARGETS

pytestmark = pytest.mark.integration
SHOTS = ROOT / "reports" / "out" / "ui"
TIMEOUT_MS = 60_000
# expect() has its own timeout (5 s by default), which the UI can miss on 2 busy cores (the suite
# runs on 3 xdist workers): every assertion waits as long as page actions do.
expect.set_options(timeout=TIMEOUT_MS)


def _chromium() -> str:
    path = shutil.which("chromium")
    assert path, "Debian's chromium is missing: scripts/install_report_tools.sh installs it"
    return path


def _log_in(page: Page, deployment: AirflowDeployment) -> None:
    page.goto(deployment.base_url + "/")
    page.locator("input[name=username]").fill(deployment.username)
    page.locator("input[name=password]").fill(deployment.password)
    page.locator("input[name=password]").press("Enter")
    page.wait_for_url(lambda url: "/auth/login" not in url, timeout=TIMEOUT_MS)


def _shot(page: Page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / name
    page.screenshot(path=str(path), full_page=True)
    return path


def test_run_grid_and_load_log_in_the_browser(deployment: AirflowDeployment) -> None:
    run_id = deployment.runs.get("two_targets") or deployment.trigger(DAG, TWO_TARGETS)
    assert deployment.wait_for_run(DAG, run_id)["state"] == "success"
    load = next(
        ti
        for ti in deployment.task_instances(DAG, run_id)
        if ti["task_id"] == "benchmark.load" and ti["rendered_map_index"].endswith("questdb")
    )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.set_default_timeout(TIMEOUT_MS)
        try:
            _log_in(page, deployment)
            page.goto(f"{deployment.base_url}/dags/{DAG}/runs/{run_id}")
            expect(page.get_by_text(run_id).first).to_be_visible()
            expect(page.get_by_text("success", exact=False).first).to_be_visible()
            _shot(page, "run.png")

            page.goto(
                f"{deployment.base_url}/dags/{DAG}/runs/{run_id}/tasks/benchmark.load/mapped/{load['map_index']}"
            )
            expect(page.get_by_text("scale-10 × questdb").first).to_be_visible()
            expect(page.get_by_text("load questdb trial 1/1: done", exact=False).first).to_be_visible()
            expect(page.get_by_text("row counts checked", exact=False).first).to_be_visible()
            _shot(page, "load-log.png")

            page.goto(f"{deployment.base_url}/dags/{DAG}")  # the trigger form: pick lists
            page.get_by_role("button", name="Trigger").first.click()
            expect(page.get_by_text("Run Parameters").first).to_be_visible()
            for chip in ("questdb", "timescaledb", "postgres", "influxdb"):  # default targets, as chips
                expect(page.get_by_text(chip, exact=True).first).to_be_visible()
            expect(page.get_by_text("Select one or multiple values").first).to_be_visible()  # query types
            _shot(page, "trigger-form.png")

            if bad := deployment.runs.get("bad"):  # what a user sees of a rejected trigger
                page.goto(f"{deployment.base_url}/dags/{DAG}/runs/{bad}/tasks/validate_params")
                expect(page.get_by_text("invalid run parameters", exact=False).first).to_be_visible()
                expect(page.get_by_text("workers (0):", exact=False).first).to_be_visible()
                _shot(page, "bad-trigger-log.png")
        finally:
            _shot(page, "last.png")
            browser.close()
    assert (SHOTS / "run.png").stat().st_size > 10_000 and (SHOTS / "load-log.png").stat().st_size > 10_000
