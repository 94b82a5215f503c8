"""The Celery form's worker preload (``tsbench.airflow.preload``): importing it leaves no Python
thread and no open file or socket to be inherited, and a process forked after it — as Celery's pool
and Airflow's task supervisor fork — works with what it preloaded (pyarrow, DuckDB, botocore's
S3 model)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
PROBE = textwrap.dedent(
    """
    import os, sys, threading
    before = set(os.listdir("/proc/self/fd"))
    import tsbench.airflow.preload as preload
    opened = set(os.listdir("/proc/self/fd")) - before
    missing = [name for name in preload.PRELOADED if name not in sys.modules]
    print(threading.active_count(), len(opened), missing)
    pid = os.fork()
    if pid == 0:
        import duckdb, pyarrow as pa, pyarrow.compute as pc
        total = pc.sum(pa.array(range(1_000_000))).as_py()
        counted = duckdb.connect().execute("SELECT count(*) FROM range(1000000)").fetchone()[0]
        from tsbench.results.bucket import make_client
        client = make_client("http://127.0.0.1:9", "eu-west-1", "key", "secret")
        s3_model = client.meta.service_model.service_name == "s3" and client.meta.region_name == "eu-west-1"
        os._exit(0 if (total, counted, s3_model) == (499_999_500_000, 1_000_000, True) else 3)
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
    """
)


def test_the_preload_leaves_nothing_open_and_a_forked_child_works() -> None:
    env = {**os.environ, "PYTHONPATH": str(PLUGINS)}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-2:] == ["1 0 []", "0"], done.stdout


def test_the_celery_config_is_airflows_plus_the_preload() -> None:
    from airflow.providers.celery.executors.default_celery import DEFAULT_CELERY_CONFIG

    from tsbench.airflow.celery_config import CELERY_CONFIG

    assert {k: v for k, v in CELERY_CONFIG.items() if k != "imports"} == DEFAULT_CELERY_CONFIG
    assert CELERY_CONFIG["imports"] == ("tsbench.airflow.preload",)
