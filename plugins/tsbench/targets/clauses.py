"""Clauses every SQL-like dialect writes alike: the ``WHERE`` of some conditions and the filter on a
query's hosts, each value a literal of the dialect's own (``literal``: text → quoted text)."""

from __future__ import annotations

from collections.abc import Callable

from tsbench.workload.queries import LogicalQuery


def where_clause(*conditions: str) -> str:
    """``" WHERE a AND b"`` of the non-empty conditions, or ``""`` when there are none."""
    present = [condition for condition in conditions if condition]
    return f" WHERE {' AND '.join(present)}" if present else ""


def host_clauses(query: LogicalQuery, column: str, literal: Callable[[str], str]) -> list[str]:
    """``column = 'h'`` for one host, ``column IN (…)`` for several, none for every host."""
    if query.hosts is None:
        return []
    if len(query.hosts) == 1:
        return [f"{column} = {literal(query.hosts[0])}"]
    return [f"{column} IN ({', '.join(literal(host) for host in query.hosts)})"]
