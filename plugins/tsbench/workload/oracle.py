"""Reference answers: every logical query answered from the dataset's Parquet files by DuckDB.

The oracle is the yardstick every target's answer is compared with. It computes in integer ns and
float64; buckets are ``floor(epoch_ns / bucket_ns) * bucket_ns`` (aligned to the Unix epoch).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from tsbench.progress import Progress
from tsbench.workload.answers import Answer, answer_columns
from tsbench.workload.extract import ExtractError, KeptSpans
from tsbench.workload.iot_oracle import IOT_ORACLE, measurement_view
from tsbench.workload.kept import Keeps, kept_rows_sql
from tsbench.workload.manifest import ExtractFacts
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_types import QUERY_TYPES, Kind
from tsbench.workload.scan import bounded_connection

ORACLE_VERSION = "1"  # bump when an answer could change: cached reference answers are keyed by it
FETCH_ROWS = 65_536  # rows fetched from DuckDB and normalised at a time


def _host_filter(query: LogicalQuery, params: list[Any]) -> str:
    if query.hosts is None:
        return "TRUE"
    params.append(list(query.hosts))
    return "list_contains(?, entity)"


def _window(query: LogicalQuery, params: list[Any], end_only: bool = False) -> str:
    if end_only:
        params.append(query.end_ns)
        return "t < ?"
    params.extend([query.start_ns, query.end_ns])
    return "t >= ? AND t < ?"


def oracle_sql(query: LogicalQuery) -> tuple[str, list[Any]]:
    """DuckDB SQL (over a view ``rows_ns`` of the queried measurement with integer ns column ``t``
    and the entity key as ``entity``) and its parameters."""
    qtype = query.query_type
    params: list[Any] = []
    if qtype.kind in IOT_ORACLE:
        return IOT_ORACLE[qtype.kind](query, params), params
    fields = list(query.fields)
    all_fields = ", ".join(fields)
    if qtype.kind in (Kind.GROUPBY, Kind.GROUPBY_HOST):
        agg = {"max": "max", "mean": "avg"}[qtype.agg]
        values = ", ".join(f"{agg}({f})::DOUBLE" for f in fields)
        bucket = f"(t // {qtype.bucket_ns}) * {qtype.bucket_ns}"
        by_host = ", entity" if qtype.kind is Kind.GROUPBY_HOST else ""
        where = f"{_window(query, params)} AND {_host_filter(query, params)}"
        return f"SELECT {bucket} AS b{by_host}, {values} FROM rows_ns WHERE {where} GROUP BY ALL", params
    if qtype.kind is Kind.ORDERBY_LIMIT:
        bucket = f"(t // {qtype.bucket_ns}) * {qtype.bucket_ns}"
        where = _window(query, params, end_only=True)
        return (
            f"SELECT {bucket} AS b, max({fields[0]})::DOUBLE FROM rows_ns WHERE {where} "
            f"GROUP BY b ORDER BY b DESC LIMIT {qtype.limit}",
            params,
        )
    if qtype.kind is Kind.HIGH_CPU:
        where = (
            f"{_window(query, params)} AND {_host_filter(query, params)} AND usage_user > {qtype.threshold}"
        )
        return f"SELECT t, entity, {all_fields} FROM rows_ns WHERE {where}", params
    if qtype.kind is Kind.LASTPOINT:  # each entity's last instant, then its rows at that instant
        last = "(SELECT entity, max(t) AS t FROM rows_ns GROUP BY entity)"
        return (
            f"SELECT entity, t, {all_fields} FROM rows_ns SEMI JOIN {last} AS last USING (entity, t) "
            "QUALIFY row_number() OVER (PARTITION BY entity ORDER BY t DESC) = 1",
            params,
        )
    if qtype.kind is Kind.READ:
        params.append(query.at_ns)
        return (
            f"SELECT t, entity, {all_fields} FROM rows_ns WHERE t = ? AND {_host_filter(query, params)}",
            params,
        )
    if qtype.kind is Kind.SCAN:
        where = f"{_window(query, params)} AND {_host_filter(query, params)}"
        return f"SELECT t, entity, {all_fields} FROM rows_ns WHERE {where}", params
    if qtype.kind is Kind.RANGE_AGG:
        agg = {"count": "count", "avg": "avg", "sum": "sum"}[qtype.agg]
        where = f"{_window(query, params)} AND {_host_filter(query, params)}"
        return f"SELECT {agg}({fields[0]})::DOUBLE FROM rows_ns WHERE {where}", params
    raise ValueError(f"the oracle has no rule for query kind {qtype.kind}")


def sorted_sql(sql: str, columns: list[str], key: list[str]) -> str:
    """``sql``'s rows in answer order (``Answer``'s sort): by the key columns, then the others so that
    the order is fixed, NULLs last; sorted by DuckDB, spilling to disk rather than held in Python."""
    first = [columns.index(name) for name in key]
    order = first + [index for index in range(len(columns)) if index not in first]
    return f"SELECT * FROM ({sql}) ORDER BY " + ", ".join(f"{i + 1} NULLS LAST" for i in order)


@dataclass
class StreamedAnswer:
    """A reference answer read as it is written (``answer_file.write_answers``): its rows already in
    answer order and normalised, a part at a time; one pass, never held whole."""

    columns: list[str]
    key: list[str]
    parts: Iterator[list[tuple[Any, ...]]]

    def row_chunks(self, size: int = 0) -> Iterator[list[tuple[Any, ...]]]:
        """The rows in order, in the parts they were fetched in (``size`` is not used)."""
        return self.parts


class Oracle:
    """Answers logical queries over one dataset (anything with a ``glob(measurement)`` method),
    over the rows a database that ``keeps`` copies so holds (``workload.kept``)."""

    def __init__(self, dataset: Any, threads: int | None = None, keeps: Keeps = Keeps.ALL):
        self.connection = bounded_connection()
        self.keeps = keeps
        extract: ExtractFacts | None = getattr(dataset, "extract", None)  # a streamed dataset's
        self.kept = None if extract is None else KeptSpans(extract, dataset.end_ns, dataset.interval_ns)
        if threads:
            self.connection.execute(f"SET threads = {int(threads)}")
        use_case = dataset.use_case
        source = kept_rows_sql(str(dataset.glob(use_case.queried)), use_case.entity_key, keeps)
        self.connection.execute(
            f'CREATE VIEW rows_ns AS SELECT epoch_ns(time) AS t, "{use_case.entity_key}" AS entity, '
            f"* EXCLUDE (time) FROM {source}"
        )
        self._measurement_views(dataset)

    def _measurement_views(self, dataset: Any) -> None:
        """A view per measurement a query type of the use case names (iot: readings, diagnostics),
        each row with its entity's tags (``iot_oracle.measurement_view``)."""
        use_case = dataset.use_case
        named = {q.measurement for q in QUERY_TYPES.values() if q.family in use_case.query_families}
        if not named - {""}:
            return
        tags = str(dataset.path / "tags.parquet").replace("'", "''")
        self.connection.execute(f"CREATE VIEW entity_tags AS SELECT * FROM read_parquet('{tags}')")
        for measurement in sorted(named - {""}):
            source = kept_rows_sql(str(dataset.glob(measurement)), use_case.entity_key, self.keeps)
            self.connection.execute(measurement_view(measurement, source, use_case.entity_key))

    def _fetched_parts(self, query: LogicalQuery) -> Iterator[list[Any]]:
        """The answer's raw rows in answer order, ``FETCH_ROWS`` at a time (ExtractError for a query
        a streamed dataset's extract does not keep the rows of)."""
        if self.kept is not None and not self.kept.keeps(query):
            raise ExtractError(f"{query.id} reads rows the streamed dataset's extract did not keep")
        sql, params = oracle_sql(query)
        columns, key = answer_columns(query.query_type, query.fields)
        cursor = self.connection.execute(sorted_sql(sql, columns, key), params)
        return iter(lambda: cursor.fetchmany(FETCH_ROWS), [])

    def answer(self, query: LogicalQuery) -> Answer:
        """The reference answer in memory, each fetched part normalised before the next is fetched
        (a large answer is held by columns, never as one list of Python tuples)."""
        return Answer.adopt_parts(query.query_type, self._fetched_parts(query), query.fields)

    def streamed(self, query: LogicalQuery) -> StreamedAnswer:
        """The reference answer as ``answer`` gives it, but a part at a time: memory does not grow
        with the answer's rows (a high-cpu-all answer at 1 B rows is 3.0 GB of JSON lines). Read it
        to its end before asking the oracle anything else."""
        columns, key = answer_columns(query.query_type, query.fields)
        parts = Answer.normalised_parts(query.query_type, self._fetched_parts(query), query.fields)
        return StreamedAnswer(columns, key, parts)

    def answers(
        self, queries: Iterable[LogicalQuery], progress: Progress | None = None
    ) -> Iterator[tuple[LogicalQuery, Answer]]:
        """``answer`` for each query in turn (a query asked again is answered once)."""
        return self._answered(queries, self.answer, progress)

    def streamed_answers(
        self, queries: Iterable[LogicalQuery], progress: Progress | None = None
    ) -> Iterator[tuple[LogicalQuery, Answer | StreamedAnswer]]:
        """``streamed`` for each query in turn, for ``answer_file.write_answers``; a query asked
        more than once (lastpoint has no random part: A's paper size asks it 100 times) is answered
        once, in memory (one row per entity), and handed out each time."""
        return self._answered(queries, self.streamed, progress)

    def _answered(
        self,
        queries: Iterable[LogicalQuery],
        answer: Callable[[LogicalQuery], Answer | StreamedAnswer],
        progress: Progress | None,
    ) -> Iterator[tuple[LogicalQuery, Any]]:
        asked = list(queries)
        repeats = Counter(query.asks for query in asked)
        held: dict[tuple[Any, ...], Answer] = {}
        for query in asked:
            if repeats[query.asks] > 1:
                if query.asks not in held:
                    held[query.asks] = self.answer(query)
                yield query, held[query.asks]
            else:
                yield query, answer(query)
            if progress:
                progress.update(1)

    def close(self) -> None:
        self.connection.close()
