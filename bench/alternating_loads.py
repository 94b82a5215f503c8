"""What the load benchmarks share: loads into one warm local server, alternating between the forms
compared (a warm-up of each first, then rounds of one trial per form), each into a fresh schema
with every measurement's row count checked."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tsbench.measure.load import LoadResult, load
from tsbench.runtimes.local import LocalRuntime
from tsbench.targets.base import Target
from tsbench.targets.registry import load_target
from tsbench.workload.dataset import Dataset

BENCH_ROOT = Path("/var/tmp/tsbench-bench")


@contextmanager
def local_server(name: str, purpose: str) -> Iterator[Callable[[Dataset], Target]]:
    """A local server of target ``name`` for the whole benchmark, torn down after; yields a maker
    of clients for a dataset (its use case and tags)."""
    root = BENCH_ROOT / f"{purpose}-{uuid.uuid4().hex[:6]}"
    root.mkdir(parents=True)
    root.parent.chmod(0o755)
    runtime, target_type, instance = LocalRuntime(root), load_target(name), f"{name}-{purpose}"
    server = runtime.provision(target_type, instance)
    clients: list[Target] = []

    def client(dataset: Dataset) -> Target:
        clients.append(target_type(server.endpoint(), dataset.use_case, dataset.tags()))
        return clients[-1]

    try:
        yield client
        for made in clients:
            made.close()
    finally:
        runtime.teardown(instance)


def checked_load(target: Target, dataset: Dataset, **options: Any) -> LoadResult:
    """A fresh schema, then the whole dataset (``measure.load.load``'s ``options``); the rows the
    server holds are checked against the dataset's."""
    target.create_schema()
    result = load(target, dataset, **options)
    for measurement, expected in dataset.rows.items():
        assert target.row_count(measurement) == expected, measurement
    assert result.rows == sum(dataset.rows.values())
    return result


def alternating(
    forms: dict[str, Callable[[], LoadResult]], trials: int, label: str = ""
) -> dict[str, list[LoadResult]]:
    """One warm-up load of each form (not counted), then ``trials`` rounds of one load per form;
    prints each counted trial's rows/s and client CPU-s."""
    for run in forms.values():
        run()
    results: dict[str, list[LoadResult]] = {form: [] for form in forms}
    for trial in range(trials):
        for form, run in forms.items():
            result = run()
            results[form].append(result)
            print(
                f"  {label}trial {trial + 1} {form:<17} {result.rows_per_s:>10,.0f} rows/s in "
                f"{result.seconds:6.1f} s, client {result.client_cpu_s:6.1f} CPU-s",
                flush=True,
            )
    return results
