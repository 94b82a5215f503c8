"""The YAML → DAG factory through Airflow's own DagBag (a fresh interpreter per parse, as the DAG
processor parses): each study file is a DAG; a malformed one is an import error of the studies' DAG
file that names the study file and its bad fields, never a silently missing DAG."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PARSE = """
import json, sys
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder=sys.argv[1])
print(json.dumps({"dags": sorted(bag.dag_ids), "errors": bag.import_errors}))
"""


def parse_studies_dag_file(studies: Path) -> dict:
    """DAG ids and import errors of ``dags/tsbench_studies.py`` with its studies read from ``studies``."""
    env = {
        **os.environ,
        "TSBENCH_STUDIES_DIR": str(studies),
        "PYTHONPATH": f"{ROOT / 'plugins'}:{ROOT / 'dags'}",
    }
    command = [sys.executable, "-c", PARSE, str(ROOT / "dags" / "tsbench_studies.py")]
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True, timeout=300)
    return json.loads(out.stdout.splitlines()[-1])


def test_each_study_file_is_a_dag_and_a_malformed_one_is_an_import_error_naming_it(
    airflow_db: Path, tmp_path: Path
) -> None:
    studies = tmp_path / "studies"
    studies.mkdir()
    shutil.copy(ROOT / "studies" / "e_athens_2022.yaml", studies / "ours.yaml")
    parsed = parse_studies_dag_file(studies)
    assert parsed == {"dags": ["tsbench_study_e_athens_2022"], "errors": {}}

    broken = studies / "z_broken.yaml"
    broken.write_text("name: broken study\ntitle: t\nmirrors: Z\nsizes: {small: {params: {}, colour: red}}\n")
    parsed = parse_studies_dag_file(studies)
    assert parsed["dags"] == []  # the file's DAGs are not half-registered
    [(dag_file, message)] = parsed["errors"].items()
    assert dag_file.endswith("tsbench_studies.py")
    for named in ("z_broken.yaml: name", "z_broken.yaml: sizes.small.colour"):
        assert named in message, message
