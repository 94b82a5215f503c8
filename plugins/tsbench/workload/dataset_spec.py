"""DatasetSpec: what data to generate, validated (it alone determines a dataset's content address),
and how run parameters are parsed (``Parsed.parse``: ``SpecError`` naming every bad field at once).
The run's own parameters (``tsbench.spec.RunSpec``) build on both."""

from __future__ import annotations

from typing import Any, Literal, Self, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_serializer,
    field_validator,
    model_validator,
)

from tsbench.timeutil import (
    NS_PER_DAY,
    format_duration,
    format_instant,
    parse_duration,
    parse_instant,
)
from tsbench.workload.usecases import USE_CASES, get_use_case

MAX_SCALE = 10_000_000
MAX_ROWS = 20_000_000_000
MIN_INTERVAL_NS = 1_000_000  # 1 ms
MAX_SPAN_NS = 3660 * NS_PER_DAY  # ten years
IngestionOrder = Literal["interleaved", "per-host-runs"]
INGESTION_ORDERS: tuple[str, ...] = get_args(IngestionOrder)
DEFAULT_START = "2016-01-01T00:00:00Z"
DEFAULT_END = "2016-01-02T00:00:00Z"
DISORDER_FIELDS = ("late_fraction", "lateness", "max_lateness", "duplicate_fraction", "update_fraction")


def _examples(values: Any) -> Any:
    """``json_schema_extra`` proposing known values (looked up when the schema is built)."""
    return lambda schema: schema.update(examples=list(values()))


class SpecError(ValueError):
    """Invalid run parameters; ``problems`` lists ``(field, message)`` pairs."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = problems
        lines = [f"  {field}: {message}" for field, message in problems]
        super().__init__("invalid run parameters:\n" + "\n".join(lines))


def _problems(error: ValidationError) -> list[tuple[str, str]]:
    problems = []
    for item in error.errors():
        message = item["msg"].removeprefix("Value error, ")
        if item["loc"]:
            field = ".".join(str(part) for part in item["loc"])
            if item["type"] != "value_error" and "input" in item:
                message += f" (got {item['input']!r})"
            problems.append((field, message))
        else:  # cross-field checks carry lines of "<field>: <message>"
            for line in message.splitlines():
                field, _, text = line.partition(": ")
                problems.append((field, text))
    return problems


class Parsed(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    @classmethod
    def parse(cls, **values: Any) -> Self:
        """Validate ``values``; unknown keys and bad values raise ``SpecError`` naming every
        problem at once: pydantic skips the cross-field checks while a field is bad, so the bad
        optional fields are set aside (their defaults stand in) and the checks run again."""
        given = {k: v for k, v in values.items() if v is not None}
        optional = {name for name, field in cls.model_fields.items() if not field.is_required()}
        problems: list[tuple[str, str]] = []
        set_aside: set[str] = set()  # named already; what their defaults provoke is not the caller's
        while True:
            try:
                parsed = cls.model_validate(given)
            except ValidationError as error:
                found = [
                    (field, message)
                    for field, message in _problems(error)
                    if (field, message) not in problems and field.split(".")[0] not in set_aside
                ]
                problems += found
                bad = {field.split(".")[0] for field, _ in found} & optional & given.keys()
                set_aside |= bad
                for field in bad:
                    del given[field]
                if bad:
                    continue
            break
        if problems:
            raise SpecError(problems)
        return parsed


class DatasetSpec(Parsed):
    """What data to generate. Row count per measurement = scale × (end − start) / interval."""

    use_case: str = Field(
        "cpu-only",
        description="TSBS use case (or ycsb-ts: YCSB-TS's records)",
        json_schema_extra=_examples(lambda: USE_CASES),
    )
    scale: int = Field(100, ge=1, le=MAX_SCALE, description="number of hosts (trucks, metrics)")
    start: int = Field(parse_instant(DEFAULT_START), description="first timestamp, ISO-8601 (UTC)")
    end: int = Field(parse_instant(DEFAULT_END), description="exclusive end, ISO-8601 (UTC)")
    interval: int = Field(10_000_000_000, description="time between epochs, e.g. 10s")
    seed: int = Field(123, ge=0, lt=2**63, title="Data seed", description="data seed")
    ingestion: IngestionOrder = Field("interleaved", description="order of the rows sent")
    run_length: int = Field(10, ge=1, le=100_000, description="rows per host per run (per-host-runs)")
    late_fraction: float = Field(
        0.0, ge=0.0, le=1.0, description="fraction of rows that arrive late (after later rows)"
    )
    lateness: int = Field(60_000_000_000, description="mean delay of a late row or a copy, e.g. 1m")
    max_lateness: int = Field(600_000_000_000, description="longest delay of a late row or a copy")
    duplicate_fraction: float = Field(
        0.0, ge=0.0, le=1.0, description="fraction of rows sent again, unchanged, later"
    )
    update_fraction: float = Field(
        0.0, ge=0.0, le=1.0, description="fraction of rows sent again later with every field halved"
    )

    @field_validator("use_case")
    @classmethod
    def _known_use_case(cls, value: str) -> str:
        get_use_case(value)
        return value

    @field_validator("start", "end", mode="before")
    @classmethod
    def _instant(cls, value: Any) -> int:
        return parse_instant(value)

    @field_validator("interval", "lateness", "max_lateness", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> int:
        return parse_duration(value)

    @field_serializer("start", "end")
    def _show_instant(self, value: int) -> str:
        return format_instant(value)

    @field_serializer("interval", "lateness", "max_lateness")
    def _show_duration(self, value: int) -> str:
        return format_duration(value)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.interval < MIN_INTERVAL_NS:
            raise ValueError(f"interval: must be at least 1ms (got {format_duration(self.interval)})")
        span = self.end - self.start
        if span <= 0:
            raise ValueError(
                f"end: must be after start (start {format_instant(self.start)}, "
                f"end {format_instant(self.end)})"
            )
        if span > MAX_SPAN_NS:
            raise ValueError(f"end: the data may span at most 10 years (got {span // NS_PER_DAY} days)")
        if span < self.interval:
            raise ValueError(
                f"interval: {format_duration(self.interval)} is longer than the data span "
                f"{format_duration(span)}; no epoch would fit"
            )
        if span % self.interval:
            whole = self.start + span // self.interval * self.interval
            raise ValueError(
                f"interval: {format_duration(self.interval)} does not divide the data span "
                f"{format_duration(span)} into whole epochs (end at {format_instant(whole)} would)"
            )
        if problems := self._disorder_problems(span):
            raise ValueError("\n".join(problems))
        if self.rows_total > MAX_ROWS:
            raise ValueError(
                f"scale: {self.scale:,} × {self.epochs:,} epochs × {len(self.measurements)} "
                f"measurement(s) = {self.rows_total:,} rows exceeds the limit of {MAX_ROWS:,}"
            )
        return self

    def _disorder_problems(self, span: int) -> list[str]:
        """Lines of ``<field>: <message>`` for late rows and copies that cannot be generated."""
        problems = []
        if self.duplicate_fraction + self.update_fraction > 1:
            problems.append(
                f"update_fraction: duplicate_fraction + update_fraction may be at most 1 "
                f"(got {self.duplicate_fraction} + {self.update_fraction})"
            )
        if not self.disordered:
            return problems
        if self.lateness <= 0:
            problems.append("lateness: must be positive when rows arrive late or are copied")
        if self.max_lateness < self.lateness:
            problems.append(
                f"max_lateness: {format_duration(self.max_lateness)} is shorter than the mean "
                f"lateness {format_duration(self.lateness)}"
            )
        if self.max_lateness > span:
            problems.append(
                f"max_lateness: {format_duration(self.max_lateness)} is longer than the data span "
                f"{format_duration(span)}"
            )
        if self.ingestion != "interleaved":
            problems.append(
                "ingestion: late rows and copies need the interleaved order (a row is late relative "
                f"to the rows sent in time order; got {self.ingestion})"
            )
        return problems

    @property
    def disordered(self) -> bool:
        """Whether rows arrive late or are sent more than once (``workload.disorder``)."""
        return bool(self.late_fraction or self.duplicate_fraction or self.update_fraction)

    @property
    def copies(self) -> bool:
        """Whether some rows are sent more than once (what a target keeps of them then matters)."""
        return bool(self.duplicate_fraction or self.update_fraction)

    @property
    def epochs(self) -> int:
        return (self.end - self.start) // self.interval

    @property
    def measurements(self) -> tuple[str, ...]:
        return tuple(m.name for m in get_use_case(self.use_case).measurements)

    @property
    def rows_per_measurement(self) -> int:
        """Rows each measurement would have before any iot point is dropped."""
        return self.scale * self.epochs

    @property
    def rows_total(self) -> int:
        return self.rows_per_measurement * len(self.measurements)

    def dataset_key(self) -> dict[str, Any]:
        """The fields that determine the data (what the content address hashes); without late rows
        and copies, their fields are left out (so a dataset's address is the one it had before
        they existed)."""
        fields = set(DatasetSpec.model_fields)
        if not self.disordered:
            fields -= set(DISORDER_FIELDS)
        return DatasetSpec.model_dump(self, include=fields)
