"""The records a branch's phases write (``targets/<name>/<FILE>.json`` in a point folder): one
record type per file, which names it (``FILE``). ``tsbench.run.phases`` declares which phase writes
which."""

from __future__ import annotations

from typing import Any, ClassVar

from tsbench.results.record import Number, Record


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
    keeps: str = ""  # what it keeps of a row sent twice (``workload.kept.Keeps.meaning``)


class Provision(Record):
    """``provision.json``: where and what the server is (version, settings, runtime facts)."""

    FILE: ClassVar[str] = "provision"

    runtime: str = ""
    seconds: Number | None = None
    endpoint: dict[str, Any] = {}  # ``Endpoint.to_json()`` (runtimes' record; results sit below them)
    server_binary: str = ""
    config: str = ""
    placement: dict[str, Any] = {}  # each runtime's own facts (host, container, disk…), shown as listed
    capabilities: Capabilities = Capabilities()
    version: str = ""
    settings: dict[str, Any] = {}  # the database's own settings, free-form per target
    wall_s: Number | None = None
    started_at: str = ""  # ISO instant provisioning began (a cloud host's life starts here); runs before: ""


class WireFacts(Record):
    """How a target's load bodies were made (``WireCache.facts()`` or ``WireStream.facts()``):
    their wire format's key, batch size and partitions, the bodies, rows and bytes sent; a cache's
    stored bytes, digest and codec; the encoding's wall and CPU-seconds and processes; whether the
    cache was found (``reused``) or the bodies were encoded during the load (``streamed``: nothing
    stored). None where a streamed pass has not run."""

    key: str = ""
    batch_size: int | None = None
    partitions: int | None = None
    bodies: int | None = None
    rows: int | None = None
    bytes_stored: int | None = None
    bytes_sent: int | None = None
    digest: str = ""
    codec: str = ""
    encode_s: Number | None = None
    encode_cpu_s: Number | None = None
    processes: int | None = None
    reused: bool = False
    streamed: bool = False


class Prepare(Record):
    """``prepare.json``: seconds to create the schema, and the wire-ready load bodies' facts (their
    cache, encoded outside the load's timed window; None where the target loads from Arrow)."""

    FILE: ClassVar[str] = "prepare"
    seconds: Number | None = None
    wire: WireFacts | None = None
    wall_s: Number | None = None


class LeaseTaken(Record):
    """``acquire_machine.json``: the machine lease a branch took (its key, ``None`` for the
    machine's own) and the seconds it waited for it."""

    FILE: ClassVar[str] = "acquire_machine"
    waited_s: Number = 0.0
    lease: str | None = None
    taken_at: str = ""  # ISO instant the lease was taken, right before provisioning; runs before: ""


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

    FILE: ClassVar[str] = "load"

    trials: list[LoadTrial] = []
    row_count_ok: bool = False
    median_rows_per_s: Number | None = None
    wire: WireFacts | None = None  # as in ``Prepare``
    wall_s: Number | None = None
    # rows per measurement the target's data model keeps, when other than the dataset's files hold
    # (iot: ``Capabilities.stores_fieldless_rows`` …; rows sent twice: ``keeps``); empty: every row
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

    FILE: ClassVar[str] = "footprint"

    after_load: FootprintFigures | None = None
    compression: CompressionFigures | None = None
    after_settle: FootprintFigures | None = None
    settle_seconds: Number | None = None
    wall_s: Number | None = None


class CacheReset(Record):
    """``cache_reset.json``: the restart and OS page cache drop before the cold pass."""

    FILE: ClassVar[str] = "cache_reset"

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
    mismatch_samples: list[dict[str, Any]] = []  # the answer diff as the comparison found it


class QueryErrors(Record):
    count: int = 0
    samples: list[dict[str, Any]] = []  # pass, query id and the driver's error text


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

    FILE: ClassVar[str] = "queries"

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
    skipped: str = ""  # why no pass ran (a live-only run), empty when they ran


class Teardown(Record):
    """``teardown.json``: seconds to stop the server and remove its files, and the ISO instant it
    ended (``finished_at``: a cloud host no longer exists; runs before: "")."""

    FILE: ClassVar[str] = "teardown"
    seconds: Number | None = None
    wall_s: Number | None = None
    finished_at: str = ""


class PhaseError(Record):
    """``error.json``: the phase that failed and why."""

    FILE: ClassVar[str] = "error"

    failed_phase: str
    error: str
