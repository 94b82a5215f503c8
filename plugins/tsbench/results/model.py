"""The typed result model: the contract between measuring (``tsbench.run.target_phases`` writes phase records),
collecting (``result.json``, ``comparison.json``), validation and the report.

Every record is a frozen pydantic model whose fields are the JSON keys the runner writes.
``from_json`` accepts every results folder written so far (keys a record does not declare are kept
verbatim, keys an older run did not write keep their defaults) and ``to_json`` gives back exactly
the JSON that was read: only the keys that were present (or set by the writer), unknown ones
included. Units are in the key names (``_s`` seconds, ``_ms`` milliseconds, ``_bytes`` bytes,
``_per_s`` per second).
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict

Number = int | float  # as written: an int stays an int, a float a float


class Record(BaseModel):
    """A JSON object with declared keys; undeclared keys are kept (``extra``) and written back."""

    model_config = ConfigDict(frozen=True, extra="allow")

    @classmethod
    def from_json(cls, body: Any) -> Self:
        return cls.model_validate(body)

    def to_json(self) -> dict[str, Any]:
        """The keys that were read or set, nested records as JSON objects."""
        return self.model_dump(exclude_unset=True)

    def has(self, key: str) -> bool:
        """Whether the JSON had ``key`` (a declared key keeps its default when absent)."""
        return key in self.model_fields_set

    def written(self, key: str) -> Any:
        """``key``'s value as the JSON had it: None when absent (not the declared default)."""
        return getattr(self, key) if self.has(key) else None


class Resources(Record):
    """Server CPU and memory over a phase (0.5 s sampler): percent of one core, bytes of RSS."""

    samples: int | None = None
    cpu_percent_mean: Number | None = None
    cpu_percent_max: Number | None = None
    rss_bytes_mean: Number | None = None
    rss_bytes_max: Number | None = None


class Capabilities(Record):
    """A target's declared capabilities as recorded at provisioning (``Target.capabilities``)."""

    durable: bool | None = None
    compression: str = ""
    rollups: str = ""
    unsupported: dict[str, str] = {}
    schema_note: str = ""
    row_model_note: str = ""  # rows its data model cannot keep as they are (``Target.capabilities``)


class Provision(Record):
    """``provision.json``: where and what the server is (version, settings, runtime facts)."""

    runtime: str = ""
    seconds: Number | None = None
    endpoint: dict[str, Any] = {}
    server_binary: str = ""
    config: str = ""
    placement: dict[str, Any] = {}
    capabilities: Capabilities = Capabilities()
    version: str = ""
    settings: dict[str, Any] = {}
    wall_s: Number | None = None


class LoadTrial(Record):
    """One timed load of the whole dataset (``tsbench.measure.load``), with server resources and
    the row counts found afterwards per measurement."""

    rows: int = 0
    metrics: int = 0
    seconds: Number = 0.0
    write_seconds: Number | None = None
    flush_seconds: Number | None = None
    rows_per_s: Number = 0.0
    metrics_per_s: Number = 0.0
    workers: int | None = None
    batch_size: int | None = None
    source: str | None = None  # where the bodies came from (wire cache, Arrow batches)
    client_cpu_s: Number | None = None
    client_share: Number | None = None
    resources: Resources | None = None
    row_counts: dict[str, int] = {}


class LoadPhase(Record):
    """``load.json``: every trial; ``median_rows_per_s`` only when every row count agreed."""

    trials: list[LoadTrial] = []
    row_count_ok: bool = False
    median_rows_per_s: Number | None = None
    wire: dict[str, Any] | None = None
    wall_s: Number | None = None
    # rows per measurement the target's data model keeps, when fewer than the dataset's (iot:
    # ``Capabilities.stores_fieldless_rows`` …); empty: every row of the dataset
    expected_rows: dict[str, int] = {}

    def median_trial(self) -> tuple[LoadTrial | None, int]:
        """The median trial by rows/s (the one ``median_rows_per_s`` names) and its 1-based number."""
        if not self.trials:
            return None, 0
        order = sorted(range(len(self.trials)), key=lambda i: self.trials[i].rows_per_s)
        index = order[len(order) // 2]
        return self.trials[index], index + 1


class FootprintFigures(Record):
    """Storage at one moment: the database's own accounting (``bytes``) and the data folders' disk
    bytes; ``note`` says what the accounting counts."""

    bytes: Number | None = None
    note: str = ""
    parts: dict[str, Number] = {}
    disk_bytes: Number | None = None


class CompressionFigures(Record):
    """Compression after the load (run option ``compress_after_load``): units compressed (chunks),
    wall seconds of the step, the compressed data's bytes before and after (the database's own
    accounting), how, and the whole footprint right after it."""

    units: int = 0
    seconds: Number = 0.0
    bytes_before: Number = 0
    bytes_after: Number = 0
    note: str = ""
    footprint: FootprintFigures | None = None


class FootprintPhase(Record):
    """``footprint.json`` (the settle phase): storage right after the load, the compression where
    the run asked for it and the target can, and storage after settling."""

    after_load: FootprintFigures | None = None
    compression: CompressionFigures | None = None
    after_settle: FootprintFigures | None = None
    settle_seconds: Number | None = None
    wall_s: Number | None = None


class CacheReset(Record):
    """``cache_reset.json``: the restart and OS page cache drop before the cold pass."""

    restarted: bool = False
    was_down: bool | None = None
    os_cache_dropped: bool = False
    os_cache_note: str = ""
    note: str = ""
    stop_s: Number | None = None
    start_s: Number | None = None
    wall_s: Number | None = None


class QueryStats(Record):
    """One query type in one pass (``tsbench.measure.stats``): latencies in ms, wall time, qps."""

    count: int | None = None
    errors: int | None = None
    mismatches: int | None = None
    min_ms: Number | None = None
    p50_ms: Number | None = None
    mean_ms: Number | None = None
    p90_ms: Number | None = None
    p95_ms: Number | None = None
    p99_ms: Number | None = None
    max_ms: Number | None = None
    stddev_ms: Number | None = None
    wall_s: Number | None = None
    qps: Number | None = None
    client_cpu_s: Number | None = None  # the benchmark client's CPU-seconds over the passes
    client_share: Number | None = None  # of the machine's CPU (0–1)

    def clean(self) -> bool:
        """Answered every query without error or wrong answer."""
        return bool(self.count) and not self.errors and not self.mismatches


class AnswerChecks(Record):
    """Answers compared with the oracle's over every pass; up to 20 mismatches kept as samples."""

    checked: int = 0
    agreed: int = 0
    mismatches: int = 0
    mismatch_samples: list[dict[str, Any]] = []


class QueryErrors(Record):
    count: int = 0
    samples: list[dict[str, Any]] = []


class RollupRefreshFigures(Record):
    """Rows appended after the rollup's passes (the dataset's last hour of the rolled-up table,
    moved past its end into a day of its own), seconds to write and flush them, seconds until the
    rollup held them (``Target.refresh_rollup``), its rows over the appended span (checked: one per
    entity and rollup interval), and how the target refreshes."""

    rows_appended: int = 0
    append_s: Number = 0.0
    refresh_s: Number = 0.0
    rollup_rows: int = 0
    note: str = ""


class RollupFigures(Record):
    """The rollup built after the query passes (``rollup_after_load``): name, resolution (s), build
    seconds, rows and bytes (the database's accounting), how, the table it rolls up, per type it
    answers the stats of its passes (as many as the hot passes, summed like them; answers checked
    with the others) and each pass's figures, and its refresh after an append."""

    name: str = ""
    resolution_s: int = 0
    seconds: Number = 0.0
    rows: int = 0
    bytes: Number = 0
    note: str = ""
    source: str = ""
    passes: int = 0
    on_rollup: dict[str, QueryStats] = {}
    qps_by_pass: dict[str, list[Number]] = {}  # queries/s of each pass, per type
    mean_ms_by_pass: dict[str, list[Number]] = {}  # mean latency (ms) of each pass, per type
    refresh: RollupRefreshFigures | None = None  # after the passes; absent in runs before it


class QueriesPhase(Record):
    """``queries.json``: the cold pass and the hot passes summed per type, answer checks, errors."""

    cold: dict[str, QueryStats] = {}
    hot: dict[str, QueryStats] = {}
    hot_passes: int = 0
    hot_qps_by_pass: dict[str, list[Number]] = {}  # queries/s of each hot pass, per type
    hot_mean_ms_by_pass: dict[str, list[Number]] = {}  # mean latency (ms) of each hot pass, per type
    unsupported: dict[str, str] = {}
    answer_checks: AnswerChecks = AnswerChecks()
    errors: QueryErrors = QueryErrors()
    resources: Resources | None = None
    rollup: RollupFigures | None = None
    wall_s: Number | None = None


class Teardown(Record):
    seconds: Number | None = None
    wall_s: Number | None = None


class PhaseError(Record):
    """``error.json``: the phase that failed and why."""

    failed_phase: str
    error: str


class TargetResult(Record):
    """One target's phases in a run (``result.json``'s ``targets.<name>``) and its status:
    ``ok`` (queries ran), ``failed`` (``failed_phase``, ``error``) or ``incomplete``
    (``stopped_before``: the first phase that never ran)."""

    status: str = "incomplete"
    failed_phase: str = ""
    error: str = ""
    stopped_before: str | None = None
    acquire_machine: dict[str, Any] | None = None
    provision: Provision | None = None
    prepare: dict[str, Any] | None = None
    load: LoadPhase | None = None
    footprint: FootprintPhase | None = None
    cache_reset: CacheReset | None = None
    queries: QueriesPhase | None = None
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
    axes: dict[str, Any] = {}
    label: str = ""
    server_group: str = ""


class RunResult(Record):
    """``result.json``: one run (one point: a scale, or a sweep's point): spec, dataset, machine
    and client facts, every target."""

    format: str = ""
    run_id: str = ""
    created_at: str = ""
    finished_at: str = ""
    spec: dict[str, Any] = {}
    dataset: dict[str, Any] = {}
    machine: dict[str, Any] = {}
    clients: dict[str, str] = {}
    oracle_s: Number | None = None
    queries: int | None = None
    point: PointFacts | None = None
    targets: dict[str, TargetResult] = {}


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
    scales: dict[str, dict[str, Any]] = {}


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


PHASE_RECORDS: dict[str, type[Record]] = {
    "provision": Provision,
    "load": LoadPhase,
    "footprint": FootprintPhase,
    "cache_reset": CacheReset,
    "queries": QueriesPhase,
    "teardown": Teardown,
    "error": PhaseError,
}
