"""What both MongoDB targets share: connections, schema reset, writers, flush, counts, footprint.

A subclass names its ``Layout`` (documents, indexes, writes) and renders queries with its dialect.
Writes use write concern ``{w: 1, j: false}`` (acknowledged by the server, journaled within
``storage.journal.commitIntervalMs``, 100 ms); ``flush()`` then makes one ``{w: 1, j: true}`` write,
which returns only after the journal — one sequential log holding every earlier write — is on disk.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

import pyarrow as pa
import pymongo
from pymongo import MongoClient, WriteConcern
from pymongo.database import Database
from pymongo.errors import PyMongoError

from tsbench.targets.base import Endpoint, Footprint, Target, TargetError
from tsbench.targets.mongodb.client import MongoSession, connect, database_name, describe
from tsbench.targets.mongodb.layout import Layout
from tsbench.targets.mongodb.server import MongoServer
from tsbench.workload.usecases import UseCase

LOAD_WRITE_CONCERN = WriteConcern(w=1, j=False)
FLUSH_WRITE_CONCERN = WriteConcern(w=1, j=True)
FLUSH_COLLECTION = "tsbench_flush"  # one tiny document; its j:true update is the durability barrier
FOOTPRINT_NOTE = (
    "MongoDB's own accounting per collection ($collStats storageStats): storageSize (WiredTiger "
    "blocks of the collection, compressed, incl. free space it will reuse; for a time-series collection "
    "its buckets) + totalIndexSize (all its indexes). Not included: the journal (WiredTiger log files "
    "in dbPath/journal, up to 100 MB each, recycled), which MongoDB does not report — the runtime's "
    "footprint on disk counts the whole dbPath."
)
SERVER_PARAMETERS = ("featureCompatibilityVersion", "journalCommitInterval", "syncdelay")


class MongoWriter:
    """One load worker: its own client; each batch goes out as one unordered bulk request."""

    def __init__(self, client: MongoClient, database: Database, layout: Layout, endpoint: Endpoint):
        self.client = client
        self.database = database
        self.layout = layout
        self.endpoint = endpoint

    def write(self, measurement: str, batch: pa.RecordBatch) -> int:
        if not batch.num_rows:
            return 0
        collection = self.database.get_collection(measurement, write_concern=LOAD_WRITE_CONCERN)
        try:
            return self.layout.write(collection, measurement, batch)
        except PyMongoError as error:
            raise TargetError(
                f"mongodb: writing {batch.num_rows} rows to {measurement} failed: "
                f"{describe(error, self.endpoint)}"
            ) from None

    def close(self) -> None:
        self.client.close()


class MongoTarget(Target):
    """Base of the MongoDB targets (not a target itself: it has no layout)."""

    layout_type: ClassVar[type[Layout]]

    @staticmethod
    def server_recipe() -> type:
        return MongoServer

    def __init__(self, endpoint: Endpoint, use_case: UseCase, tags: pa.Table):
        super().__init__(endpoint, use_case, tags)
        self._lock = threading.Lock()
        self._client: MongoClient | None = None
        self._layout: Layout | None = None

    # -- connections -------------------------------------------------------------------------------

    @property
    def database_name(self) -> str:
        return database_name(self.endpoint, self.name)

    def client(self) -> MongoClient:
        """The target's own client (created on first use; thread-safe)."""
        with self._lock:
            if self._client is None:
                self._client = connect(self.endpoint)
            return self._client

    def database(self) -> Database:
        return self.client()[self.database_name]

    def layout(self) -> Layout:
        with self._lock:
            if self._layout is None:
                self._layout = self.layout_type(self.use_case, self.tags)
            return self._layout

    def _run(self, what: str, action: Any) -> Any:
        try:
            return action()
        except PyMongoError as error:
            raise TargetError(f"mongodb: {what} failed: {describe(error, self.endpoint)}") from None

    # -- contract ----------------------------------------------------------------------------------

    def create_schema(self) -> None:
        """Drop this target's database (everything a previous attempt left) and create every
        measurement's collection with its indexes."""
        layout = self.layout()

        def create() -> None:
            self.client().drop_database(self.database_name)
            database = self.database()
            for measurement in self.use_case.measurements:
                layout.create(database, measurement)

        self._run("create_schema", create)

    def writer(self) -> MongoWriter:
        client = connect(self.endpoint)
        return MongoWriter(client, client[self.database_name], self.layout(), self.endpoint)

    def flush(self) -> None:
        """One ``{w: 1, j: true}`` write: returns when the journal holds every earlier write."""
        marker = self.database().get_collection(FLUSH_COLLECTION, write_concern=FLUSH_WRITE_CONCERN)
        self._run("flush", lambda: marker.update_one({"_id": "flush"}, {"$inc": {"n": 1}}, upsert=True))

    def row_count(self, measurement: str) -> int:
        self.use_case.measurement(measurement)  # KeyError for a measurement the use case lacks
        return self._run("row_count", lambda: self.layout().count(self.database()[measurement]))

    def session(self) -> MongoSession:
        client = connect(self.endpoint)
        return MongoSession(client[self.database_name], client)

    def storage_stats(self, name: str) -> dict[str, Any]:
        """``$collStats`` storageStats of a collection (of its buckets, for a time-series one)."""
        database = self.database()
        try:
            return next(database[name].aggregate([{"$collStats": {"storageStats": {}}}]))["storageStats"]
        except PyMongoError:
            # Servers that do not answer $collStats on the time-series view answer on its buckets.
            buckets = database[f"system.buckets.{name}"]
            return self._run(
                f"$collStats of {name}",
                lambda: next(buckets.aggregate([{"$collStats": {"storageStats": {}}}]))["storageStats"],
            )

    def footprint(self) -> Footprint:
        parts: dict[str, int] = {}
        for measurement in self.use_case.measurements:
            stats = self.storage_stats(measurement.name)
            parts[measurement.name] = int(stats.get("storageSize", 0))
            parts[f"{measurement.name} indexes"] = int(stats.get("totalIndexSize", 0))
        return Footprint(bytes=sum(parts.values()), note=FOOTPRINT_NOTE, parts=parts)

    def version(self) -> str:
        return str(self._run("buildInfo", lambda: self.client().server_info()["version"]))

    def settings(self) -> dict[str, Any]:
        admin = self.client().admin
        server: dict[str, Any] = {}
        for name in SERVER_PARAMETERS:
            try:
                server[name] = admin.command("getParameter", 1, **{name: 1}).get(name)
            except PyMongoError:
                server[name] = None
        status = self._run("serverStatus", lambda: admin.command("serverStatus"))
        cache = status.get("wiredTiger", {}).get("cache", {}).get("maximum bytes configured")
        layout = self.layout()
        return {
            "layout": layout.name,
            "database": self.database_name,
            "collections": {
                m.name: {"options": layout.collection_options(m), "indexes": layout.indexes(m)}
                for m in self.use_case.measurements
            },
            "write_concern": {"load": LOAD_WRITE_CONCERN.document, "flush": FLUSH_WRITE_CONCERN.document},
            "driver": f"pymongo {pymongo.version}",
            "storage_engine": status.get("storageEngine", {}).get("name"),
            "wiredtiger_cache_bytes": cache,
            "server": server,
        }

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None
