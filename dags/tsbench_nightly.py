"""### tsbench nightly comparison

Every night at 02:30 UTC: TimescaleDB, QuestDB, InfluxDB and plain PostgreSQL on TSBS cpu-only data
(100 hosts × 1 day at 10 s), all query types, checked against the oracle, validated with
great_expectations, reported (HTML + PDF) and published to `latest/`. Switching it on never starts
a run at once: the first run is the next 02:30 UTC (no catch-up; a night missed before it was
switched on is never run). It is created switched on, or paused when the deployment was started
with `TSBENCH_NIGHTLY=paused`.

Trigger it by hand with other parameters, or use the `tsbench_comparison` DAG for ad-hoc runs.
Results: `reports/out/runs/<run>/`; report: `report/report.html` and `report.pdf` there and in `latest/`.
"""

import os

from tsbench.airflow.comparison_dag import build_comparison_dag

dag = build_comparison_dag(
    dag_id="tsbench_nightly",
    schedule="30 2 * * *",
    doc_md=__doc__,
    tags=["tsbench", "nightly", "benchmark"],
    paused_at_creation=os.environ.get("TSBENCH_NIGHTLY", "on") == "paused",
)
