"""The typed result model: the contract between measuring (``tsbench.run`` writes phase records,
``tsbench.results.phase_records``), collecting (``result.json``, ``comparison.json``), validation
and the report. Every record is a ``tsbench.results.record.Record``: its fields are the JSON keys
written, older folders stay readable, ``to_json`` writes back what was read.
"""

from __future__ import annotations

from typing import Any

from tsbench.results.cost_records import MachinePrice, PriceLine
from tsbench.results.live_records import LivePhase
from tsbench.results.phase_records import (
    AnswerChecks,
    CacheReset,
    Capabilities,
    CompressionFigures,
    FootprintFigures,
    FootprintPhase,
    LeaseTaken,
    LoadPhase,
    LoadTrial,
    PhaseError,
    Prepare,
    Provision,
    QueriesPhase,
    QueryErrors,
    QueryStats,
    Resources,
    RollupFigures,
    RollupRefreshFigures,
    Teardown,
)
from tsbench.results.record import Number, Record

__all__ = [
    "AnswerChecks",
    "CacheReset",
    "Capabilities",
    "Comparison",
    "CompressionFigures",
    "DatasetFacts",
    "Expectation",
    "FootprintFigures",
    "FootprintPhase",
    "LeaseTaken",
    "LoadPhase",
    "LoadTrial",
    "MachineFacts",
    "MachinePrice",
    "Number",
    "PhaseError",
    "Plan",
    "PointFacts",
    "PointRun",
    "Prepare",
    "PriceLine",
    "Provision",
    "QueriesPhase",
    "QueryErrors",
    "QueryStats",
    "Record",
    "Rejection",
    "Resources",
    "RollupFigures",
    "RollupRefreshFigures",
    "RunResult",
    "SuiteOutcome",
    "TargetResult",
    "Teardown",
    "Validation",
    "ValidationSummary",
]


class TargetResult(Record):
    """One target's phases in a run (``result.json``'s ``targets.<name>``) and its status:
    ``ok`` (queries ran), ``failed`` (``failed_phase``, ``error``) or ``incomplete``
    (``stopped_before``: the first phase that never ran)."""

    status: str = "incomplete"
    failed_phase: str = ""
    error: str = ""
    stopped_before: str | None = None
    acquire_machine: LeaseTaken | None = None
    provision: Provision | None = None
    prepare: Prepare | None = None
    load: LoadPhase | None = None
    footprint: FootprintPhase | None = None
    cache_reset: CacheReset | None = None
    queries: QueriesPhase | None = None
    live: LivePhase | None = None
    teardown: Teardown | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def clean_hot_qps(self, qtype: str) -> float | None:
        """Hot queries/s of ``qtype``; None without queries, or with errors or wrong answers."""
        stats = self.queries.hot.get(qtype) if self.queries is not None else None
        return stats.qps if stats is not None and stats.clean() else None


class PointFacts(Record):
    """Which point of a comparison a run folder is (``run.json``'s ``point``): its folder name, the
    sweep axes' values that vary (axis → value; empty in a plain comparison), a label for people
    and its server group (the point whose server it shares; itself when it has its own)."""

    name: str = ""
    axes: dict[str, Any] = {}  # axis → its value here (a number, or an order's name)
    label: str = ""
    server_group: str = ""


class Plan(Record):
    """``plan.json``: a comparison's validated parameters, written before any work: its points in
    order (``PointFacts``) with one RunSpec each (``specs``: its JSON by point name), the scales,
    targets and sweep axes that vary, a summary of its cost, and the study it is an instance of (the
    study file's JSON as read when the run was planned; None for an ad-hoc run)."""

    format: str = ""
    run_id: str = ""
    created_at: str = ""
    scales: list[int] = []
    targets: list[str] = []
    varied: list[str] = []
    study: dict[str, Any] | None = None  # ``tsbench.studies.Study``'s JSON
    summary: str = ""
    points: list[PointFacts] = []
    specs: dict[str, dict[str, Any]] = {}  # ``RunSpec.model_dump()`` by point name

    def server_groups(self) -> list[list[str]]:
        """The points' names by server group, in the order the groups first appear."""
        groups: dict[str, list[str]] = {}
        for point in self.points:
            groups.setdefault(point.server_group, []).append(point.name)
        return list(groups.values())


class DatasetFacts(Record):
    """The dataset a point loads (``run.json``'s ``dataset``): its id and path on the worker that
    made it, whether it was reused from the cache, seconds to generate it, rows per measurement
    and in all, every file's sha256 and the generator's version; ``kept_rows``: the rows a streamed
    dataset's files keep (its queries' windows; None: stored whole)."""

    id: str = ""
    path: str = ""
    reused: bool | None = None
    generate_s: Number | None = None
    rows: dict[str, int] = {}
    rows_total: int | None = None
    files_sha256: list[str] = []
    generator_version: str = ""
    kept_rows: int | None = None


class MachineFacts(Record):
    """The machine a point ran on (``tsbench.machine.machine_facts``): a hash of its name, never the
    name; cores and memory (bytes); operating system, kernel, Python."""

    hostname_hash: str = ""
    cpu_model: str = ""
    cores: int | None = None
    memory_bytes: int | None = None
    os: str = ""
    kernel: str = ""
    python: str = ""


class MachineState(Record):
    """The machine's state as a point started (``tsbench.machine_state``): seconds since boot, the
    1-minute load, the share of all cores busy and stolen (%), µs to fault in a fresh page, ms of a
    fixed CPU probe. None: not measured (results from before it was)."""

    uptime_s: Number | None = None
    load_1min: Number | None = None
    busy_percent: Number | None = None
    steal_percent: Number | None = None
    fresh_page_us: Number | None = None
    cpu_probe_ms: Number | None = None


class PointRun(Record):
    """``run.json``: one point of a comparison before its targets ran: the spec (``RunSpec``'s
    JSON), the dataset, the machine and client versions, which point it is, and the oracle's
    facts once the reference answers exist."""

    format: str = ""
    run_id: str = ""
    scale_dir: str = ""
    created_at: str = ""
    spec: dict[str, Any] = {}  # RunSpec.model_dump(): read through ``RunSpec.recorded`` (typed)
    dataset: DatasetFacts = DatasetFacts()
    machine: MachineFacts = MachineFacts()
    machine_state: MachineState | None = None
    clients: dict[str, str] = {}
    tsbench_commit: str = ""  # tsbench's own commit (``machine.source_commit``); empty: not recorded
    point: PointFacts | None = None
    oracle_reused: bool | None = None
    oracle_s: Number | None = None
    queries: int | None = None


class RunResult(PointRun):
    """``result.json``: one point (a scale, or a sweep's point) with every target's records, and the
    price per hour of one of its hosts (``price``; None in results collected before prices were)."""

    finished_at: str = ""
    targets: dict[str, TargetResult] = {}
    price: MachinePrice | None = None


class Comparison(Record):
    """``comparison.json``: every point's result of one comparison (keyed by ``point_key``: the
    scale of a plain comparison), the sweep axes that vary, the study it is an instance of, and the
    targets that failed."""

    format: str = ""
    run_id: str
    created_at: str | None = None
    finished_at: str | None = None
    use_case: str | None = None
    targets: list[str] = []
    scales: list[int] = []
    varied: list[str] = []
    study: str | None = None  # the study's name (plan.json holds the study), None: ad hoc
    failed_targets: list[str] = []
    results: dict[str, RunResult] = {}


class Rejection(Record):
    """``rejected.json``: a run refused before any work (``task``: the step that refused it, e.g.
    ``validate_params``; ``reason``: its message, every bad field named). Its folder holds nothing
    else, so no run index lists it; the notification names the reason from it."""

    task: str = ""
    reason: str = ""
    rejected_at: str = ""


class Expectation(Record):
    """One expectation's outcome in ``validation.json``."""

    expectation: str = ""
    success: bool | None = None
    observed: Any = None
    details: Any = None
    skipped: bool = False


class SuiteOutcome(Record):
    """One suite's outcome in ``validation.json`` (``critical``: its failures fail the run)."""

    name: str = "?"
    critical: bool | None = True
    success: bool | None = None
    status: str = ""
    results: list[Expectation] = []


class Validation(Record):
    """``validation.json`` (``tsbench.validation``): the verdict, its reasons and every suite."""

    format: str = ""
    run_id: str = ""
    validated_at: str = ""
    success: bool = False
    critical_failed: list[Any] = []
    warnings: list[Any] = []
    seconds: Number | None = None
    great_expectations_version: str = ""
    suites: list[SuiteOutcome] = []
    scales: dict[str, dict[str, Any]] = {}  # per scale: its folder, success, counts (as written)


class ValidationSummary(Record):
    """What an index line and a stored result say of a validation (``warnings``: how many)."""

    success: bool | None = None
    critical_failed: list[Any] = []
    warnings: int = 0

    @classmethod
    def of(cls, validation: Validation) -> ValidationSummary:
        return cls(
            success=bool(validation.success),
            critical_failed=list(validation.critical_failed),
            warnings=len(validation.warnings),
        )
