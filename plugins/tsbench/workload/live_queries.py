"""The queries of a live phase: the run's logical queries, moved onto the live rows, every answer
still checked against the oracle.

A query whose window ``[s, e)`` (or exact instant) lies in the history has a twin per live cycle
``c``: the same query over ``[s + c·shift, e + c·shift)``, which holds exactly the history's rows
of ``[s, e)`` moved (``tsbench.workload.live_rows``). So the twin's answer is the history query's
reference answer with its instants moved: the check moves the received answer's instants back
(``unshifted``) and compares it with the reference of the history query.

A twin is sent only once its window is closed: every live row before its end has been
acknowledged (``Frontier.closed_before``). At each arrival the mix takes the next query type in
turn and sends that type's twin with the latest closed window, as a dashboard reads the most recent
complete data; before any twin is closed it sends the type's history queries in turn. Types that
read every row up to now (no window: lastpoint, iot's last-location and fuel types, the all-data
iot aggregates) are left out: their answer changes with every acknowledged write. So are types with
an end but no start (groupby-orderby-limit), whose moved copy would read the history as well.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from tsbench.workload.answer_columns import ColumnRows
from tsbench.workload.answers import Answer
from tsbench.workload.queries import LogicalQuery

TIME_COLUMNS = frozenset({"time", "bucket", "day"})  # answer columns that hold instants (ns)
MOVES_WITH_WRITES = "reads every row up to now (no window): its answer changes with every write"
READS_TO_ITS_END = "reads every row before its end (no start): a moved copy would read the history too"


def window_end_ns(query: LogicalQuery) -> int | None:
    """The end of the rows a query reads (exclusive); None when it reads every row up to now."""
    if query.at_ns is not None:
        return query.at_ns + 1
    if query.start_ns is not None and query.end_ns is not None:
        return query.end_ns
    return None


def moved(query: LogicalQuery, shift_ns: int, cycle: int) -> LogicalQuery:
    """``query`` over its window moved by ``shift_ns`` (cycle ``cycle``'s twin)."""

    def later(instant: int | None) -> int | None:
        return None if instant is None else instant + shift_ns

    return dataclasses.replace(
        query,
        id=f"{query.id}@live{cycle}",
        start_ns=later(query.start_ns),
        end_ns=later(query.end_ns),
        at_ns=later(query.at_ns),
    )


@dataclass(frozen=True)
class LiveQuery:
    """A query as sent in the live phase; ``answer_id`` names its reference answer, whose instants
    lie ``shift_ns`` before the query's (0: a history query)."""

    query: LogicalQuery
    answer_id: str
    shift_ns: int = 0

    @property
    def type(self) -> str:
        return self.query.type


class LiveMix:
    """The live queries of a run: every type with a window, in turn (see the module docstring)."""

    def __init__(self, queries: Sequence[LogicalQuery], shift_ns: int, cycles: int):
        self.excluded: dict[str, str] = {}
        self._history: dict[str, list[LiveQuery]] = {}
        self._twins: dict[str, list[tuple[int, LiveQuery]]] = {}  # type → (window end, twin), by end
        for query in queries:
            end = window_end_ns(query)
            if end is None:
                self.excluded[query.type] = (
                    READS_TO_ITS_END if query.end_ns is not None else MOVES_WITH_WRITES
                )
                continue
            self._history.setdefault(query.type, []).append(LiveQuery(query, query.id))
            for cycle in range(1, cycles + 1):
                twin = LiveQuery(moved(query, cycle * shift_ns, cycle), query.id, cycle * shift_ns)
                self._twins.setdefault(query.type, []).append((end + cycle * shift_ns, twin))
        for twins in self._twins.values():
            twins.sort(key=lambda item: item[0])
        self.types = list(self._history)

    def twins(self) -> Iterator[LiveQuery]:
        """Every twin of every type."""
        for twins in self._twins.values():
            for _, twin in twins:
                yield twin

    def pick(self, index: int, closed_before: int) -> LiveQuery:
        """Arrival ``index``'s query: the next type in turn, its latest twin whose window closed
        before ``closed_before`` (ns), else one of its history queries in turn."""
        qtype = self.types[index % len(self.types)]
        closed = [twin for end, twin in self._twins[qtype] if end <= closed_before]
        if closed:
            return closed[-1]
        history = self._history[qtype]
        return history[(index // len(self.types)) % len(history)]


def unshifted(answer: Answer, shift_ns: int) -> Answer:
    """``answer`` with the instants of its time columns moved ``shift_ns`` earlier (in place for an
    answer held by columns); the rows' order is unchanged."""
    if not shift_ns:
        return answer
    moving = [i for i, name in enumerate(answer.columns) if name in TIME_COLUMNS]
    if isinstance(answer.rows, ColumnRows):
        columns = answer.rows.columns()
        for i in moving:
            columns[i] = _earlier(columns[i], shift_ns)
        return answer
    rows = [
        tuple(
            cell - shift_ns if i in moving and isinstance(cell, int) else cell for i, cell in enumerate(row)
        )
        for row in answer.rows
    ]
    return Answer(answer.columns, rows, answer.key)


def _earlier(column: np.ndarray, shift_ns: int) -> np.ndarray:
    if column.dtype == np.int64:
        column -= shift_ns
        return column
    moved_back = np.empty(len(column), dtype=object)
    moved_back[:] = [cell - shift_ns if isinstance(cell, int) else cell for cell in column]
    return moved_back
