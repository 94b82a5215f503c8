"""Caveats: the honest limits of a run, as a table of rules.

Each ``Rule`` names what it looks at (``items``: the targets, the load rows, or the run once), when
it applies to an item (``when``) and what it then says (``text``). ``caveats`` applies the rules in
the order of ``RULES`` and lists the caveats most serious first (bad, warn, info; stable within).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tsbench.report import fmt
from tsbench.report.sections import client_share
from tsbench.report.sections.common import FEW_QUERIES, FEW_SAMPLES, SMALL_ROWS, Caveat, join
from tsbench.report.sections.load import LoadRow, LoadSection
from tsbench.report.sections.queries import QueriesSection, QueryCell
from tsbench.report.sections.status import TargetView
from tsbench.report.spread import CV_LIMIT
from tsbench.results.model import CacheReset, RunResult, TargetResult
from tsbench.spec import RunSpec

SEVERITY_ORDER = {"bad": 0, "warn": 1, "info": 2}


@dataclass(frozen=True)
class Run:
    """What the rules read: the result, its spec and the sections computed before the summary."""

    result: RunResult
    targets: Sequence[TargetView]
    load: LoadSection
    queries: QueriesSection

    @property
    def spec(self) -> Mapping[str, Any]:
        return self.result.spec

    def body(self, target: TargetView) -> TargetResult:
        return self.result.targets[target.name]


@dataclass(frozen=True)
class Rule:
    """A caveat rule: for each of ``items`` where ``when`` holds, ``text`` at ``severity``."""

    severity: str  # bad | warn | info
    when: Callable[[Run, Any], bool]
    text: Callable[[Run, Any], str]
    items: Callable[[Run], Iterable[Any]] = lambda run: (run,)  # default: the run once


def _targets(run: Run) -> Iterable[TargetView]:
    return run.targets


def _failure(run: Run, target: TargetView) -> str:
    if target.status == "failed":
        return (
            f"{target.label} failed in {target.failed_phase}: {target.error}. "
            "It is left out of every comparison after that phase."
        )
    return f"{target.label}: {target.problem}."


def _bad_cells(run: Run) -> Iterable[tuple[TargetView, list[tuple[str, QueryCell]]]]:
    """Per target, the query types it ran with errors or wrong answers."""
    for target in run.targets:
        yield (
            target,
            [
                (row.type, cell)
                for row in run.queries.rows
                for item, cell in row.cells
                if item.name == target.name and cell.kind == "ok" and (cell.errors or cell.mismatches)
            ],
        )


def _bad_cells_text(run: Run, item: tuple[TargetView, list[tuple[str, QueryCell]]]) -> str:
    target, bad = item
    described = [
        f"{qtype} ({cell.errors} error(s), {cell.mismatches} wrong answer(s))" for qtype, cell in bad
    ]
    return f"{target.label}: {join(described)}. Those types do not count as wins; see Answer checks."


def _unsupported_in_run(run: Run) -> Iterable[tuple[TargetView, dict[str, list[str]]]]:
    """Per target, the types of this run it cannot express, grouped by reason."""
    for target in run.targets:
        reasons: dict[str, list[str]] = {}
        for qtype, reason in target.unsupported.items():
            if qtype in run.queries.types:
                reasons.setdefault(reason, []).append(qtype)
        yield target, reasons


def _unsupported_text(run: Run, item: tuple[TargetView, dict[str, list[str]]]) -> str:
    target, reasons = item
    text = "; ".join(f"{join(types)}: {reason}" for reason, types in reasons.items())
    return f"{target.label} does not run {text}."


def _cold_not_cold(run: Run, target: TargetView) -> bool:
    if run.result.queries == 0 or RunSpec.recorded(run.spec).live_only:  # nothing ran cold
        return False
    reset = run.body(target).cache_reset
    return reset is not None and not (reset.restarted and reset.os_cache_dropped)


def _cold_text(run: Run, target: TargetView) -> str:
    reset = run.body(target).cache_reset or CacheReset()
    if not reset.restarted:
        note = reset.note if reset.has("note") else "no reason given"
        return f"{target.label} was not restarted before the cold pass ({note}): its cold figures are warm."
    return (
        f"{target.label}: the OS page cache was not dropped before the cold pass "
        f"({reset.os_cache_note}); cold figures may include cached data."
    )


def _rows_total(run: Run) -> int:
    return run.result.dataset.rows_total or 0


def _few_samples(run: Run) -> list[str]:
    """Targets whose median load trial has fewer than ``FEW_SAMPLES`` resource samples."""
    return [
        r.target.label
        for r in run.load.rows
        if r.resources is not None and (r.resources.samples or 0) < FEW_SAMPLES
    ]


def _incomplete_load_text(run: Run, row: LoadRow) -> str:
    return f"{row.target.label}: {row.note}."


def _same_machine_text(run: Run, _: Any) -> str:
    cores = run.result.machine.cores
    return (
        "Database servers and the benchmark client ran on the same machine"
        + (f" ({cores} cores)" if cores else "")
        + ", one database at a time, competing for the same CPUs (as in study A)."
    )


def _load_spread_text(run: Run, row: LoadRow) -> str:
    assert row.spread is not None and row.spread.cv is not None
    s = row.spread
    return (
        f"{row.target.label}'s load rate varied by CV {s.cv:.1%} over {s.n} trials (min / median / "
        f"max {fmt.rate(s.min)} / {fmt.rate(s.median)} / {fmt.rate(s.max)} rows/s), above "
        f"{CV_LIMIT:.0%}: differences smaller than that spread are not findings."
    )


def _noisy_queries(run: Run) -> Iterable[tuple[TargetView, list[tuple[str, float]]]]:
    """Per target, the query types whose hot passes' queries/s vary above ``CV_LIMIT``."""
    for target in run.targets:
        noisy = []
        for row in run.queries.rows:
            cell = row.cell(target)
            if cell is not None and cell.spread is not None and cell.spread.flagged:
                noisy.append((row.type, cell.spread.cv or 0.0))
        yield target, noisy


def _noisy_queries_text(run: Run, item: tuple[TargetView, list[tuple[str, float]]]) -> str:
    target, noisy = item
    listed = join([f"{qtype} (CV {cv:.0%})" for qtype, cv in noisy])
    return (
        f"{target.label}'s queries/s varied above {CV_LIMIT:.0%} between hot passes for {listed}: "
        "treat their rankings with care."
    )


def _in_containers(run: Run, _: Any) -> bool:
    remote = [t for t in run.targets if t.runtime in ("aws", "docker")]
    return bool(remote) and RunSpec.recorded(run.spec).runtime == "docker"


RULES: tuple[Rule, ...] = (
    Rule("bad", lambda run, t: not t.ok, _failure, _targets),
    Rule(
        "bad",
        lambda run, row: row.trial is not None and not row.complete,
        _incomplete_load_text,
        lambda run: run.load.rows,
    ),
    Rule("bad", lambda run, item: bool(item[1]), _bad_cells_text, _bad_cells),
    Rule("warn", lambda run, item: bool(item[1]), _unsupported_text, _unsupported_in_run),
    Rule(
        "info",
        lambda run, t: t.provisioned and bool(t.compression),
        lambda run, t: f"{t.label} compression: {t.compression}.",
        _targets,
    ),
    Rule(
        "warn",
        lambda run, t: t.durable is False,
        lambda run, t: (
            f"{t.label}'s flush makes data visible, not durable (no fsync/WAL wait) "
            "— its load rate is not like-for-like with durable targets."
        ),
        _targets,
    ),
    Rule("warn", _cold_not_cold, _cold_text, _targets),
    Rule(
        "warn",
        lambda run, row: row.spread is not None and row.spread.flagged,
        _load_spread_text,
        lambda run: run.load.rows,
    ),
    Rule("warn", lambda run, item: bool(item[1]), _noisy_queries_text, _noisy_queries),
    Rule(
        "info",
        lambda run, _: 0 < _rows_total(run) < SMALL_ROWS,
        lambda run, _: (
            f"Small dataset ({fmt.integer(_rows_total(run))} rows): fixed costs (connections, "
            "commits, planning) weigh heavily; do not set these figures beside the published studies' "
            "(millions of rows, bigger machines)."
        ),
    ),
    Rule(
        "info",
        lambda run, _: 0 < RunSpec.recorded(run.spec).queries_per_type < FEW_QUERIES,
        lambda run, _: (
            f"Only {run.spec['queries_per_type']} queries per type and pass: p95/p99 are "
            "interpolated from a handful of latencies and say little."
        ),
    ),
    Rule(
        "info",
        lambda run, _: RunSpec.recorded(run.spec).live_only,
        lambda run, _: (
            "A live-only run (live_only): the history was loaded once and queried only in the live "
            "phase, open-loop while ingest ran; there are no cold or hot closed-loop figures."
        ),
    ),
    Rule(
        "info",
        lambda run, _: RunSpec.recorded(run.spec).trials == 1,
        lambda run, _: "Each load ran once (trials = 1): no median over trials, no spread.",
    ),
    Rule(
        "info",
        lambda run, _: bool(_few_samples(run)),
        lambda run, _: (
            f"The load of {join(_few_samples(run))} took under {FEW_SAMPLES} samples of the "
            "0.5 s resource sampler: its load CPU/memory figures are rough."
        ),
    ),
    Rule("info", lambda run, _: RunSpec.recorded(run.spec).runtime == "local", _same_machine_text),
    Rule(
        "info",
        lambda run, _: RunSpec.recorded(run.spec).runtime == "aws",
        lambda run, _: (
            "Each database ran on its own cloud host provisioned for this run (see Environment); "
            "the benchmark client ran on the orchestrator and reached it over the network, so latencies "
            "include the network round trip."
        ),
    ),
    Rule(
        "info",
        _in_containers,
        lambda run, _: (
            "Databases ran in containers (official images, pinned tags in Environment) on the "
            "Docker engine's host."
        ),
    ),
)


def caveats(
    result: RunResult, targets: Sequence[TargetView], load: LoadSection, queries: QueriesSection
) -> list[Caveat]:
    """Honest limits of this run, most serious first (severity bad, warn, info);
    the rules of ``RULES``, then the client-share caveats of ``client_share.client_caveats``."""
    run = Run(result, targets, load, queries)
    out = [
        Caveat(rule.severity, rule.text(run, item))
        for rule in RULES
        for item in rule.items(run)
        if rule.when(run, item)
    ]
    out += client_share.client_caveats(run.spec, load.rows, queries.client)
    return sorted(out, key=lambda item: SEVERITY_ORDER[item.severity])
