"""pymongo connections for both layouts: one ``MongoClient`` per load worker, query worker and target.

Clients connect directly to the one server (``directConnection``), return dates as UTC-aware
datetimes (``tz_aware``), and check the server at once (``ping``), so a wrong address fails with a
``TargetError`` naming it instead of on the first write. Credentials come from ``Endpoint.secrets``
(password) with ``Endpoint.user`` and ``extra["auth_source"]`` (default ``admin``); they never appear
in messages.
"""

from __future__ import annotations

from datetime import UTC
from typing import Any

from pymongo import MongoClient
from pymongo.database import Database
from pymongo.errors import BulkWriteError, ConnectionFailure, PyMongoError

from tsbench.targets.base import Endpoint, RowSession, TargetError
from tsbench.targets.mongodb.pipelines import parse_query_text

SERVER_SELECTION_TIMEOUT_MS = 30_000  # how long a client waits for the server (also covers restarts)
CONNECT_TIMEOUT_MS = 10_000
PORT_ROLE = "mongo"


def server_selection_timeout_ms(endpoint: Endpoint) -> int:
    """How long a client waits for the server: ``extra["server_selection_timeout_ms"]`` or 30 s."""
    return int(endpoint.extra.get("server_selection_timeout_ms") or SERVER_SELECTION_TIMEOUT_MS)


def client_options(endpoint: Endpoint, timeout_ms: int | None = None) -> dict[str, Any]:
    timeout_ms = timeout_ms or server_selection_timeout_ms(endpoint)
    options: dict[str, Any] = {
        "host": endpoint.host,
        "port": endpoint.port(PORT_ROLE),
        "directConnection": True,
        "tz_aware": True,
        "tzinfo": UTC,
        "appname": "tsbench",
        "serverSelectionTimeoutMS": timeout_ms,
        "connectTimeoutMS": min(CONNECT_TIMEOUT_MS, timeout_ms),
    }
    password = endpoint.secrets.get("password")
    if password:
        options.update(
            username=endpoint.user,
            password=password,
            authSource=endpoint.extra.get("auth_source", "admin"),
        )
    return options


def describe(error: BaseException, endpoint: Endpoint | None = None) -> str:
    """An error's message without credentials (a bulk write error: its first few write errors)."""
    if isinstance(error, BulkWriteError):
        details = error.details.get("writeErrors", [])
        text = f"{len(details)} write errors, e.g. " + "; ".join(str(d.get("errmsg")) for d in details[:3])
    else:
        text = str(error)
    password = endpoint.secrets.get("password") if endpoint else None
    return text.replace(password, "***") if password else text


def connect(endpoint: Endpoint, timeout_ms: int | None = None) -> MongoClient:
    """A client that has reached the server (TargetError naming host:port otherwise)."""
    timeout_ms = timeout_ms or server_selection_timeout_ms(endpoint)
    client: MongoClient = MongoClient(**client_options(endpoint, timeout_ms))
    try:
        client.admin.command("ping")
    except PyMongoError as error:
        client.close()
        where = f"{endpoint.host}:{endpoint.port(PORT_ROLE)}"
        if isinstance(error, ConnectionFailure):  # incl. server selection timeouts
            problem = f"cannot reach the server at {where} within {timeout_ms} ms"
        else:  # e.g. authentication failed
            problem = f"the server at {where} refused the connection"
        raise TargetError(f"mongodb: {problem}: {describe(error, endpoint)}") from None
    return client


def database_name(endpoint: Endpoint, target: str) -> str:
    """Each target has its own database, so both layouts can share one server without clashing."""
    return f"{endpoint.database or 'tsbench'}_{target}"


class MongoSession(RowSession):
    """One query worker: runs rendered query texts (``pipelines.query_text``) with ``aggregate``."""

    def __init__(self, database: Database, client: MongoClient | None = None):
        self.database = database
        self.client = client

    def execute(self, text: str) -> list[tuple[Any, ...]]:
        query = parse_query_text(text)
        try:
            cursor = self.database[query.collection].aggregate(query.pipeline)
            return [tuple(document.get(column) for column in query.columns) for document in cursor]
        except PyMongoError as error:
            raise TargetError(f"mongodb: aggregate on {query.collection} failed: {describe(error)}") from None

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
