"""Sessions of IoTDB's own client (``apache-iotdb``, the server's version): the one path tsbench
talks to IoTDB by, the Thrift session protocol on the DataNode's RPC port."""

from __future__ import annotations

import logging
from typing import Any

from iotdb.Session import Session

from tsbench.targets.base import Endpoint, TargetError

USER = "root"  # IoTDB's administrator: the only user a fresh server has
DEFAULT_PASSWORD = "root"  # a fresh server's: replaced by the instance's own at its first start
REFUSED_LOGIN = "801"  # TSStatusCode.WRONG_LOGIN_PASSWORD, the status of a refused login
FETCH_ROWS = 10_000  # rows per fetch of a query's result

# The client (logger "IoTDB") and thrift's socket log each failed connection attempt at ERROR, many
# times while a server starts; tsbench reports a failure itself, once, in a TargetError.
for _name in ("IoTDB", "thrift.transport.TSocket"):
    logging.getLogger(_name).setLevel(logging.CRITICAL)


def open_session(host: str, port: int, user: str, password: str) -> Session:
    """An open session (TargetError naming the endpoint when the server refuses or is not there;
    the password is never in the message)."""
    session = Session(host, port, user, password, fetch_size=FETCH_ROWS, enable_redirection=False)
    try:
        session.open(False)
    except Exception as error:  # the client raises its own exception types, and thrift's
        raise TargetError(f"iotdb: cannot open a session as {user} on {host}:{port}: {error}") from None
    return session


def endpoint_session(endpoint: Endpoint) -> Session:
    """An open session as the endpoint's user, with its password."""
    password = endpoint.secrets.get("password")
    if not password:
        raise TargetError("iotdb: the endpoint has no password")
    return open_session(endpoint.host, endpoint.port("rpc"), endpoint.user or USER, password)


def refused_login(error: TargetError) -> bool:
    """True when ``error`` is the server refusing a user name or password."""
    return f"{REFUSED_LOGIN}:" in str(error)


def result_columns(result: Any) -> tuple[list[str], list[list[Any]]]:
    """A query result's column names and its values by column, read a fetched chunk at a time.

    The client (2.0.1b0) decodes each fetched chunk into a data frame whose first column is the
    row's time and the rest the named columns; its own ``todf`` fails under pandas 3 and its
    ``next`` builds a record per row, so the chunks are read as they arrive. Text comes back as
    bytes and is decoded. ``Time`` is among the names only where the result has it."""
    names = list(result.get_column_names())
    timed = bool(names) and names[0] == "Time"
    columns: list[list[Any]] = [[] for _ in names]
    chunks = result.iotdb_rpc_data_set
    while result.has_next():
        frame = chunks.data_frame
        parts = [frame.iloc[:, i].tolist() for i in range(frame.shape[1])]
        for index in range(len(names)):
            source = parts[index] if timed else parts[index + 1]
            columns[index].extend(value.decode() if isinstance(value, bytes) else value for value in source)
        chunks.has_cached_data_frame = False
        chunks.data_frame = None
    return names, columns


def query(session: Session, sql: str) -> tuple[list[str], list[list[Any]]]:
    """The columns of one statement's whole result (TargetError with the SQL when it fails)."""
    try:
        result = session.execute_query_statement(sql)
        try:
            return result_columns(result)
        finally:
            result.close_operation_handle()
    except TargetError:
        raise
    except Exception as error:  # the client raises RuntimeError("<status>: <message>"), or thrift's
        raise TargetError(f"iotdb: {error}\n{sql}") from None
