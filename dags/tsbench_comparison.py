"""### tsbench comparison (on demand)

The same pipeline as the nightly run, triggered by hand with the Params form: targets, scales (one
branch per scale), use case, duration, interval, seed, workers, batch size, query types, queries per
type, trials, runtime. Bad parameters fail the first task (`validate_params`) with one message per
field, before any work starts.
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
