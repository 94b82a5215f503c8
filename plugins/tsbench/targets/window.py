"""The half-open time window of a query, as every dialect writes it: ``column >= start`` and
``column < end``, each bound a literal of the dialect's own (``literal``: nanoseconds → text)."""

from __future__ import annotations

from collections.abc import Callable

from tsbench.workload.iot_query_types import window_of
from tsbench.workload.queries import LogicalQuery


def window_clauses(query: LogicalQuery, column: str, literal: Callable[[int], str]) -> list[str]:
    """The bounds the query has (none for a type over all the data), lower bound first."""
    clauses = []
    if query.start_ns is not None:
        clauses.append(f"{column} >= {literal(int(query.start_ns))}")
    if query.end_ns is not None:
        clauses.append(f"{column} < {literal(int(query.end_ns))}")
    return clauses


def bounded_window(query: LogicalQuery, column: str, literal: Callable[[int], str]) -> str:
    """Both bounds joined with AND, for a windowed type's query (``ValueError`` without a window)."""
    start_ns, end_ns = window_of(query)
    return f"{column} >= {literal(start_ns)} AND {column} < {literal(end_ns)}"
