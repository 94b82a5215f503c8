"""One Airflow deployment, started the documented way (docs/operating.md), shared by the tests of
this folder (in order: nothing runs unasked, then triggered runs, then the browser looks at them)
and stopped after the folder's last test (package scope: ``__init__.py`` makes the folder a
package), not left idling until the session ends."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from scheduler.deployment import AirflowDeployment, airflow_ui

STATE_BASE = Path("/var/tmp/tsbench-tests")  # short: PostgreSQL's socket path limit


@pytest.fixture(scope="package")
def deployment() -> Iterator[AirflowDeployment]:
    workdir = Path(tempfile.mkdtemp(prefix="tsbench-ui-"))
    state = STATE_BASE / f"ui-{uuid.uuid4().hex[:6]}"
    with airflow_ui(workdir, {"TSBENCH_STATE": str(state)}) as running:
        yield running
    shutil.rmtree(state, ignore_errors=True)
