"""answers.jsonl, the oracle's reference answers: one ``{"id", "type", "columns", "key", "rows"}``
line per query, ``rows`` last. Written and read without holding a large answer's line in memory:
a high-cpu-all answer at 4,000 hosts is ~1.6 M rows, a ~120 MB line.
"""

from __future__ import annotations

import codecs
import io
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from tsbench.results.files import atomic_writer
from tsbench.workload.answers import Answer, Comparison, compare, compare_rows
from tsbench.workload.queries import LogicalQuery, read_jsonl

if TYPE_CHECKING:
    from tsbench.workload.oracle import StreamedAnswer

_ID = re.compile(rb'\{"id":("(?:[^"\\]|\\.)*")')
_ROWS = '"rows":['  # an answer line ends with its rows
STREAM_ABOVE_BYTES = 16 * 2**20  # answer lines longer than this are compared row by row
READ_BLOCK_BYTES = 2**20  # bytes of a streamed line read at a time
WRITE_CHUNK_ROWS = 65_536  # rows encoded at a time
_SEPARATORS = (",", ":")


def write_answers(
    path: str | os.PathLike[str], answered: Iterable[tuple[LogicalQuery, Answer | StreamedAnswer]]
) -> Path:
    """Write answers.jsonl atomically (``results.files.atomic_writer``); each answer's rows are
    encoded a chunk at a time (``row_chunks``), so a line is never built whole in memory, and a
    streamed answer (``Oracle.streamed_answers``) is never held whole either."""
    with atomic_writer(path) as raw:
        handle = io.TextIOWrapper(raw, encoding="utf-8")
        for query, answer in answered:
            head = {"id": query.id, "type": query.type, "columns": answer.columns, "key": answer.key}
            handle.write(json.dumps(head, separators=_SEPARATORS)[:-1] + "," + _ROWS)
            for index, chunk in enumerate(answer.row_chunks(WRITE_CHUNK_ROWS)):
                handle.write(("," if index else "") + json.dumps(chunk, separators=_SEPARATORS)[1:-1])
            handle.write("]}\n")
            del answer  # not alive while the next one is computed
        handle.flush()
        handle.detach()  # the file stays open for atomic_writer's fsync and rename
    return Path(path)


def read_answers(path: str | os.PathLike[str]) -> dict[str, Answer]:
    """Every answer in memory (small answer files: tests, reports)."""
    return {body["id"]: Answer.from_json(body) for body in read_jsonl(path)}


class _LineReader:
    """The text of one line of a binary file, from where the handle stands up to ``length`` bytes,
    handed out in blocks (UTF-8 decoded across block boundaries)."""

    def __init__(self, handle: IO[bytes], length: int):
        self.handle, self.left = handle, length
        self.decoder = codecs.getincrementaldecoder("utf-8")()

    def more(self) -> str:
        """The next block of text; ``""`` at the line's end."""
        if self.left <= 0:
            return ""
        block = self.handle.read(min(READ_BLOCK_BYTES, self.left))
        if not block:
            raise ValueError("answers file: a line ends before its recorded length")
        self.left -= len(block)
        return self.decoder.decode(block, final=self.left <= 0)


def _streamed_rows(reader: _LineReader, text: str) -> Iterator[tuple[Any, ...]]:
    """The rows of a ``"rows":[…]`` array whose text starts in ``text`` (just inside the array) and
    goes on in ``reader``'s blocks: one JSON row at a time, tag values shared, at most a block and
    one row of text held."""
    decoder, texts, position = json.JSONDecoder(), {}, 0
    while True:
        while position < len(text) and text[position] in ", \n":
            position += 1
        if position == len(text):
            text, position = reader.more(), 0
            if not text:
                raise ValueError("answers file: a rows array does not end")
            continue
        if text[position] == "]":
            return
        try:
            row, end = decoder.raw_decode(text, position)  # a row is an array: whole or an error
        except json.JSONDecodeError:
            block = reader.more()
            if not block:
                raise
            text, position = text[position:] + block, 0
            continue
        position = end
        yield tuple(texts.setdefault(v, v) if isinstance(v, str) else v for v in row)


class AnswerFile(Mapping[str, Answer]):
    """answers.jsonl read one answer at a time: opening it indexes where each query's line starts
    (from the line's leading ``{"id": …}``, without parsing the rest); ``answers[id]`` parses that
    line alone, ``compare_with`` streams a large one."""

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
        offset, length = self._where[query_id]
        with open(self.path, "rb") as handle:
            handle.seek(offset)
            return Answer.from_json(json.loads(handle.read(length)))

    def compare_with(self, query_id: str, actual: Answer) -> Comparison:
        """``compare(self[query_id], actual)``; a line longer than ``STREAM_ABOVE_BYTES`` is read
        a block at a time and its rows decoded one at a time as they are compared, so neither the
        line nor its rows are ever all in memory."""
        offset, length = self._where[query_id]
        if length < STREAM_ABOVE_BYTES:
            return compare(self[query_id], actual)
        with open(self.path, "rb") as handle:
            handle.seek(offset)
            reader = _LineReader(handle, length)
            text = reader.more()
            while _ROWS not in text:  # the header (id, type, columns, key): a block or two
                block = reader.more()
                if not block:
                    raise ValueError(f"{self.path}: the answer to {query_id} has no rows array")
                text += block
            rows_at = text.index(_ROWS) + len(_ROWS)
            header = json.loads(text[: rows_at - 1] + "[]}")
            rows = _streamed_rows(reader, text[rows_at:])
            return compare_rows(header["columns"], header.get("key", []), rows, actual)

    def __contains__(self, query_id: object) -> bool:
        """From the index alone (``Mapping``'s own would parse the whole answer)."""
        return query_id in self._where

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)
