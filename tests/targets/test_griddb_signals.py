"""The JVM's signal handlers in a Python process that also parses Airflow DAGs (``griddb.signals``).

Airflow's DAG importer installs a Python SIGSEGV handler each time it parses a file; in a process
whose JVM had already started, the JVM's next safepoint then spins forever (a GridDB query spun for
26 minutes in a CI pytest worker that had parsed the DAGs after its JVM started)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from griddb_serving import java_or_skip

ROOT = Path(__file__).resolve().parents[2]
# Java work that needs safepoints: sorts in compiled code while another thread asks for GCs.
SAFEPOINT_WORK = """
def safepoint_work(jpype, seconds_bound):
    import threading
    Random, Arrays = jpype.JClass("java.util.Random"), jpype.JClass("java.util.Arrays")
    System = jpype.JClass("java.lang.System")
    stop = threading.Event()

    def collect():
        while not stop.is_set():
            System.gc()
            stop.wait(0.05)

    def sort():
        for seed in range(4):
            Arrays.sort(Random(seed).ints(3_000_000).toArray())

    gc = threading.Thread(target=collect, daemon=True)
    gc.start()
    worker = threading.Thread(target=sort, daemon=True)
    worker.start()
    worker.join(seconds_bound)
    stop.set()
    return not worker.is_alive()
"""


def _child(tmp_path: Path, body: str) -> str:
    """Run ``SAFEPOINT_WORK`` + ``body`` in a child Python (its JVM is its own: a JVM that spins
    forever cannot hang this worker); what it printed."""
    child = tmp_path / "child.py"
    child.write_text(SAFEPOINT_WORK + textwrap.dedent(body))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "plugins"), os.environ.get("PYTHONPATH", "")]),
        "AIRFLOW_HOME": str(tmp_path / "airflow"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
    }
    done = subprocess.run([sys.executable, str(child)], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def test_a_python_handler_installed_after_the_jvm_starts_hangs_its_safepoints(tmp_path: Path) -> None:
    """Without tsbench's repair: a plain JVM, a Python SIGSEGV handler installed after it started
    (as Airflow's importer does), and Java work that needs a safepoint never finishes."""
    printed = _child(
        tmp_path,
        """
        import os, signal, jpype
        jpype.startJVM(convertStrings=False)
        signal.signal(signal.SIGSEGV, lambda signum, frame: None)
        print("finished" if safepoint_work(jpype, 10) else "hung", flush=True)
        os._exit(0)
        """,
    )
    assert printed == "hung"


def test_the_jvm_handlers_are_back_after_airflow_parses_a_dag(tmp_path: Path) -> None:
    """GridDB's JVM started, then a DAG file parsed by Airflow's own DagBag in the same process:
    Airflow's importer took SIGSEGV from the JVM, the next GridDB call puts the JVM's handler back,
    and Java work that needs safepoints finishes."""
    java_or_skip()  # the client jars are installed (or this fails, naming why)
    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "tiny_dag.py").write_text(
        "from airflow.sdk import DAG\nwith DAG('tsbench_signals_probe', schedule=None):\n    pass\n"
    )
    printed = _child(
        tmp_path,
        f"""
        import os, signal
        from tsbench.targets.griddb import client, signals
        java = client.java()
        from airflow.dag_processing.dagbag import DagBag
        bag = DagBag(dag_folder={str(tmp_path / "dags")!r})
        print("parsed", sorted(bag.dags), flush=True)
        print("replaced", [s.name for s in signals.replaced()], flush=True)
        with client.translated("safepoint work after a DAG parse"):
            pass
        print("finished" if safepoint_work(java.jpype, 60) else "hung", flush=True)
        print("replaced", [s.name for s in signals.replaced()], flush=True)
        os._exit(0)
        """,
    )
    said = [
        line
        for line in printed.splitlines()
        if line.split(" ")[0] in ("parsed", "replaced", "finished", "hung")
    ]
    assert "SIGSEGV had a handler installed after the JVM started" in printed  # the warning, once
    assert said == [
        "parsed ['tsbench_signals_probe']",
        "replaced ['SIGSEGV']",  # Airflow's importer took it from the JVM
        "finished",
        "replaced []",
    ], printed
