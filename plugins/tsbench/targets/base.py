"""The target contract: what every database folder provides.

A target folder ``targets/<name>/`` holds ``target.py`` (a ``Target`` subclass named ``TARGET``
at module level), ``server.py`` (its local-process ``ServerRecipe``), ``dialect.py`` (rendering of
logical queries) and a ``README.md`` (versions, schema, tuning). Nothing outside a target folder
branches on database names: differences are expressed through the methods and ``Capabilities`` here.
``Endpoint`` and the errors are the runtimes' (``runtimes/contract.py``), re-exported here.

Timing belongs to the callers (load driver, query runner); targets only do the work and report counts.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import pyarrow as pa

from tsbench.runtimes.contract import Endpoint as Endpoint
from tsbench.runtimes.contract import NotReadyError as NotReadyError
from tsbench.runtimes.contract import TargetError as TargetError
from tsbench.workload.kept import Keeps
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.usecases import UseCase, get_use_case

READY_USE_CASE = "cpu-only"  # a ready check only connects: any use case will do


@dataclass(frozen=True)
class Footprint:
    """Storage used, in bytes, by the database's own accounting; ``note`` says what is counted."""

    bytes: int
    note: str
    parts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Capabilities:
    """Declared, never branched on by name.

    ``unsupported`` maps a query type to the reason it cannot be expressed (shown in the report).
    ``durable`` says whether ``flush()`` waits for data to be on disk (fsync/WAL) or only visible.
    """

    durable: bool
    compression: str
    unsupported: Mapping[str, str] = field(default_factory=dict)
    restartable: bool = True
    schema_note: str = ""
    compresses_after_load: bool = False  # ``Target.compress`` works (run option compress_after_load)
    rollups: str = "none"  # what pre-aggregation the server offers, and under which licence
    builds_rollups: bool = False  # ``Target.build_rollup`` works (run option rollup_after_load)
    # The data model's limits on rows some datasets hold (iot), which set the rows a load must
    # leave (``workload.stored_rows``): a row without any field can be stored (False: it cannot be
    # represented and is not sent), and nameless rows of one measurement and instant become one
    # point (the database keys a point by series and time, and a nameless row's series is its
    # measurement alone). ``row_model_note`` says so in the report.
    stores_fieldless_rows: bool = True
    stores_bare_rows: bool = True  # a nameless row without any field: neither tag nor field
    merges_nameless_instants: bool = False
    row_model_note: str = ""
    # False: rows are counted by a field every row carries (each field is its own series), so a run
    # of data whose fields may all be missing (``UseCase.gapped_fields``) is refused up front.
    counts_gapped_rows: bool = True
    # What the database keeps of a named row sent more than once (the data's duplicates and
    # updates, ``workload.disorder``): the oracle's view and the expected row counts follow it.
    keeps: Keeps = Keeps.ALL


@dataclass(frozen=True)
class Compression:
    """What ``Target.compress`` did: units compressed (e.g. chunks), wall seconds of the whole step,
    the compressed data's bytes before and after by the database's own accounting, and how."""

    units: int
    seconds: float
    bytes_before: int
    bytes_after: int
    note: str = ""


@dataclass(frozen=True)
class Rollup:
    """What ``Target.build_rollup`` built: its name, its resolution in seconds, wall seconds of the
    whole build (create and materialise every row loaded), its rows and bytes by the database's own
    accounting, how, and the table it rolls up (``source``: its bytes are the raw data's)."""

    name: str
    resolution_s: int
    seconds: float
    rows: int
    bytes: int
    note: str = ""
    source: str = ""


@dataclass(frozen=True)
class RollupRefresh:
    """What ``Target.refresh_rollup`` measured: wall seconds until the rollup held rows appended
    (and flushed) after it was built, the rollup's rows over the appended span, and how."""

    seconds: float
    rows: int
    note: str = ""


class Writer(Protocol):
    """One load worker's connection. ``write`` sends one batch and returns the rows it accepted.

    A target with a ``WireFormat`` also gives its writers ``send(measurement, payload)``: one
    request with bytes its wire format encoded earlier (the load driver then never encodes)."""

    def write(self, measurement: str, batch: pa.RecordBatch) -> int: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Payload:
    """The exact bytes of one write request, and the rows the server will store from them."""

    data: bytes
    rows: int


class WireFormat(Protocol):
    """Encodes load batches into wire-ready request bodies, once per dataset, outside the timed
    load window (as TSBS's pre-generated files are). Built by ``Target.wire_format`` from the use
    case and the tags alone (encoding runs in worker processes, with no server at hand). ``key``
    names everything that determines the bytes (format, its version, settings, client version)."""

    key: str
    precompressed: bool  # payloads are compressed already (gzip bodies): stored as they are

    def encode(self, measurement: str, batch: pa.RecordBatch) -> list[Payload]: ...


def send_encoded(writer: Any, wire: WireFormat, measurement: str, batch: pa.RecordBatch) -> int:
    """``write`` for a writer that has ``send``: encode ``batch`` with ``wire`` and send every body;
    returns the rows the bodies carry."""
    rows = 0
    for payload in wire.encode(measurement, batch):
        writer.send(measurement, payload.data)
        rows += payload.rows
    return rows


class Session(Protocol):
    """One query worker's connection.

    ``fetch`` sends rendered text and receives the whole result as the server sent it (the timed
    part: bytes, a libpq result, …); ``decode`` turns that into rows in the column order of
    ``tsbench.workload.answers.answer_columns`` for the query's type (untimed, for the answer
    check); ``execute`` is both at once."""

    def fetch(self, text: str) -> Any: ...

    def decode(self, raw: Any) -> list[tuple[Any, ...]]: ...

    def execute(self, text: str) -> list[tuple[Any, ...]]: ...

    def close(self) -> None: ...


class RowSession(ABC):
    """A session whose client decodes while it receives (no raw form to keep): ``fetch`` returns
    the rows, ``decode`` passes them on. Subclasses implement ``execute`` and ``close``."""

    @abstractmethod
    def execute(self, text: str) -> list[tuple[Any, ...]]: ...

    @abstractmethod
    def close(self) -> None: ...

    def fetch(self, text: str) -> list[tuple[Any, ...]]:
        return self.execute(text)

    def decode(self, raw: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        return raw


class Target(ABC):
    """A database under test, connected to a running server at ``endpoint``."""

    name: ClassVar[str]
    title: ClassVar[str]  # how the report, charts and tables name it, e.g. "QuestDB"
    colour: ClassVar[str]  # its colour in every chart and run, "#RRGGBB" (distinct per target)
    client_packages: ClassVar[tuple[str, ...]] = ()  # distributions its client code imports
    capabilities: ClassVar[Capabilities]

    def __init__(self, endpoint: Endpoint, use_case: UseCase, tags: pa.Table):
        """``tags`` is the dataset's entity tags table (one row per host/truck)."""
        self.endpoint = endpoint
        self.use_case = use_case
        self.tags = tags

    @classmethod
    def answering(cls, endpoint: Endpoint) -> Target:
        """A target at ``endpoint`` only to ask the server its ``version`` (a runtime's ready check):
        any use case will do, no tags (``runtimes.contract.ServedTarget``)."""
        return cls(endpoint, get_use_case(READY_USE_CASE), pa.table({}))

    @staticmethod
    @abstractmethod
    def server_recipe() -> type:
        """The ``ServerRecipe`` subclass that runs this target's server as a local process."""

    @abstractmethod
    def create_schema(self) -> None:
        """Create fresh tables for every measurement of the use case (and the tags, where the
        schema has a tags table). Drops whatever a previous attempt left, so a retry never
        double-loads."""

    @abstractmethod
    def writer(self) -> Writer:
        """A new connection for one load worker."""

    @classmethod
    def wire_format(cls, use_case: UseCase, tags: pa.Table) -> WireFormat | None:
        """How load batches become request bodies ahead of the load, or None when this target's
        writers encode while they send (``write``)."""
        return None

    @abstractmethod
    def flush(self) -> None:
        """Make everything written durable (or at least visible, per ``capabilities.durable``);
        returns only when a query would see all rows. Called inside the timed load window."""

    @abstractmethod
    def row_count(self, measurement: str) -> int:
        """Rows of ``measurement`` now stored."""

    def count_rows(self, measurement: str, complete_fields: Sequence[str]) -> int:
        """``row_count``, told which fields every loaded row carries (``Dataset.complete_fields``):
        a database that stores fields apart may count one of those instead of rows."""
        return self.row_count(measurement)

    @abstractmethod
    def render(self, query: LogicalQuery) -> str:
        """The query in this database's dialect. Raise ``NotImplementedError`` only for types
        listed in ``capabilities.unsupported``."""

    @abstractmethod
    def session(self) -> Session:
        """A new connection for one query worker."""

    @abstractmethod
    def footprint(self) -> Footprint:
        """Storage by the database's own accounting, including indexes and WAL where it keeps any."""

    @abstractmethod
    def version(self) -> str:
        """Server version as the server reports it."""

    def settings(self) -> dict[str, Any]:
        """Configuration and tuning facts worth printing in the report (no secrets)."""
        return {}

    def compress(self) -> Compression:
        """Compress the loaded data (targets whose ``capabilities.compresses_after_load``)."""
        raise TargetError(f"{self.name} cannot compress after the load: {self.capabilities.compression}")

    def build_rollup(self) -> Rollup:
        """Build the rollup of the loaded data (targets whose ``capabilities.builds_rollups``)."""
        raise TargetError(f"{self.name} cannot build a rollup: {self.capabilities.rollups}")

    def render_on_rollup(self, query: LogicalQuery) -> str | None:
        """``query`` answered from the rollup ``build_rollup`` built, to the same answer as the raw
        data's; None when the rollup cannot answer it."""
        return None

    def refresh_rollup(self, start_ns: int, end_ns: int) -> RollupRefresh:
        """Bring the rollup up to rows appended in ``[start_ns, end_ns)`` after it was built (already
        flushed); timed until the rollup holds them (targets whose ``capabilities.builds_rollups``)."""
        raise TargetError(f"{self.name} cannot build a rollup: {self.capabilities.rollups}")

    def remove_rows_from(self, measurement: str, start_ns: int) -> None:
        """Delete the rows of ``measurement`` at or after ``start_ns``: rows appended after the
        dataset, in days of their own, by a rollup's refresh or the live phase (a retried phase, or
        the live phase's end, removes them)."""
        raise TargetError(f"{self.name} cannot remove rows")

    def close(self) -> None:  # noqa: B027 - an optional hook
        """Release connections held by the target object itself."""
