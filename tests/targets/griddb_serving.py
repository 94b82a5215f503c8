"""What GridDB's test modules share: the Java client (or a skip where it truly cannot be installed),
a port nothing listens on, and the built gsserver served by the local runtime with a dataset loaded."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from integration.builds import wait_for_build

from tsbench.runtimes.local import LocalRuntime
from tsbench.targets.base import TargetError
from tsbench.targets.griddb import client
from tsbench.targets.griddb.target import GridDBTarget
from tsbench.workload.dataset import Dataset


def java_or_skip() -> Any:
    """The JVM with GridDB's client; a skip only when ``install_client.sh`` itself failed (no
    Maven/Java here), any other failure raised."""
    try:
        return client.java()
    except TargetError as error:
        if "install_client.sh failed" in str(error):
            pytest.skip(f"the GridDB Java client cannot be installed here: {error}")
        raise


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # nothing listens once the probe is closed


def load(target: GridDBTarget, dataset: Dataset) -> None:
    """A fresh schema, then every batch (named and nameless rows mixed) through one writer."""
    target.create_schema()
    writer = target.writer()
    try:
        for measurement in dataset.measurements:
            for batch in dataset.iter_batches(measurement, 2_000):
                assert writer.write(measurement, batch) == batch.num_rows
    finally:
        writer.close()


@contextmanager
def served(dataset: Dataset) -> Iterator[GridDBTarget]:
    """The built gsserver (waiting for the background build), started by the local runtime, with
    ``dataset`` loaded; torn down after the block."""
    wait_for_build("TSBENCH_GRIDDB_BUILD_STATUS", "GridDB 5.9.0 (targets/griddb/build.sh)")
    root = Path("/var/tmp/tsbench-tests") / uuid.uuid4().hex[:8]
    root.mkdir(parents=True)
    runtime, instance = LocalRuntime(root), f"griddb-{uuid.uuid4().hex[:6]}"
    try:
        server = runtime.provision(GridDBTarget, instance)
        target = GridDBTarget(server.endpoint(), dataset.use_case, dataset.tags())
        try:
            load(target, dataset)
            yield target
        finally:
            target.close()
    finally:
        runtime.teardown(instance)
        root.rmdir()  # empty once the instance is torn down
