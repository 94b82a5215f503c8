"""GridDB's SQL interface: the official JDBC driver in this process's JVM (the iot query types).

The driver (``com.github.griddb:gridstore-jdbc``, pinned in ``definition.py``) is the newest on the
Maven Central our machines reach; it is not part of the server's source archive. ``install_client.sh``
fetches it with ``mvn`` and checks its sha256; ``client.java()`` puts it on the JVM's class path
beside the Java client. It talks to the node's ``sql`` service (fixed-list URL
``jdbc:gs:///<cluster>/<database>?notificationMember=<host>:<sql port>``).

One ``SqlConnection`` per query worker (a JDBC connection is used by one thread at a time), opened
on the first SQL plan. Results are small (iot answers: per truck, fleet or day): each cell is read
with its column's typed getter; SQL NULL becomes None.
"""

from __future__ import annotations

from typing import Any

from tsbench.targets.base import TargetError
from tsbench.targets.griddb.client import Connection, java, translated
from tsbench.targets.griddb.container import PORTS

DRIVER = "com.toshiba.mwcloud.gs.sql.Driver"
DEFAULT_SQL_PORT = PORTS["sql"]  # GridDB's default sql servicePort (docker, cloud)


def url(connection: Connection) -> str:
    """The driver's fixed-list URL for ``connection``'s cluster and SQL service."""
    port = connection.sql_port or DEFAULT_SQL_PORT
    return (
        f"jdbc:gs:///{connection.cluster}/{connection.database}?notificationMember={connection.host}:{port}"
    )


def _cell(result_set: Any, index: int, kind: str) -> Any:
    """Column ``index`` of the current row, read with the getter of its GridDB SQL type ``kind``
    (``ResultSetMetaData``'s type name); None for SQL NULL."""
    if kind in ("STRING", "UNKNOWN"):  # UNKNOWN: a column holding NULLs only
        value = result_set.getString(index)
        return None if value is None else str(value)
    if kind in ("LONG", "INTEGER", "SHORT", "BYTE"):
        value = int(result_set.getLong(index))
    elif kind in ("DOUBLE", "FLOAT"):
        value = float(result_set.getDouble(index))
    elif kind == "BOOL":
        value = bool(result_set.getBoolean(index))
    else:
        raise TargetError(f"griddb: an SQL answer column of type {kind}, which tsbench does not decode")
    return None if result_set.wasNull() else value


class SqlConnection:
    """One JDBC connection to the cluster's SQL service."""

    def __init__(self, connection: Connection):
        j = java()
        props = j.Properties()
        props.setProperty("user", connection.user)
        props.setProperty("password", connection.password)
        props.setProperty("applicationName", "tsbench")
        props.setProperty("loginTimeout", str(connection.failover_timeout_s))  # s, as the Java client's
        if connection.connection_route:
            props.setProperty("connectionRoute", connection.connection_route)
        where = (
            f"{connection.host}:{connection.sql_port or DEFAULT_SQL_PORT} (SQL, cluster {connection.cluster})"
        )
        with translated(f"connecting to {where}"):
            j.jpype.JClass(DRIVER)  # registers the driver with DriverManager
            manager = j.jpype.JClass("java.sql.DriverManager")
            self.connection = manager.getConnection(url(connection), props)

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        """The rows of one SELECT, each a tuple of Python values (None for SQL NULL)."""
        with translated(f"SQL query ({sql[:200]!r})"):
            statement = self.connection.createStatement()
            try:
                result_set = statement.executeQuery(sql)
                meta = result_set.getMetaData()
                kinds = [str(meta.getColumnTypeName(i)) for i in range(1, 1 + meta.getColumnCount())]
                rows = []
                while result_set.next():
                    rows.append(tuple(_cell(result_set, i, kind) for i, kind in enumerate(kinds, start=1)))
                return rows
            finally:
                statement.close()

    def close(self) -> None:
        with translated("closing the JDBC connection"):
            self.connection.close()
