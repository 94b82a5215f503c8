"""Reference answers: every logical query answered from the dataset's Parquet files by DuckDB.

The oracle is the yardstick every target's answer is compared with. It computes in integer ns and
float64; buckets are ``floor(epoch_ns / bucket_ns) * bucket_ns`` (aligned to the Unix epoch).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import duckdb

from tsbench.progress import Progress
from tsbench.workload.answers import Answer, Comparison, compare, compare_rows
from tsbench.workload.queries import LogicalQuery, read_jsonl, write_jsonl
from tsbench.workload.query_types import Kind

ORACLE_VERSION = "1"  # bump when an answer could change: cached reference answers are keyed by it


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
    if qtype.kind is Kind.LASTPOINT:
        return (
            f"SELECT entity, t, {all_fields} FROM rows_ns "
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


class Oracle:
    """Answers logical queries over one dataset (anything with a ``glob(measurement)`` method)."""

    def __init__(self, dataset: Any, threads: int | None = None):
        self.connection = duckdb.connect()
        if threads:
            self.connection.execute(f"SET threads = {int(threads)}")
        use_case = dataset.use_case
        source = str(dataset.glob(use_case.queried)).replace("'", "''")
        self.connection.execute(
            f'CREATE VIEW rows_ns AS SELECT epoch_ns(time) AS t, "{use_case.entity_key}" AS entity, '
            f"* EXCLUDE (time) FROM read_parquet('{source}')"
        )

    def answer(self, query: LogicalQuery) -> Answer:
        sql, params = oracle_sql(query)
        rows = self.connection.execute(sql, params).fetchall()
        return Answer.adopt(query.query_type, rows, query.fields)

    def answers(
        self, queries: Iterable[LogicalQuery], progress: Progress | None = None
    ) -> Iterator[tuple[LogicalQuery, Answer]]:
        for query in queries:
            yield query, self.answer(query)
            if progress:
                progress.update(1)

    def close(self) -> None:
        self.connection.close()


def write_answers(path: str | os.PathLike[str], answered: Iterable[tuple[LogicalQuery, Answer]]) -> Path:
    """answers.jsonl: one ``{"id", "type", "columns", "key", "rows"}`` per query, written atomically."""
    return write_jsonl(path, ({"id": q.id, "type": q.type, **a.to_json()} for q, a in answered))


def read_answers(path: str | os.PathLike[str]) -> dict[str, Answer]:
    """Every answer in memory (small answer files: tests, reports)."""
    return {body["id"]: Answer.from_json(body) for body in read_jsonl(path)}


_ID = re.compile(rb'\{"id":("(?:[^"\\]|\\.)*")')
_ROWS = '"rows":['  # an answer line ends with its rows (``Answer.to_json``'s order)
STREAM_ABOVE_BYTES = 16 * 2**20  # answer lines longer than this are compared row by row


def _rows_from(text: str, position: int) -> Iterator[tuple[Any, ...]]:
    """The rows of an answer line's ``"rows":[…]`` array from ``position`` (just inside it), one
    JSON row at a time, tag values shared."""
    decoder, texts = json.JSONDecoder(), {}
    while True:
        while text[position] in ", \n":
            position += 1
        if text[position] == "]":
            return
        row, position = decoder.raw_decode(text, position)
        yield tuple(texts.setdefault(v, v) if isinstance(v, str) else v for v in row)


class AnswerFile(Mapping[str, Answer]):
    """answers.jsonl read one answer at a time: opening it indexes where each query's line starts
    (from the line's leading ``{"id": …}``, without parsing the rest); ``answers[id]`` parses that
    line alone. Memory stays at one answer, however large the file (a high-cpu-all answer at 4,000
    hosts holds about a million rows)."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self._where: dict[str, tuple[int, int]] = {}
        with open(self.path, "rb") as handle:
            offset = 0
            for line in handle:
                found = _ID.match(line)
                if found is None:
                    raise ValueError(f"{self.path}: a line at byte {offset} does not start with its id")
                self._where[json.loads(found.group(1))] = (offset, len(line))
                offset += len(line)

    def __getitem__(self, query_id: str) -> Answer:
        return Answer.from_json(json.loads(self._line(query_id)))

    def compare_with(self, query_id: str, actual: Answer) -> Comparison:
        """``compare(self[query_id], actual)``; a large answer's rows are decoded one at a time
        from its line as they are compared, so they are never all in memory."""
        line = self._line(query_id)
        if len(line) < STREAM_ABOVE_BYTES:
            return compare(Answer.from_json(json.loads(line)), actual)
        text = line.decode()
        del line
        rows_at = text.index(_ROWS) + len(_ROWS)
        header = json.loads(text[: rows_at - 1] + "[]}")
        return compare_rows(header["columns"], header.get("key", []), _rows_from(text, rows_at), actual)

    def _line(self, query_id: str) -> bytes:
        offset, length = self._where[query_id]
        with open(self.path, "rb") as handle:
            handle.seek(offset)
            return handle.read(length)

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)
