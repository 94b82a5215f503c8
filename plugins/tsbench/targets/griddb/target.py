"""GridDB target: key-container model, multi-put from Arrow batches, TQL plans with a client-side combine.

Schema (``layout.py``): one TIME_SERIES container per entity per measurement (``cpu_host_0``), row
key ``time`` (TIMESTAMP, ms); entity tags in the COLLECTION ``tsbench_tags``; rows without an entity
(nameless iot points) in one COLLECTION ``<measurement>_nameless`` without a row key. Load (``shape.py``,
``client.py``): an Arrow batch is grouped by container with one stable sort, crosses into the JVM as a
few primitive arrays, becomes GridDB rows in Java (``Bulk.rows``) and goes out with one
``GridStore.multiPut``, which commits before it returns. Queries: devops and YCSB-TS (``dialect.py``,
``combine.py``) as a JSON plan of TQL per container, sent ``combine.FETCH_CONTAINERS`` containers
per ``fetchAll`` and folded chunk by chunk on the client; iot (``iot_dialect.py``, ``jdbc.py``) as
one GridDB SQL statement over the trucks' containers, answered whole by the server's SQL service.
"""

from __future__ import annotations

import json
import threading
from functools import cached_property
from typing import Any, ClassVar

import pyarrow as pa

from tsbench.targets.base import Capabilities, Endpoint, Footprint, RowSession, Target, TargetError
from tsbench.targets.griddb import combine, dialect, iot_dialect, rest
from tsbench.targets.griddb.client import Connection, Store, client_version
from tsbench.targets.griddb.definition import DEFINITION
from tsbench.targets.griddb.jdbc import SqlConnection
from tsbench.targets.griddb.layout import (
    TAGS_CONTAINER,
    Layout,
    check_names,
    container_name,
    layout,
    nameless_container,
    tags_layout,
)
from tsbench.targets.griddb.server import GridDBServer, tuning_sections
from tsbench.targets.griddb.shape import shape
from tsbench.workload.kept import Keeps
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.usecases import CPU, UseCase

FOOTPRINT_NOTE = (
    "GridDB's own accounting (GET /node/stat, performance.storeTotalUse): bytes of the storage blocks "
    "holding the database's rows, row-key indexes and container metadata, in memory or in the data "
    "files alike (so a load is counted before its next checkpoint). Not included: free blocks of "
    "the data files (parts: dataFileSize, dataFileAllocateSize) and the transaction log (GridDB's "
    "WAL), which the node does not report; the runtime's on-disk figure covers data/ and txnlog/."
)


class GridDBWriter:
    """One load worker: its own GridStore connection; one multi-put per batch."""

    def __init__(self, store: Store, layouts: dict[str, Layout], entity_key: str):
        self.store = store
        self.layouts = layouts
        self.entity_key = entity_key

    def write(self, measurement: str, batch: pa.RecordBatch) -> int:
        if not batch.num_rows:
            return 0
        return self.store.multi_put(shape(self.layouts[measurement], self.entity_key, batch))

    def close(self) -> None:
        self.store.close()


class GridDBSession(RowSession):
    """One query worker: runs a JSON plan with its own connections: TQL steps (``dialect.render``)
    on its GridStore, a SQL plan (``iot_dialect``) on a JDBC connection opened on first use."""

    def __init__(self, store: Store, connection: Connection | None = None):
        self.store = store
        self.connection = connection
        self._sql: SqlConnection | None = None

    def sql(self, text: str) -> list[tuple[Any, ...]]:
        """The rows of one SQL statement, on this session's JDBC connection."""
        if self._sql is None:
            if self.connection is None:
                raise TargetError("griddb: this session has no SQL connection settings")
            self._sql = SqlConnection(self.connection)
        return self._sql.query(text)

    def fetch_steps(self, steps: list[dialect.Step]) -> list[combine.StepResult]:
        """Every step's TQL on its container, in one ``fetchAll`` (``combine.answer`` sends a chunk)."""
        return self.store.fetch([s["container"] for s in steps], [s["tql"] for s in steps])

    def execute(self, text: str) -> list[tuple[Any, ...]]:
        """A SQL plan's rows as the server returned them (no SQL: the query reads no container, an
        empty answer); else the plan's steps fetched and combined into answer rows (``fetch`` is
        this too: the combine step is part of GridDB's measured query, as the study's client-side
        work was)."""
        plan = json.loads(text)
        if "sql" in plan:
            return self.sql(plan["sql"]) if plan["sql"] else []
        return combine.answer(plan, self.fetch_steps)

    def close(self) -> None:
        try:
            if self._sql is not None:
                self._sql.close()
        finally:
            self.store.close()


class GridDBTarget(Target):
    name = "griddb"
    title = "GridDB"
    colour = "#D55E00"
    client_packages = ("jpype1",)
    capabilities: ClassVar[Capabilities] = Capabilities(
        durable=False,
        keeps=Keeps.LAST,  # TIME_SERIES containers keyed by time: a put replaces the row of its instant
        compression="none (storeCompressionMode NO_COMPRESSION, the CE default)",
        rollups="none (GridDB CE has no materialized views)",
        unsupported={},
        restartable=True,
        schema_note=(
            "key-container model: one TIME_SERIES container per entity per measurement "
            "(<measurement>_<entity>), row key time (TIMESTAMP, ms), extra tags STRING, integer fields "
            "LONG, float fields DOUBLE; entity tags in COLLECTION tsbench_tags; rows without an entity "
            "(nameless iot points) in COLLECTION <measurement>_nameless (same columns, no row key)"
        ),
    )

    @staticmethod
    def server_recipe() -> type:
        return GridDBServer

    def __init__(self, endpoint: Endpoint, use_case: UseCase, tags: pa.Table):
        super().__init__(endpoint, use_case, tags)
        self._lock = threading.Lock()  # guards the target's own connection
        self._store: Store | None = None

    # Derived from use case and tags alone (rendering needs no connection and no __init__ beyond
    # Target's).

    @cached_property
    def entities(self) -> list[str]:
        return check_names(self.use_case, self.tags.column(self.use_case.entity_key).to_pylist())

    @cached_property
    def fleets(self) -> dict[str, list[str]]:
        """The entities of each fleet (iot's ``fleet`` tag; empty for use cases without it): the
        containers a fleet query names."""
        if "fleet" not in self.tags.column_names:
            return {}
        fleets: dict[str, list[str]] = {}
        for entity, fleet in zip(self.entities, self.tags.column("fleet").to_pylist(), strict=True):
            fleets.setdefault(str(fleet), []).append(entity)
        return fleets

    @cached_property
    def layouts(self) -> dict[str, Layout]:
        return {m.name: layout(m) for m in self.use_case.measurements}

    @cached_property
    def query_layout(self) -> Layout:
        """The layout of the measurement every query reads (``cpu``; ``usermetric`` for YCSB-TS)."""
        queried = self.use_case.queried
        return self.layouts.get(queried) or layout(CPU)

    # -- connections -------------------------------------------------------------------------------

    def measurement_containers(self, measurement: str) -> list[str]:
        """Every container holding ``measurement``'s rows: one per entity, then the nameless
        collection when the use case has ``nameless_rows``."""
        names = [container_name(measurement, entity) for entity in self.entities]
        return [*names, nameless_container(measurement)] if self.use_case.nameless_rows else names

    @property
    def container_count(self) -> int:
        return sum(len(self.measurement_containers(m)) for m in self.layouts) + 1

    def connect(self) -> Store:
        return Store(Connection.of(self.endpoint), container_cache=max(1_000, self.container_count))

    def _admin(self) -> Store:
        if self._store is None:
            self._store = self.connect()
        return self._store

    def _stat(self) -> dict[str, Any]:
        password = self.endpoint.secrets.get("password", "")
        user = self.endpoint.user or "admin"
        return rest.node_stat(self.endpoint.host, self.endpoint.port("system"), user, password)

    # -- contract ----------------------------------------------------------------------------------

    def _ours(self, name: str) -> bool:
        lowered = name.lower()
        return lowered == TAGS_CONTAINER or any(lowered.startswith(f"{m.lower()}_") for m in self.layouts)

    def create_schema(self) -> None:
        """Drop every container a previous attempt left (anything named ``<measurement>_…`` or
        ``tsbench_tags``), then create the tags collection with its rows, one empty TIME_SERIES
        container per entity per measurement and, when the use case has ``nameless_rows``, one
        empty nameless COLLECTION (no row key) per measurement."""
        with self._lock:
            store = self._admin()
            for name in store.container_names():
                if self._ours(name):
                    store.drop(name)
            columns = tags_layout(self.use_case)
            schema = store.put_collection(TAGS_CONTAINER, columns)
            values = [[str(v) for v in self.tags.column(c.name).to_pylist()] for c in columns]
            if self.entities:
                store.put_strings(TAGS_CONTAINER, schema, values)
            for measurement, item in self.layouts.items():
                for entity in self.entities:
                    store.put_measurement(container_name(measurement, entity), item)
                if self.use_case.nameless_rows:
                    store.put_measurement(nameless_container(measurement), item, keyed=False)

    def writer(self) -> GridDBWriter:
        return GridDBWriter(self.connect(), self.layouts, self.use_case.entity_key)

    def flush(self) -> None:
        """Nothing to wait for: every multi-put is committed (and visible) when it returns; the
        transaction log reaches the disk within ``logWriteMode`` = 1 s (``durable`` is False)."""

    def row_count(self, measurement: str) -> int:
        """Rows of every container of ``measurement``, the nameless collection included."""
        self.use_case.measurement(measurement)  # KeyError for a measurement the use case lacks
        names = self.measurement_containers(measurement)
        with self._lock:
            results = self._admin().fetch(names, ["SELECT COUNT(*)"] * len(names))
        return sum(result.long or 0 for result in results)

    def render(self, query: LogicalQuery) -> str:
        if query.query_type.kind in iot_dialect.IOT_SQL:
            return json.dumps(iot_dialect.plan(query, self.entities, self.fleets), separators=(",", ":"))
        return dialect.render(query, self.query_layout, self.entities)

    def session(self) -> GridDBSession:
        return GridDBSession(self.connect(), Connection.of(self.endpoint))

    def footprint(self) -> Footprint:
        performance = self._stat().get("performance", {})
        if "storeTotalUse" not in performance:
            raise TargetError("griddb: /node/stat has no performance.storeTotalUse")
        keys = ("storeTotalUse", "dataFileSize", "dataFileAllocateSize")
        parts = {key: int(performance[key]) for key in keys if key in performance}
        return Footprint(bytes=parts["storeTotalUse"], note=FOOTPRINT_NOTE, parts=parts)

    def version(self) -> str:
        """e.g. ``5.9.0-… CE`` (``version`` of /node/stat)."""
        return str(self._stat().get("version") or "unknown")

    def settings(self) -> dict[str, Any]:
        stat = self._stat()
        performance = stat.get("performance", {})
        return {
            "version": stat.get("version"),
            "client": f"GridDB Java client {client_version()} (built from the release source) over JPype"
            " (+ tsbench Bulk helper)",
            "ingest": "GridStore.multiPut per batch (rows built in Java from column arrays)",
            "query": "devops/YCSB-TS: TQL per container, one GridStore.fetchAll per "
            f"{combine.FETCH_CONTAINERS} containers, combined on the client; iot: one SQL statement per "
            "query (JDBC driver "
            f"{DEFINITION.install_env['GRIDDB_JDBC_VERSION']}), answered by the server",
            "schema": self.capabilities.schema_note,
            "cluster": {k: stat.get("cluster", {}).get(k) for k in ("clusterName", "notificationMode")},
            "store": {k: performance.get(k) for k in ("storeMemoryLimit", "storeCompressionMode")},
            "recipe_datastore": tuning_sections()["dataStore"],
        }

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                try:
                    self._store.close()
                finally:
                    self._store = None


TARGET = GridDBTarget
