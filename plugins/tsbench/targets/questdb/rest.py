"""QuestDB queries over its REST endpoint ``/exec`` — the protocol TSBS's QuestDB runner uses.

``fetch`` sends one ``GET /exec?query=…&count=false`` on the worker's kept-alive connection and
reads the whole JSON body (bytes, not parsed: what TSBS's Go runner does too). ``decode`` parses it
after the timed window into rows typed as the PG-wire path types them: TIMESTAMP → int ns since the
Unix epoch (UTC), LONG/INT → int, DOUBLE → float, SYMBOL/VARCHAR → str, null → None.

Why REST and not PG wire: for answers of tens of thousands of rows (high-cpu-all), libpq parses and
copies every cell into its result inside the timed window, which cost our client 4.6× TSBS's CPU and
23 % of its rate on the same texts (bench/vs_tsbs.py); the REST body is received as bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import numpy as np

from tsbench.targets.base import TargetError
from tsbench.targets.httpclient import LeanHttp

QUERY_TIMEOUT_S = 600
ROWS_PER_PART = 65_536  # rows typed at once by decode_parts
_TIMESTAMPS = frozenset({"TIMESTAMP", "TIMESTAMP_NS", "DATE"})


def _nanoseconds(values: list[Any]) -> list[int | None]:
    """ISO-8601 instants as QuestDB writes them (``…Z``; DATE in ms) → int ns since the epoch."""
    present = [v for v in values if v is not None]
    stamps = np.array([v.rstrip("Z") for v in present], dtype="datetime64[ns]").astype(np.int64).tolist()
    found = iter(stamps)
    return [None if v is None else next(found) for v in values]


class QuestDBRestSession:
    """One query worker: one kept-alive HTTP connection to QuestDB's REST port."""

    def __init__(self, host: str, port: int, headers: dict[str, str] | None = None):
        """``headers`` go with every request (the HTTP login)."""
        self.http = LeanHttp(host, port, headers, timeout_s=QUERY_TIMEOUT_S)

    def fetch(self, text: str) -> tuple[str, bytes]:
        """``(text, body)`` of a 200 answer (TargetError with QuestDB's message otherwise)."""
        path = f"/exec?count=false&query={quote(text, safe='')}"
        return text, self.http.answer("questdb: /exec", "GET", path, f"\n{text[:300]}")

    def decode(self, raw: tuple[str, bytes]) -> list[tuple[Any, ...]]:
        return [row for part in self.decode_parts(raw) for row in part]

    def decode_parts(self, raw: tuple[str, bytes], rows_per_part: int = ROWS_PER_PART) -> Iterator[list[Any]]:
        """``decode`` in parts of ``rows_per_part`` rows. The caller hands over its only reference
        to ``raw``: the body is freed once parsed, and each parsed row once typed."""
        text, body = raw
        del raw
        answer = json.loads(body)
        del body
        if "error" in answer:
            raise TargetError(f"questdb: {answer['error']}\n{text[:300]}")
        stamps = [i for i, c in enumerate(answer.get("columns", ())) if c["type"] in _TIMESTAMPS]
        dataset = answer.get("dataset") or []
        for start in range(0, len(dataset), rows_per_part):
            stop = min(start + rows_per_part, len(dataset))
            columns = [list(c) for c in zip(*dataset[start:stop], strict=True)]
            dataset[start:stop] = [None] * (stop - start)
            for index in stamps:
                columns[index] = _nanoseconds(columns[index])
            yield list(zip(*columns, strict=True))

    def execute(self, text: str) -> list[tuple[Any, ...]]:
        return self.decode(self.fetch(text))

    def close(self) -> None:
        self.http.close()
