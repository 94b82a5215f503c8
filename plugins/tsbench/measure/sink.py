"""A do-nothing target: accepts batches and discards them (TSBS's ``do-load=false``).

Used to measure the client ceiling of the load driver (reading Parquet, batching, dispatching to
workers). Not in the registry: it is a measuring instrument, not a database.
"""

from __future__ import annotations

from typing import ClassVar

import pyarrow as pa

from tsbench.targets.base import Capabilities, Footprint, Target
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_types import QUERY_TYPES


class _Discard:
    def write(self, measurement: str, batch: pa.RecordBatch) -> int:
        return batch.num_rows

    def close(self) -> None:
        pass


class NullTarget(Target):
    name: ClassVar[str] = "null"
    title: ClassVar[str] = "do-nothing sink"
    capabilities: ClassVar[Capabilities] = Capabilities(
        durable=False,
        compression="none",
        unsupported=dict.fromkeys(QUERY_TYPES, "the sink discards data; it measures the client alone"),
    )

    @staticmethod
    def server_recipe() -> type:
        raise NotImplementedError("the sink has no server")

    def create_schema(self) -> None:
        pass

    def writer(self) -> _Discard:
        return _Discard()

    def flush(self) -> None:
        pass

    def row_count(self, measurement: str) -> int:
        return 0

    def render(self, query: LogicalQuery) -> str:
        raise NotImplementedError(self.capabilities.unsupported[query.type])

    def session(self):  # type: ignore[override]
        raise NotImplementedError("the sink answers no queries")

    def footprint(self) -> Footprint:
        return Footprint(0, "nothing is stored")

    def version(self) -> str:
        return "n/a"
