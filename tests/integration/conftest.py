"""Real servers for integration tests: provisioned by the project's own scripts, torn down after.

``serve(name)`` provisions a fresh local instance of target ``name`` (installing the server with
``scripts/install_*.sh`` if needed) in a private state root and yields ``(server, target)`` connected
to the ``small_dataset`` use case; ``load_all`` and ``check_all_queries`` are the shared steps.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from iot_checks import answers_against_the_oracle

from tsbench.run.target_phases import TargetPhases
from tsbench.runtimes.local import LocalRuntime, LocalServer
from tsbench.targets.base import Target
from tsbench.targets.registry import load_target
from tsbench.workload.answers import Answer, compare
from tsbench.workload.dataset import Dataset
from tsbench.workload.oracle import Oracle
from tsbench.workload.queries import DataRange, LogicalQuery, generate_queries
from tsbench.workload.query_types import QUERY_TYPES, types_of

pytestmark = pytest.mark.integration


@pytest.fixture(scope="session")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> LocalRuntime:
    root = Path("/var/tmp/tsbench-tests") / uuid.uuid4().hex[:8]
    root.mkdir(parents=True)
    root.parent.chmod(0o755)
    return LocalRuntime(root)


@contextmanager
def serving(runtime: LocalRuntime, name: str, dataset: Dataset) -> Iterator[tuple[LocalServer, Target]]:
    target_type = load_target(name)
    instance = f"{name}-{uuid.uuid4().hex[:6]}"
    server = runtime.provision(target_type, instance)
    target = target_type(server.endpoint(), dataset.use_case, dataset.tags())
    try:
        yield server, target
    finally:
        target.close()
        runtime.teardown(instance)


@contextmanager
def retargeted(server: LocalServer, target: Target, dataset: Dataset) -> Iterator[Target]:
    """A target of ``target``'s type on the same ``server`` for another dataset (its use case and
    tags), closed after; the server keeps serving the module's other tests."""
    other = type(target)(server.endpoint(), dataset.use_case, dataset.tags())
    try:
        yield other
    finally:
        other.close()


@pytest.fixture(scope="session")
def serve(runtime: LocalRuntime) -> Callable:
    def factory(name: str, dataset: Dataset):
        return serving(runtime, name, dataset)

    return factory


def killed_during_load(runtime: LocalRuntime, run_dir: Path, name: str) -> TargetPhases:
    """Run target ``name``'s phases in ``run_dir`` (a prepared run) on a thread and SIGKILL its
    server one second into the load: the branch must report failure. Returns its phases (their
    folder holds ``error.json`` and ``teardown.json``)."""
    victim = TargetPhases(run_dir, name, runtime)
    outcome: dict[str, bool] = {}
    worker = threading.Thread(target=lambda: outcome.setdefault("ok", victim.run_all()))
    worker.start()
    deadline = time.time() + 180
    while not (victim.dir / "prepare.json").exists() and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)
    runtime.attach(victim.instance).kill()
    worker.join(300)
    assert outcome == {"ok": False}
    return victim


def load_all(target: Target, dataset: Dataset, batch_rows: int = 5_000) -> int:
    """Create the schema and write every measurement with one writer; flush; return rows written."""
    target.create_schema()
    writer = target.writer()
    written = 0
    try:
        for measurement in dataset.measurements:
            for batch in dataset.iter_batches(measurement, batch_rows):
                written += writer.write(measurement, batch)
    finally:
        writer.close()
    target.flush()
    return written


def nameless_rows(dataset: Dataset, measurement: str) -> list[tuple[int, float | None]]:
    """The dataset's rows without an entity (nameless iot points) as sorted ``(time ns, first
    field)`` pairs: what a target must hold for them."""
    table = dataset.read(measurement)
    nameless = table.filter(pc.is_null(table[dataset.use_case.entity_key]))
    field = dataset.use_case.measurement(measurement).field_names[0]
    times = nameless["time"].cast(pa.int64()).to_pylist()
    return sorted(zip(times, nameless[field].to_pylist(), strict=True), key=_none_last)


def _none_last(pair: tuple[int, float | None]) -> tuple[int, bool, float]:
    return pair[0], pair[1] is None, pair[1] or 0.0


def sorted_pairs(pairs: Iterable[tuple[int, float | None]]) -> list[tuple[int, float | None]]:
    """``(time ns, value)`` pairs in ``nameless_rows``'s order."""
    return sorted(pairs, key=_none_last)


def check_decoding_in_parts(target: Target, dataset: Dataset, rows_per_part: int = 97) -> int:
    """The largest answer type (high-cpu-all) fetched from the real server and decoded in parts of
    ``rows_per_part`` rows (held by columns, as a large answer is) equals the answer decoded at once
    and the oracle's. Returns the rows of the answer (so a test can insist it spanned parts)."""
    query = generate_queries(DataRange.of(dataset), ["high-cpu-all"], 1, seed=9)[0]
    text = target.render(query)
    session = target.session()
    oracle = Oracle(dataset)
    try:
        at_once = Answer.build(query.query_type, session.decode(session.fetch(text)), query.fields)
        parts = session.decode_parts(session.fetch(text), rows_per_part=rows_per_part)
        in_parts = Answer.adopt_parts(query.query_type, parts, query.fields)
        expected = oracle.answer(query)
    finally:
        session.close()
        oracle.close()
    assert compare(at_once, in_parts).ok and compare(expected, in_parts).ok
    assert list(in_parts.rows) == at_once.rows
    return len(at_once.rows)


def check_refresh_after_append(target: Target, dataset: Dataset) -> None:
    """An hour appended after the dataset reaches the target's rollup (one row per host and
    minute, checked by ``measure_refresh``); a retried queries phase finds those rows and removes
    them, leaving the dataset's rows."""
    from tsbench.measure.rollup import measure_refresh, remove_appended

    refresh = measure_refresh(target, dataset, target.name)
    assert refresh.rows_appended == dataset.scale * 360 and refresh.rollup_rows == dataset.scale * 60
    assert refresh.append_s > 0 and refresh.refresh_s >= 0 and refresh.note, refresh
    assert target.row_count("cpu") == dataset.rows["cpu"] + refresh.rows_appended
    remove_appended(target, dataset, target.name)
    assert target.row_count("cpu") == dataset.rows["cpu"]


def check_all_queries(
    target: Target,
    dataset: Dataset,
    per_type: int = 3,
    seed: int = 5,
    render: Callable[[LogicalQuery], str | None] | None = None,
) -> dict[str, int]:
    """Run ``per_type`` queries of every supported type of the dataset's use case, as ``render``
    (default ``target.render``) writes them; a query it renders as None is not run. Every answer
    must match the oracle.

    Returns the number of non-empty answers per type run (so a test can insist the check was not
    vacuous).
    """
    names = [n for n in types_of(dataset.use_case.query_families) if n not in target.capabilities.unsupported]
    return answers_against_the_oracle(target, dataset, names, per_type, seed, render)


def check_ycsb_ts(target: Target, dataset: Dataset) -> None:
    """YCSB-TS records (study D): every record loaded and counted, each of the five operations equal
    to the oracle and none of them vacuous."""
    records = dataset.rows["usermetric"]
    assert load_all(target, dataset) == records
    assert target.count_rows("usermetric", dataset.complete_fields("usermetric")) == records
    nonempty = check_all_queries(target, dataset, per_type=4, seed=9)
    assert set(nonempty) == {name for name, q in QUERY_TYPES.items() if q.family == "ycsb-ts"}
    empty = [name for name, count in nonempty.items() if count == 0]
    assert not empty, f"no non-empty answer for {empty}"
