"""The query checks the targets' tests share: every answer of some types against the oracle
(``answers_against_the_oracle``), and the iot check — each supported iot type, rendered by the
target and run on its real server, answers exactly as the oracle does, and the check is not vacuous.

At test sizes (12 trucks × 1 day) three TSBS types rarely find anything: a truck's last fuel_state is
seldom under 0.1, its last load seldom over 90 %, and no truck averages under 1 km/h for 10 minutes.
So the check also runs *probes*: the same kinds with thresholds that hold for some trucks (and one
where TSBS's integer hours differ from real ones), registered
as types of their own while the check runs (a dialect must take its thresholds from the query's type,
never write TSBS's constants itself).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace

from tsbench.targets.base import Target
from tsbench.workload.answers import Answer, compare
from tsbench.workload.dataset import Dataset
from tsbench.workload.iot_query_types import FAMILY
from tsbench.workload.kept import kept_view
from tsbench.workload.oracle import Oracle
from tsbench.workload.queries import DataRange, LogicalQuery, generate_queries
from tsbench.workload.query_types import QUERY_TYPES, types_of

PROBES = {
    "low-fuel": 0.6,
    "high-load": 0.5,
    "stationary-trucks": 40.0,
    # at 1 km/h nearly every 10-minute bucket is driving (144 a day, a whole 24 h), so integer and
    # real division of count / 6 agree; at 40 km/h they do not
    "avg-daily-driving-duration": 40.0,
    "daily-activity": 2.0,  # buckets with some faults count too
}
# Types whose answers are empty for every query at test sizes (the probes stand in for them).
RARELY_ANSWERED = frozenset({"low-fuel", "high-load", "stationary-trucks"})


def iot_types() -> list[str]:
    """The iot types of the catalogue (the probes too, while registered)."""
    return types_of([FAMILY])


@contextmanager
def probe_types() -> Iterator[list[str]]:
    """Register the probes (``<type>-probe``) for the duration of the block."""
    names = []
    for name, threshold in PROBES.items():
        probe = replace(QUERY_TYPES[name], name=f"{name}-probe", threshold=threshold)
        QUERY_TYPES[probe.name] = probe
        names.append(probe.name)
    try:
        yield names
    finally:
        for name in names:
            QUERY_TYPES.pop(name, None)


def supported(target: type[Target] | Target, names: list[str]) -> list[str]:
    unsupported = target.capabilities.unsupported
    return [name for name in names if name.removesuffix("-probe") not in unsupported]


def answered_types(target: type[Target] | Target) -> set[str]:
    """The iot types and probes ``check_iot_queries`` runs on ``target`` (those it supports)."""
    names = [*iot_types(), *(f"{name}-probe" for name in PROBES)]
    return set(supported(target, names))


def answers_against_the_oracle(
    target: Target,
    dataset: Dataset,
    names: list[str],
    per_type: int,
    seed: int,
    render: Callable[[LogicalQuery], str | None] | None = None,
) -> dict[str, int]:
    """Run ``per_type`` queries of each of ``names`` as ``render`` (default ``target.render``) writes
    them (a query rendered as None is not run); every answer must equal the oracle's. Returns the
    non-empty answers per type (so a caller can insist the check was not vacuous)."""
    view = kept_view(target.capabilities.keeps, dataset.copies)  # the rows the target keeps
    oracle, session = Oracle(dataset, keeps=view), target.session()
    failures: list[str] = []
    nonempty: dict[str, int] = {}
    try:
        for query in generate_queries(DataRange.of(dataset), names, per_type, seed):
            text = (render or target.render)(query)
            if text is None:
                continue
            actual = Answer.build(query.query_type, session.execute(text), query.fields)
            expected = oracle.answer(query)
            result = compare(expected, actual)
            if not result.ok:
                diff = result.diff[:2]
                failures.append(f"{query.id}: {result.reason}\n  query: {text}\n  diff: {diff}")
            nonempty[query.type] = nonempty.get(query.type, 0) + bool(expected.rows)
    finally:
        session.close()
        oracle.close()
    assert not failures, "answers differ from the oracle:\n" + "\n".join(failures)
    return nonempty


def check_iot_queries(
    target: Target,
    dataset: Dataset,
    per_type: int = 6,
    seed: int = 5,
    render: Callable[[LogicalQuery], str] | None = None,
) -> dict[str, int]:
    """Run ``per_type`` queries of every iot type and probe the target supports; every answer
    must equal the oracle's, and every type and probe except ``RARELY_ANSWERED`` must have a
    non-empty answer. Returns the non-empty answers per type."""
    with probe_types():
        names = supported(target, iot_types())  # the probes are iot types while registered
        nonempty = answers_against_the_oracle(target, dataset, names, per_type, seed, render)
    vacuous = [name for name in names if name not in RARELY_ANSWERED and not nonempty.get(name)]
    assert not vacuous, f"no query of {vacuous} found anything: the check proves nothing for them"
    return nonempty
