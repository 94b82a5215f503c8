"""The nightly history as series: one per target × metric × use case × scale × point, one value per
run, oldest first, each value with what its run was (``RunFacts``) so a change can name what
differed between the runs on either side of it.

Runs are comparable when they are instances of the same study (or both ad hoc) at the same use
case, scale and point (a sweep's other axes); everything else a run records — versions, the
databases' settings, the run's other parameters, tsbench's commit, the machine, the client
libraries — is not part of the key but of ``RunFacts``: when it changes, a change point next to it
names it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from tsbench.changes.metrics import Metric, figures
from tsbench.machine_state import material_differences
from tsbench.results.change_records import Difference, RunRef
from tsbench.results.model import MachineState, RunResult

# Run parameters that say which series a run is on (the key), or that always differ between runs.
KEY_PARAMETERS = frozenset({"use_case", "scale"})
MACHINE_FACTS = ("cpu_model", "cores", "memory_bytes", "os", "kernel", "python")


@dataclass(frozen=True)
class SeriesKey:
    """Which series: ``origin`` is the study's name ("" for ad-hoc and nightly runs)."""

    origin: str
    use_case: str
    scale: int | None
    point: str  # the sweep's other axes ("" in a plain comparison)
    target: str
    metric: Metric


@dataclass(frozen=True)
class RunFacts:
    """What one run was, for one target, as ``what`` → value text: the target's version and
    settings, the run's parameters, tsbench's commit, the machine and the client libraries; and
    the machine's measured state as the run started (``state``; None: not recorded)."""

    facts: Mapping[str, str]
    state: MachineState | None = None

    def declared_differences(self, later: RunFacts) -> list[Difference]:
        """What was set differently from ``self`` to ``later`` (versions, settings, tsbench's commit,
        parameters, machine, clients, dataset), in a stable order (versions first)."""
        keys = sorted(set(self.facts) | set(later.facts), key=_fact_order)
        return [
            Difference(what=key, before=self.facts.get(key, ""), after=later.facts.get(key, ""))
            for key in keys
            if self.facts.get(key, "") != later.facts.get(key, "")
        ]

    def differences(self, later: RunFacts) -> list[Difference]:
        """``declared_differences``, then the machine's state where a figure moved beyond its
        tolerance (``machine_state``): measured, so it differs a little between any two runs."""
        found = self.declared_differences(later)
        if self.state is not None and later.state is not None:
            found += [
                Difference(what=f"machine state {name}", before=old, after=new)
                for name, old, new in material_differences(self.state, later.state)
            ]
        return found


def _fact_order(what: str) -> tuple[int, str]:
    order = ("version", "setting", "tsbench commit", "parameter", "machine", "client", "dataset")
    rank = next((i for i, word in enumerate(order) if word in what), len(order))
    return rank, what


@dataclass(frozen=True)
class SeriesValue:
    """One run's value on a series."""

    run: RunRef
    value: float
    facts: RunFacts


@dataclass
class Series:
    key: SeriesKey
    values: list[SeriesValue] = field(default_factory=list)


@dataclass(frozen=True)
class HistoryRun:
    """One point of one run as history: the run store's id for it and its result."""

    run_id: str
    result: RunResult
    origin: str = ""


def build_series(runs: Iterable[HistoryRun]) -> list[Series]:
    """Every series the runs have, each value in run order (creation time, then id); a run seen
    twice (the same id and point) counts once."""
    ordered = sorted(runs, key=lambda r: (r.result.created_at, r.run_id))
    by_key: dict[SeriesKey, Series] = {}
    seen: set[tuple[str, str]] = set()
    for run in ordered:
        point = _point_name(run.result)
        if (run.run_id, point) in seen:
            continue
        seen.add((run.run_id, point))
        ref = RunRef(run_id=run.run_id, created_at=run.result.created_at, point=point)
        facts: dict[str, RunFacts] = {}  # one per target, shared by its metrics' values
        for target, metric, value in _values(run.result):
            key = SeriesKey(
                run.origin, _use_case(run.result), _scale(run.result), _axes(run.result), target, metric
            )
            if target not in facts:
                facts[target] = run_facts(run.result, target)
            series = by_key.setdefault(key, Series(key))
            series.values.append(SeriesValue(ref, value, facts[target]))
    return list(by_key.values())


def _values(result: RunResult) -> Iterator[tuple[str, Metric, float]]:
    for target, body in result.targets.items():
        for metric, value in figures(body):
            yield target, metric, value


def _use_case(result: RunResult) -> str:
    return str(result.spec.get("use_case") or "")


def _scale(result: RunResult) -> int | None:
    scale = result.spec.get("scale")
    return int(scale) if scale is not None else None


def _point_name(result: RunResult) -> str:
    return result.point.name if result.point is not None else result.scale_dir


def _axes(result: RunResult) -> str:
    """The point's swept axes other than the scale, as ``axis=value`` text ("" when none)."""
    axes = result.point.axes if result.point is not None else {}
    return ", ".join(f"{axis}={value}" for axis, value in sorted(axes.items()) if axis != "scale")


def run_facts(result: RunResult, target: str) -> RunFacts:
    """What ``result`` was for ``target`` (``RunFacts``)."""
    facts: dict[str, str] = {}
    body = result.targets.get(target)
    provision = body.provision if body is not None else None
    if provision is not None:
        facts[f"{target} version"] = provision.version
        facts |= {f"{target} setting {k}": v for k, v in _flat(provision.settings).items()}
    facts |= {
        f"parameter {k}": v for k, v in _flat(result.spec).items() if k.split(".")[0] not in KEY_PARAMETERS
    }
    facts["tsbench commit"] = result.tsbench_commit
    machine = result.machine
    facts |= {f"machine {name}": _text(getattr(machine, name)) for name in MACHINE_FACTS}
    facts |= {f"client {name}": version for name, version in result.clients.items()}
    facts["dataset generator"] = result.dataset.generator_version
    return RunFacts({k: v for k, v in facts.items() if v != ""}, result.machine_state)


def _flat(values: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """Nested settings as ``a.b`` → text."""
    out: dict[str, str] = {}
    for key, value in values.items():
        if isinstance(value, Mapping):
            out |= _flat(value, f"{prefix}{key}.")
        else:
            out[f"{prefix}{key}"] = _text(value)
    return out


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return ", ".join(_text(v) for v in value)
    return str(value)
