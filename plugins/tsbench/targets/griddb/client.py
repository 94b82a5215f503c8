"""The GridDB client: the official Java client of the server's release in this process's JVM.

The client jar (``gridstore``) is built from the same pinned source archive as the server
(``install_client.sh``), so client and server are one release. griddb_python 5.9 is pure Python over
JPype and that client, but it imports the Arrow adapter jar ``gridstore-arrow`` when it is imported,
which the Maven Central our machines reach lacks. So tsbench does what griddb_python does underneath
— JPype + the Java client — and moves whole columns through its own small Java class
``tsbench.griddb.Bulk`` (``java/``, compiled by ``install_client.sh``): a batch crosses the language
boundary as a few primitive arrays, never cell by cell.

The JVM is started once per process (JPype cannot restart it) with the client jars on its class path
(and GridDB's JDBC driver, for the SQL queries of ``jdbc.py``);
``TSBENCH_GRIDDB_JVM_OPTIONS`` adds JVM options (e.g. ``-Xmx8g`` for very large query results).
A ``Store`` is one GridStore connection: not thread-safe, so every load worker and query worker has
its own. Java exceptions become ``TargetError`` (GridDB's message carries its error code).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jpype
import numpy as np
import pyarrow as pa

from tsbench.runtimes.definition import opt_dir
from tsbench.targets.base import Endpoint, TargetError
from tsbench.targets.griddb import signals
from tsbench.targets.griddb.combine import StepResult
from tsbench.targets.griddb.config import CLUSTER
from tsbench.targets.griddb.definition import DEFINITION
from tsbench.targets.griddb.layout import DOUBLE, LONG, STRING, TIME, Column, Layout
from tsbench.targets.griddb.shape import Payload, StringColumn

JAVA_SOURCE = Path(__file__).resolve().parent / "java" / "tsbench" / "griddb" / "Bulk.java"
INSTALL_SCRIPT = Path(__file__).resolve().parent / "install_client.sh"

USER = "admin"
DATABASE = "public"
FAILOVER_TIMEOUT_S = 30  # how long the client retries an unreachable cluster before failing
TRANSACTION_TIMEOUT_S = 600

_JVM_LOCK = threading.Lock()


def client_version() -> str:
    """The Java client's version: the server's (both built from one source archive)."""
    return DEFINITION.pinned_version()


def classpath() -> list[Path]:
    """The three jars: the Java client (named by its pinned source's tree hash), the compiled ``Bulk``
    helper (named by its source's sha256) and the JDBC driver (GridDB's SQL interface, ``jdbc.py``)."""
    folder = opt_dir() / "griddb-client"
    version = client_version()
    sha12 = hashlib.sha256(JAVA_SOURCE.read_bytes()).hexdigest()[:12]
    jdbc = DEFINITION.install_env["GRIDDB_JDBC_VERSION"]
    tree12 = DEFINITION.install_env["GRIDDB_SOURCE_TREE_SHA256"][:12]
    return [
        folder / f"gridstore-{version}-{tree12}.jar",
        folder / f"tsbench-griddb-bulk-{sha12}-gs{version}.jar",
        folder / f"gridstore-jdbc-{jdbc}.jar",
    ]


def install() -> list[Path]:
    """Run ``install_client.sh`` unless both jars are in place; the class path."""
    jars = classpath()
    if all(jar.is_file() for jar in jars):
        return jars
    result = subprocess.run(
        ["bash", str(INSTALL_SCRIPT)],
        capture_output=True,
        text=True,
        env={**os.environ, **DEFINITION.install_environment()},
    )
    if result.returncode or not all(jar.is_file() for jar in jars):
        tail = "\n".join((result.stdout + result.stderr).splitlines()[-10:])
        raise TargetError(f"griddb: {INSTALL_SCRIPT.name} failed (exit {result.returncode}):\n{tail}")
    return jars


_JAVA: SimpleNamespace | None = None


def _no_python_fault_handler() -> None:
    """Switch Python's fault handler off (pytest and ``PYTHONFAULTHANDLER`` switch it on) before the
    JVM starts in this process: the JVM raises SIGSEGV/SIGBUS itself (JIT safepoint polls, implicit
    null checks) and handles them, and a Python handler installed first can take one of them and
    kill the process (JPype's user guide, on JIT and fault handlers) — seen here as pytest workers
    dying at random inside the JVM's tests."""
    import faulthandler

    if faulthandler.is_enabled():
        faulthandler.disable()


def java() -> SimpleNamespace:
    """The Java classes tsbench uses, starting this process's JVM on first use."""
    global _JAVA  # one JVM per process, so one set of classes
    with _JVM_LOCK:
        if _JAVA is not None:
            return _JAVA
        if not jpype.isJVMStarted():
            jars = install()
            options = os.environ.get("TSBENCH_GRIDDB_JVM_OPTIONS", "").split()
            _no_python_fault_handler()
            jpype.startJVM(*options, classpath=[str(jar) for jar in jars], convertStrings=False)
            signals.remember()
        try:
            _JAVA = SimpleNamespace(
                jpype=jpype,
                Bulk=jpype.JClass("tsbench.griddb.Bulk"),
                GridStoreFactory=jpype.JClass("com.toshiba.mwcloud.gs.GridStoreFactory"),
                ContainerInfo=jpype.JClass("com.toshiba.mwcloud.gs.ContainerInfo"),
                ContainerType=jpype.JClass("com.toshiba.mwcloud.gs.ContainerType"),
                ColumnBuilder=jpype.JClass("com.toshiba.mwcloud.gs.ColumnInfo$Builder"),
                GSType=jpype.JClass("com.toshiba.mwcloud.gs.GSType"),
                Properties=jpype.JClass("java.util.Properties"),
                ArrayList=jpype.JClass("java.util.ArrayList"),
                HashMap=jpype.JClass("java.util.HashMap"),
            )
        except TypeError as error:  # JClass of a class the running JVM cannot load
            raise TargetError(
                f"griddb: this process's JVM was started without the GridDB client jars ({error}); "
                "GridDB needs the JVM that tsbench.targets.griddb.client starts"
            ) from None
        return _JAVA


@contextmanager
def translated(action: str) -> Iterator[None]:
    """Java exceptions (GridDB's GSException and others) as TargetError naming ``action``; the JVM's
    signal handlers are put back first, should anything have replaced them (``signals``)."""
    signals.restore()
    try:
        yield
    except jpype.JException as error:
        message = str(error.getMessage() or error.getClass().getSimpleName())
        raise TargetError(f"griddb: {action} failed: {message[:600]}") from None


@dataclass(frozen=True)
class Connection:
    """How to reach a GridDB cluster (fixed-list mode: the node's transaction address)."""

    host: str
    port: int
    cluster: str
    user: str
    password: str
    database: str = DATABASE
    failover_timeout_s: int = FAILOVER_TIMEOUT_S
    connection_route: str | None = None  # "PUBLIC": use the nodes' public addresses (cloud, NAT)
    sql_port: int | None = None  # the node's SQL service (JDBC); None: GridDB's default port

    @classmethod
    def of(cls, endpoint: Endpoint) -> Connection:
        extra = endpoint.extra
        return cls(
            host=endpoint.host,
            port=endpoint.port("transaction"),
            cluster=str(extra.get("cluster", CLUSTER)),
            user=endpoint.user or USER,
            password=endpoint.secrets.get("password", ""),
            database=endpoint.database or DATABASE,
            failover_timeout_s=int(extra.get("failover_timeout_s", FAILOVER_TIMEOUT_S)),
            connection_route=extra.get("connection_route"),
            sql_port=endpoint.ports.get("sql"),
        )

    def __repr__(self) -> str:  # never show the password
        return f"Connection({self.user}@{self.host}:{self.port}, cluster={self.cluster})"


def _column_info(j: SimpleNamespace, column: Column, key: bool = False) -> Any:
    kinds = {LONG: j.GSType.LONG, DOUBLE: j.GSType.DOUBLE, STRING: j.GSType.STRING}
    builder = j.ColumnBuilder().setName(column.name).setType(kinds[column.kind])
    return builder.setNullable(not key).toInfo()


class Store:
    """One GridStore connection (one thread at a time)."""

    def __init__(self, connection: Connection, container_cache: int = 10_000, check: bool = True):
        """``check`` asks the cluster once (and logs in), so an unreachable one fails here; without
        it nothing is sent until the first operation (rows can be built offline)."""
        self.j = java()
        self.connection = connection
        props = self.j.Properties()
        settings = {
            "notificationMember": f"{connection.host}:{connection.port}",
            "clusterName": connection.cluster,
            "database": connection.database,
            "user": connection.user,
            "password": connection.password,
            "failoverTimeout": str(connection.failover_timeout_s),
            "transactionTimeout": str(TRANSACTION_TIMEOUT_S),
            "containerCacheSize": str(container_cache),
            "applicationName": "tsbench",
        }
        if connection.connection_route:
            settings["connectionRoute"] = connection.connection_route
        for key, value in settings.items():
            props.setProperty(key, value)
        where = f"{connection.host}:{connection.port} (cluster {connection.cluster})"
        with translated(f"connecting to {where}"):
            self.store = self.j.GridStoreFactory.getInstance().getGridStore(props)
            if check:  # getGridStore only records the settings; this asks the cluster (and logs in)
                self.store.getContainerInfo("tsbench_connection_check")
        self._schemas: dict[str, Any] = {}

    # -- schema ------------------------------------------------------------------------------------

    def schema(self, layout: Layout, keyed: bool = True) -> Any:
        """The Java ContainerInfo of ``layout``'s TIME_SERIES containers (row key ``time``), or with
        ``keyed`` False of its nameless COLLECTION (the same columns, no row key); cached."""
        if (layout.measurement, keyed) not in self._schemas:
            j = self.j
            columns = j.ArrayList()
            key = j.ColumnBuilder().setName(TIME).setType(j.GSType.TIMESTAMP).setNullable(False).toInfo()
            columns.add(key)
            for column in layout.columns:
                columns.add(_column_info(j, column))
            kind = j.ContainerType.TIME_SERIES if keyed else j.ContainerType.COLLECTION
            self._schemas[layout.measurement, keyed] = j.ContainerInfo(
                layout.measurement, kind, columns, keyed
            )
        return self._schemas[layout.measurement, keyed]

    def put_measurement(self, name: str, layout: Layout, keyed: bool = True) -> None:
        """Create a container of ``layout``: TIME_SERIES, or with ``keyed`` False a COLLECTION
        without a row key (a measurement's rows without an entity)."""
        info = self.j.ContainerInfo(self.schema(layout, keyed))
        info.setName(name)
        with translated(f"creating {info.getType()} container {name}"):
            self.store.putContainer(name, info, False).close()

    def collection_schema(self, name: str, columns: Sequence[Column]) -> Any:
        """The Java ContainerInfo of a COLLECTION keyed by its first column."""
        j = self.j
        infos = j.ArrayList()
        for index, column in enumerate(columns):
            infos.add(_column_info(j, column, key=index == 0))
        return j.ContainerInfo(name, j.ContainerType.COLLECTION, infos, True)

    def put_collection(self, name: str, columns: Sequence[Column]) -> Any:
        """Create a COLLECTION keyed by the first column; returns its schema."""
        info = self.collection_schema(name, columns)
        with translated(f"creating COLLECTION {name}"):
            self.store.putContainer(name, info, False).close()
        return info

    def drop(self, name: str) -> None:
        with translated(f"dropping container {name}"):
            self.store.dropContainer(name)

    def container_names(self) -> list[str]:
        """Every container of the database (one request per partition)."""
        names: list[str] = []
        with translated("listing containers"):
            controller = self.store.getPartitionController()
            try:
                for partition in range(int(controller.getPartitionCount())):
                    names.extend(str(n) for n in controller.getContainerNames(partition, 0, None))
            finally:
                controller.close()
        return names

    # -- rows --------------------------------------------------------------------------------------

    def rows(self, payload: Payload) -> Any:
        """The Java rows of a payload (``Map<container, List<Row>>``), built by ``Bulk.rows``."""
        j, jp = self.j, self.j.jpype
        values, codes, nulls = [], [], []
        for value, null in zip(payload.values, payload.nulls, strict=True):
            if isinstance(value, StringColumn):
                values.append(jp.JArray(jp.JString)(value.dictionary))
                codes.append(jp.JArray(jp.JInt)(value.codes.astype(np.int32, copy=False)))
            elif value.dtype == np.int64:
                values.append(jp.JArray(jp.JLong)(value))
                codes.append(None)
            else:
                values.append(jp.JArray(jp.JDouble)(value.astype(np.float64, copy=False)))
                codes.append(None)
            nulls.append(None if null is None else jp.JArray(jp.JBoolean)(null.astype(bool, copy=False)))
        with translated(f"building {payload.rows} {payload.layout.measurement} rows"):
            return j.Bulk.rows(
                self.store,
                self.schema(payload.layout, payload.keyed),
                jp.JArray(jp.JString)(payload.containers),
                jp.JArray(jp.JInt)(payload.offsets.astype(np.int32, copy=False)),
                jp.JArray(jp.JLong)(payload.millis.astype(np.int64, copy=False)),
                jp.JArray(jp.JObject)(values),
                jp.JArray(jp.JInt, 2)(codes),
                jp.JArray(jp.JBoolean, 2)(nulls),
            )

    def multi_put(self, payloads: Sequence[Payload]) -> int:
        """Write the payloads of one batch (``shape``) with one ``GridStore.multiPut``; rows accepted."""
        if not payloads:
            return 0
        batch = self.rows(payloads[0])  # a LinkedHashMap: containers in payload order
        for payload in payloads[1:]:
            batch.putAll(self.rows(payload))
        rows = sum(payload.rows for payload in payloads)
        where = f"{batch.size()} {payloads[0].layout.measurement} containers"
        with translated(f"multi-put of {rows} rows into {where}"):
            self.store.multiPut(batch)
        return rows

    def string_rows(self, schema: Any, columns: Sequence[Sequence[str]]) -> Any:
        """Java rows of an all-STRING container: ``columns[k][r]`` is column k of row r."""
        jp = self.j.jpype
        arrays = jp.JArray(jp.JString, 2)([jp.JArray(jp.JString)(list(c)) for c in columns])
        with translated(f"building rows of {schema.getName()}"):
            return self.j.Bulk.stringRows(self.store, schema, arrays)

    def put_strings(self, name: str, schema: Any, columns: Sequence[Sequence[str]]) -> None:
        """Rows of an all-STRING collection, one multi-put."""
        batch = self.j.HashMap()
        batch.put(name, self.string_rows(schema, columns))
        with translated(f"writing {name}"):
            self.store.multiPut(batch)

    def fetch(self, containers: Sequence[str], tqls: Sequence[str]) -> list[StepResult]:
        """Run ``tqls[i]`` on ``containers[i]`` with one fetchAll; one result per query."""
        jp = self.j.jpype
        if not containers:
            return []
        with translated(f"fetchAll of {len(tqls)} TQL queries (first: {tqls[0]!r} on {containers[0]})"):
            fetched = self.j.Bulk.fetch(
                self.store, jp.JArray(jp.JString)(list(containers)), jp.JArray(jp.JString)(list(tqls))
            )
            return step_results(fetched)

    def close(self) -> None:
        with translated("closing the GridStore connection"):
            self.store.close()


def step_results(fetched: Any) -> list[StepResult]:
    """A ``Bulk.Fetched`` as one ``StepResult`` per query: its slice of the concatenated rows (an empty
    table when it returned none, None when its container is missing) and its aggregate."""
    counts = np.asarray(fetched.counts).astype(np.int64)
    table = None if fetched.rows is None else columns_table(fetched.rows)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    results = []
    for index, missing in enumerate(fetched.missing):
        part = None
        if not missing:
            empty = pa.table({TIME: pa.array([], pa.int64())})
            part = empty if table is None else table.slice(int(offsets[index]), int(counts[index]))
        long, double = fetched.longs[index], fetched.doubles[index]
        results.append(
            StepResult(
                table=part,
                long=None if long is None else int(long),
                double=None if double is None else float(double),
            )
        )
    return results


def columns_table(columns: Any) -> pa.Table:
    """A ``Bulk.Columns`` as an Arrow table: ``time`` (int64 ms) and the container's columns."""
    # np.asarray reads a Java primitive array through the buffer protocol (one memcpy, no per-cell
    # step); .copy() detaches the result from the Java array.
    arrays = {TIME: pa.array(np.asarray(columns.millis).astype(np.int64, copy=True))}
    kinds = {0: LONG, 1: DOUBLE, 2: STRING}  # Bulk.LONG, Bulk.DOUBLE, Bulk.STRING
    for index, name in enumerate(columns.names):
        kind = kinds[int(columns.kinds[index])]
        mask = np.asarray(columns.nulls[index]).astype(bool, copy=True)
        values = columns.values[index]
        if kind == STRING:
            data = np.array([None if v is None else str(v) for v in values], dtype=object)
        else:
            data = np.asarray(values).astype(np.float64 if kind == DOUBLE else np.int64, copy=True)
        arrays[str(name)] = pa.array(data, mask=mask if mask.any() else None)
    return pa.table(arrays)
