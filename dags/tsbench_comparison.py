"""### tsbench comparison (on demand)

The same pipeline as the nightly run, triggered by hand with the Params form: targets, and the sweep
axes as lists — scales, workers, batch sizes, ingestion orders, trials (the run is their cross
product; one value each is a plain comparison) — or a row budget per scale (cardinality mode); use
case, duration, interval, seed, query types, queries per type, runtime. Bad parameters fail the
first task (`validate_params`) with one message per field, before any work starts.
"""

from tsbench.airflow.comparison_dag import build_comparison_dag

dag = build_comparison_dag(
    dag_id="tsbench_comparison",
    schedule=None,
    doc_md=__doc__,
    tags=["tsbench", "on-demand", "benchmark"],
    param_overrides={"scales": [100], "queries_per_type": 10},
    latest_folder="latest-tsbench_comparison",  # the nightly's latest/ stays the nightly's
)
