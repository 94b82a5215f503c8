"""Airflow for tests: a private AIRFLOW_HOME with a migrated SQLite DB, our dags/ and plugins/.

The environment is set when this conftest is imported, before anything imports Airflow.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOME = Path(tempfile.mkdtemp(prefix="tsbench-airflow-"))
os.environ.update(
    AIRFLOW_HOME=str(HOME),
    AIRFLOW__CORE__DAGS_FOLDER=str(ROOT / "dags"),
    AIRFLOW__CORE__PLUGINS_FOLDER=str(ROOT / "plugins"),
    AIRFLOW__CORE__LOAD_EXAMPLES="False",
)


@pytest.fixture(scope="session")
def airflow_db() -> Path:
    """Migrate the metadata DB once per session (about 20 s)."""
    airflow = Path(sys.executable).with_name("airflow")
    subprocess.run([str(airflow), "db", "migrate"], check=True, capture_output=True, env=os.environ)
    return HOME


@pytest.fixture(scope="session")
def dagbag(airflow_db: Path):
    from airflow.models.dagbag import DagBag

    return DagBag(dag_folder=str(ROOT / "dags"))
