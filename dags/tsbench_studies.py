"""One DAG per study file in ``studies/`` (``tsbench.studies``): ``tsbench_study_<name>``, on demand,
its Params form prefilled with the study's default size; the same pipeline as the comparison DAGs.
A passing run replaces ``latest-study-<name>/`` only."""

from tsbench.airflow.comparison_dag import build_comparison_dag
from tsbench.studies import all_studies

for _study in all_studies():
    globals()[_study.dag_id] = build_comparison_dag(
        dag_id=_study.dag_id,
        schedule=None,
        doc_md=_study.doc_md(),
        tags=["tsbench", "study", *([f"study-{_study.mirrors}"] if _study.mirrors else [])],
        param_overrides=_study.params_for(),
        latest_folder=_study.latest_folder,
        limits=_study.widest_limits(),
        study=_study,
    )
