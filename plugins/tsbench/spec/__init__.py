"""RunSpec: the one typed, validated description of a run; every check on run parameters is in this
package (the load's stored-or-streamed options in ``load_options``).

``DatasetSpec`` fixes the data (it alone determines the dataset's content address); ``RunSpec`` adds
queries, targets and load/query settings. ``RunSpec.parse(...)``: bad input raises ``SpecError``
naming every offending field, before any work. Units: ``start``/``end`` ns since the epoch (UTC),
``interval`` ns; texts (``"2016-01-01T00:00:00Z"``, ``"10s"``) are accepted and written back."""

from __future__ import annotations

from itertools import pairwise
from typing import Any, Literal, Self, get_args

from pydantic import Field, field_validator, model_validator

from tsbench.runtimes.options import AwsOptions, DockerOptions
from tsbench.spec.load_options import DatasetRowsOption, WireBodiesOption
from tsbench.timeutil import format_duration
from tsbench.workload.dataset_spec import (  # the dataset's part, re-exported: one import for callers
    DEFAULT_END,
    DEFAULT_START,
    INGESTION_ORDERS,
    MAX_ROWS,
    MAX_SCALE,
    DatasetSpec,
    IngestionOrder,
    SpecError,
    _examples,
)
from tsbench.workload.query_types import QUERY_TYPES
from tsbench.workload.usecases import USE_CASES

__all__ = [
    "DEFAULT_END",
    "DEFAULT_START",
    "INGESTION_ORDERS",
    "MAX_ROWS",
    "MAX_SCALE",
    "RUNTIMES",
    "DatasetSpec",
    "IngestionOrder",
    "QuerySetSpec",
    "RunSpec",
    "SpecError",
    "able_targets",
    "container_flavours",
]

TargetRuntime = Literal["local", "docker", "aws"]
RUNTIMES: tuple[str, ...] = get_args(TargetRuntime)


def _target_names() -> tuple[str, ...]:
    from tsbench.targets.registry import target_names

    return tuple(target_names())


class QuerySetSpec(DatasetSpec):
    """A dataset plus the logical queries to run on it (no targets): what ``queries`` needs."""

    query_types: list[str] | None = Field(
        None,
        description="query types to run; empty: every type that fits the data and use case",
        json_schema_extra=_examples(lambda: QUERY_TYPES),
    )
    queries_per_type: int = Field(
        10, ge=0, le=100_000, description="queries per type; 0: a load-only run (no queries, no cold restart)"
    )
    query_seed: int | None = Field(None, ge=0, lt=2**63, description="default: the data seed")

    @field_validator("query_types")
    @classmethod
    def _known_query_types(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("choose at least one query type (or leave it unset for all)")
        unknown = [name for name in value if name not in QUERY_TYPES]
        if unknown:
            raise ValueError(f"unknown query type(s) {', '.join(unknown)}; known: {', '.join(QUERY_TYPES)}")
        if len(set(value)) != len(value):
            raise ValueError("a query type is listed twice")
        return value

    @model_validator(mode="after")
    def _queries_fit(self) -> Self:
        if self.query_types is None:
            return self
        if not self.queries_per_type:
            raise ValueError("query_types: a load-only run (queries_per_type 0) runs none; leave it unset")
        families = USE_CASES[self.use_case].query_families
        if not families:
            raise ValueError(f"query_types: use case {self.use_case!r} has no queries in the catalogue yet")
        problems = []
        foreign = [name for name in self.query_types if QUERY_TYPES[name].family not in families]
        if foreign:
            problems.append(
                f"query_types: {', '.join(foreign)} do not apply to use case {self.use_case!r} "
                f"(it answers the {' and '.join(families)} types)"
            )
        span = self.end - self.start
        too_long = [name for name in self.query_types if QUERY_TYPES[name].window_ns > span]
        if too_long:
            problems.append(
                f"query_types: {', '.join(too_long)} need a window longer than the data span "
                f"{format_duration(span)}"
            )
        few = [name for name in self.query_types if (QUERY_TYPES[name].hosts or 0) > self.scale]
        if few:
            problems.append(f"query_types: {', '.join(few)} need more hosts than scale {self.scale}")
        if problems:
            raise ValueError("\n".join(problems))
        return self

    @property
    def dataset(self) -> DatasetSpec:
        return DatasetSpec.model_validate(self.dataset_key())

    @property
    def resolved_query_types(self) -> list[str]:
        """The explicit list, or every type that fits the span and the use case; none in a load-only
        run (``queries_per_type`` 0)."""
        if not self.queries_per_type:
            return []
        if self.query_types is not None:
            return list(self.query_types)
        families = USE_CASES[self.use_case].query_families
        span = self.end - self.start
        return [
            name
            for name, q in QUERY_TYPES.items()
            if q.family in families and q.window_ns <= span and (q.hosts or 0) <= self.scale
        ]

    @property
    def effective_query_seed(self) -> int:
        return self.seed if self.query_seed is None else self.query_seed


class RunSpec(QuerySetSpec, WireBodiesOption, DatasetRowsOption):
    """A whole comparison run: the dataset, the queries, the targets and how to drive them."""

    @classmethod
    def recorded(cls, spec: dict[str, Any]) -> Self:
        """A recorded spec, typed: the declared defaults where it predates a field; not validated again."""
        return cls.model_construct(**spec)

    targets: list[str] = Field(
        ...,
        description="databases to compare, each alone on the machine, one after another",
        json_schema_extra=_examples(_target_names),
    )
    versions: dict[str, list[str]] = Field(
        default_factory=dict,
        title="Releases to compare",
        description='other releases of a run\'s target, each run as a target of its own "<target>@<version>" '
        'beside the pinned one, e.g. {"questdb": ["9.2.3", "9.1.1"]}; only where the target\'s recipe '
        "installs several side by side (its definition's releases; QuestDB: Maven Central's 9.x jars, "
        "runtime local)",
    )
    workers: int = Field(2, ge=1, le=256, description="load and query workers")
    batch_size: int = Field(10_000, ge=1, le=1_000_000, description="rows per write batch")
    hash_workers: bool = Field(False, description="a host always goes to the same worker")
    trials: int = Field(
        1, ge=1, le=100, title="Load trials", description="loads per target; the median is reported"
    )
    hot_runs: int = Field(
        3, ge=1, le=100, title="Hot passes", description="hot passes over the query set after the cold one"
    )
    settle_seconds: float = Field(0.0, ge=0, le=86_400, description="wait before the second footprint")
    compress_after_load: bool = Field(
        False,
        description="compress the loaded data where the target can (TimescaleDB full edition: native "
        "compression), timed in the settle phase with the footprint before and after; the queries then "
        "run on compressed data. Targets that cannot load and query uncompressed, as always",
    )
    rollup_after_load: bool = Field(
        False,
        description="after the query passes, build a rollup of cpu where the target can (TimescaleDB "
        "full edition: a 1-minute continuous aggregate; QuestDB: a materialized view; InfluxDB 1.x: a "
        "continuous query's rollup), timed, with its "
        "rows and bytes; then run the query types it can answer on it, every answer checked against the "
        "reference, and time its refresh after an hour of rows is appended past the dataset's end",
    )
    live_seconds: float = Field(
        0.0,
        ge=0,
        le=86_400,
        title="Live phase (s)",
        description="seconds of the live phase after the queries: ingest continues past the loaded data "
        "while query clients read the windows it has closed, both open-loop; then the same queries "
        "without ingest. 0: no live phase",
    )
    live_only: bool = Field(
        False,
        description="the live phase alone queries: the history is loaded once and no closed-loop "
        "query passes run (no cold restart, no cold or hot pass), e.g. a query-concurrency sweep of "
        "query_rate or query_workers on loaded data",
    )
    live_rate: str = Field(
        "0.5x",
        description="the live ingest's offered rate: rows/s (e.g. 1000), or a fraction of the rate the "
        "load measured on that target (e.g. 0.5x)",
    )
    live_batch_size: int = Field(1_000, ge=1, le=1_000_000, description="rows per live write batch")
    query_rate: float = Field(
        10.0, ge=0, le=100_000, description="live queries offered per second, all types in turn; 0: none"
    )
    query_workers: int = Field(4, ge=1, le=256, description="live query clients (independent of workers)")
    query_rate_ramp: list[float] = Field(
        [],
        description="live query rates for the ramp, ascending, e.g. [5, 10, 20, 50]: after the live "
        "phase's queries, one step of live_seconds each, ingest running; drawn as p99 against rate",
    )
    slo_p99_ms: float = Field(
        0.0,
        ge=0,
        le=3_600_000,
        title="SLO p99 (ms)",
        description="the ramp's p99 objective: the report gives the highest query rate whose p99 stays "
        "within it while ingesting; 0: none (needs query_rate_ramp)",
    )
    runtime: TargetRuntime = Field(
        "local",
        description="where servers run: local processes on this machine, docker containers on a "
        "Docker engine, or aws (one Terraform-provisioned host per target, destroyed at the end)",
    )
    aws: AwsOptions = Field(
        default_factory=AwsOptions,
        title="AWS options (runtime aws)",
        description="runtime aws: region, instance_type, ami_id, root_volume_gb, data_volume_type/_gb/"
        "_iops/_throughput, orchestrator_cidr (required), client_host, client_instance_type, "
        "ssh_public_key, ready_timeout_s, endpoint_url, backend_config",
    )
    docker: DockerOptions = Field(
        default_factory=DockerOptions,
        title="Docker options (runtime docker)",
        description='runtime docker: flavours per target, e.g. {"flavours": {"influxdb": "2.7"}}; '
        "base_url of the engine",
    )

    @model_validator(mode="after")
    def _runtime_ready(self) -> Self:
        """Runtime options, options some targets follow, docker flavours, releases, the use case."""
        from tsbench.targets.registry import release_problems, use_case_problems

        problems = release_problems(self.targets, self.versions, self.runtime)
        problems += use_case_problems(self.targets, self.use_case)
        if self.runtime == "aws":
            problems += self.aws.problems_for_a_run()
        for option, capability, doing in OPTIONS_NEEDING_A_TARGET:
            if getattr(self, option) and not able_targets(self.targets, capability):
                able = ", ".join(able_targets(None, capability)) or "(none)"
                problems.append((option, f"none of the run's targets can {doing}; {able} can"))
        for name, flavour in self.docker.flavours.items():
            if name not in self.targets:
                problems.append((f"docker.flavours.{name}", "not one of the run's targets"))
                continue
            known = container_flavours(name)
            if flavour not in known:
                problems.append((f"docker.flavours.{name}", f"unknown flavour {flavour!r}; known: {known}"))
        problems += self._unordered_update_problems()
        if problems:
            raise ValueError("\n".join(f"{field}: {message}" for field, message in problems))
        return self

    def _unordered_update_problems(self) -> list[tuple[str, str]]:
        """An update must reach a target that keeps the last write after its original; in the bulk
        load, workers sharing one queue can have the two applied in either order."""
        if not self.update_fraction or self.workers == 1 or self.hash_workers:
            return []
        ordered = ordered_targets(self.targets)
        if not ordered:
            return []
        return [
            (
                "hash_workers",
                f"the data has updates (update_fraction {self.update_fraction}) and {', '.join(ordered)} "
                f"keep the last write of an instant: {self.workers} workers sharing one queue can have "
                "an update applied before its original; set hash_workers: true (each host on one "
                "connection, in order) or workers: 1",
            )
        ]

    @model_validator(mode="before")
    @classmethod
    def _release_instances(cls, values: Any) -> Any:
        """``targets`` names an instance ``<target>@<version>`` per release of ``versions``, after its
        target (idempotent, so a recorded spec parses to itself); ``_runtime_ready`` checks each."""
        from tsbench.targets.releases import with_release_instances

        return with_release_instances(values)

    @field_validator("live_rate")
    @classmethod
    def _live_rate(cls, value: str) -> str:
        live_rate_parts(value)
        return value.strip()

    @model_validator(mode="after")
    def _live_fits(self) -> Self:
        problems = []
        if self.live_seconds and (self.query_rate or self.query_rate_ramp) and not self.queries_per_type:
            problems.append("query_rate: a load-only run (queries_per_type 0) has no queries to send live")
        if self.slo_p99_ms and not self.query_rate_ramp:
            problems.append("slo_p99_ms: an SLO needs a ramp of query rates (query_rate_ramp) to test it on")
        ramp = self.query_rate_ramp
        if any(not rate > 0 for rate in ramp) or any(b <= a for a, b in pairwise(ramp)):
            problems.append(f"query_rate_ramp: rates must be > 0 and ascending (got {ramp})")
        if (ramp or self.slo_p99_ms) and not self.live_seconds:
            problems.append("query_rate_ramp: the ramp runs in the live phase; give live_seconds")
        problems += self._live_only_problems()
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def _live_only_problems(self) -> list[str]:
        """Lines of ``<field>: <message>`` for a live-only run that could not run."""
        if not self.live_only:
            return []
        problems = []
        if not self.live_seconds:
            problems.append("live_seconds: a live-only run needs a live phase (live_seconds > 0)")
        if not self.queries_per_type or not (self.query_rate or self.query_rate_ramp):
            problems.append(
                "query_rate: a live-only run needs live queries (query_rate or a ramp, and queries)"
            )
        if self.trials > 1:
            problems.append(f"trials: a live-only run loads the history once (got {self.trials})")
        if self.rollup_after_load:
            problems.append(
                "rollup_after_load: its passes follow the query passes, which a live-only run skips"
            )
        return problems

    @field_validator("targets")
    @classmethod
    def _known_targets(cls, value: list[str]) -> list[str]:
        from tsbench.targets.registry import target_names

        if not value:
            raise ValueError("choose at least one target")
        from tsbench.targets.releases import split_instance

        known = target_names()
        unknown = [name for name in value if split_instance(name)[0] not in known]
        if unknown:
            raise ValueError(f"unknown target(s) {', '.join(unknown)}; known: {', '.join(known) or '(none)'}")
        if len(set(value)) != len(value):
            raise ValueError("a target is listed twice")
        return value


# Run options that only some targets can follow: (option, the capability it needs, what it does).
OPTIONS_NEEDING_A_TARGET = (
    ("compress_after_load", "compresses_after_load", "compress after the load"),
    ("rollup_after_load", "builds_rollups", "build a rollup"),
)


def able_targets(names: list[str] | None, capability: str) -> list[str]:
    """Those of ``names`` (every target: None) whose ``Capabilities.<capability>`` is true (a
    release's instance: its folder's, checked or not yet)."""
    from tsbench.targets.registry import load_target, target_names
    from tsbench.targets.releases import split_instance

    chosen = target_names() if names is None else names
    return [name for name in chosen if getattr(load_target(split_instance(name)[0]).capabilities, capability)]


def ordered_targets(names: list[str]) -> list[str]:
    """The targets of ``names`` whose keeping of copies depends on their arrival order."""
    from tsbench.targets.registry import load_target
    from tsbench.targets.releases import split_instance

    return [name for name in names if load_target(split_instance(name)[0]).capabilities.keeps.order_matters]


def container_flavours(target: str) -> list[str]:
    """Container flavours a target offers (``targets/<name>/container.py``), default first."""
    from tsbench.runtimes.container_spec import target_containers

    return list(target_containers(target))


def live_rate_parts(text: str) -> tuple[float, bool]:
    """``live_rate`` as ``(value, is_fraction)``: ``"1000"`` → (1000.0, False), ``"0.5x"`` →
    (0.5, True); ValueError naming the forms for anything else."""
    body = str(text).strip().lower()
    fraction = body.endswith("x")
    try:
        value = float(body.removesuffix("x"))
    except ValueError:
        raise ValueError(
            f"{text!r} is neither rows/s (e.g. 1000) nor a fraction of the load's rate (0.5x)"
        ) from None
    if not value > 0 or value != value or value == float("inf"):
        raise ValueError(f"{text!r}: the rate must be > 0")
    return value, fraction
