"""SQL for the logical queries over the TSBS relational schema (``tags`` + one table per measurement).

One method per query ``Kind`` (the table ``RENDERERS`` maps kinds to them). The only thing that
differs between plain PostgreSQL and TimescaleDB is the bucketing expression: ``SqlDialect.bucket``
uses ``date_bin`` with the Unix epoch as origin; TimescaleDB's dialect overrides it with
``time_bucket``. Hosts are filtered as TSBS does, through the tags table
(``tags_id IN (SELECT id FROM tags WHERE hostname IN (…))``); host names in answers come from a join
with ``tags``. The table and the entity key column are the query's own (``cpu`` / ``hostname``, or
``usermetric`` / ``metric`` for YCSB-TS records). Windows are half-open ``[start, end)``; instants
are written as UTC literals.
"""

from __future__ import annotations

from collections.abc import Callable

from tsbench.targets.postgres.iot_dialect import IotSql
from tsbench.targets.postgres.sql_text import instant, interval, literal
from tsbench.workload.iot_query_types import IOT_KINDS, function_name
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_types import Kind

__all__ = ["AGGREGATES", "RENDERERS", "SqlDialect", "instant", "interval", "literal"]

AGGREGATES = {"max": "max", "mean": "avg", "avg": "avg", "count": "count", "sum": "sum"}


class SqlDialect(IotSql):
    """Renders logical queries for PostgreSQL; subclasses change ``bucket`` only."""

    tags_table = "tags"

    def bucket(self, bucket_ns: int, column: str = "time") -> str:
        """Start of the epoch-aligned bucket of width ``bucket_ns`` containing ``column``."""
        return f"date_bin({interval(bucket_ns)}, {column}, TIMESTAMPTZ '1970-01-01 00:00:00+00')"

    def render(self, query: LogicalQuery) -> str:
        renderer: Callable[[LogicalQuery], str] = getattr(self, RENDERERS[query.query_type.kind])
        return renderer(query)

    # helpers ------------------------------------------------------------------------------------

    def host_filter(self, query: LogicalQuery, column: str = "tags_id") -> str:
        """``AND tags_id IN (…)`` for the query's hosts, or nothing for all hosts."""
        if query.hosts is None:
            return ""
        names = ", ".join(literal(h) for h in query.hosts)
        return f" AND {column} IN (SELECT id FROM {self.tags_table} WHERE {query.entity} IN ({names}))"

    def window(self, query: LogicalQuery, column: str = "time") -> str:
        assert query.start_ns is not None and query.end_ns is not None, f"{query.id} has no window"
        return f"{column} >= {instant(query.start_ns)} AND {column} < {instant(query.end_ns)}"

    def aggregates(self, query: LogicalQuery, prefix: str = "") -> str:
        qtype = query.query_type
        function = AGGREGATES[qtype.agg]
        return ", ".join(f"{function}({prefix}{f}) AS {qtype.agg}_{f}" for f in query.fields)

    # one method per kind ------------------------------------------------------------------------

    def groupby(self, query: LogicalQuery) -> str:
        qtype = query.query_type
        return (
            f"SELECT {self.bucket(qtype.bucket_ns)} AS bucket, {self.aggregates(query)} "
            f"FROM {query.measurement} WHERE {self.window(query)}{self.host_filter(query)} "
            "GROUP BY bucket ORDER BY bucket"
        )

    def groupby_host(self, query: LogicalQuery) -> str:
        return self.named_hosts(
            query,
            f"SELECT {self.bucket(query.query_type.bucket_ns)} AS bucket, tags_id, {self.aggregates(query)} "
            f"FROM {query.measurement} WHERE {self.window(query)}{self.host_filter(query)} "
            "GROUP BY bucket, tags_id",
        )

    def named_hosts(self, query: LogicalQuery, per_host: str) -> str:
        """``per_host`` (rows of ``bucket, tags_id`` and the query's aggregates) with each host's
        name instead of its id, ordered by bucket and name."""
        values = ", ".join(f"b.{query.query_type.agg}_{f}" for f in query.fields)
        return (
            f"WITH b AS ({per_host}) SELECT b.bucket, t.{query.entity}, {values} "
            f"FROM b JOIN {self.tags_table} t ON t.id = b.tags_id ORDER BY b.bucket, t.{query.entity}"
        )

    def raw_rows(self, query: LogicalQuery, condition: str) -> str:
        fields = ", ".join(f"c.{f}" for f in query.fields)
        return (
            f"SELECT c.time, t.{query.entity}, {fields} "
            f"FROM {query.measurement} c JOIN {self.tags_table} t ON t.id = c.tags_id "
            f"WHERE {condition}{self.host_filter(query, 'c.tags_id')}"
        )

    def high_cpu(self, query: LogicalQuery) -> str:
        threshold = query.query_type.threshold
        return self.raw_rows(query, f"c.usage_user > {threshold!r} AND {self.window(query, 'c.time')}")

    def read(self, query: LogicalQuery) -> str:
        assert query.at_ns is not None, f"{query.id} has no instant"
        return self.raw_rows(query, f"c.time = {instant(query.at_ns)}")

    def scan(self, query: LogicalQuery) -> str:
        return self.raw_rows(query, self.window(query, "c.time"))

    def lastpoint(self, query: LogicalQuery) -> str:
        fields = ", ".join(query.fields)
        only = ""
        if query.hosts is not None:
            only = f" WHERE t.{query.entity} IN ({', '.join(literal(h) for h in query.hosts)})"
        newest = (
            f"SELECT time, {fields} FROM {query.measurement} WHERE tags_id = t.id ORDER BY time DESC LIMIT 1"
        )
        return (
            f"SELECT t.{query.entity}, c.time, {', '.join(f'c.{f}' for f in query.fields)} "
            f"FROM {self.tags_table} t CROSS JOIN LATERAL ({newest}) c{only} ORDER BY t.{query.entity}"
        )

    def orderby_limit(self, query: LogicalQuery) -> str:
        qtype = query.query_type
        assert query.end_ns is not None, f"{query.id} has no end"
        return (
            f"SELECT {self.bucket(qtype.bucket_ns)} AS bucket, {self.aggregates(query)} "
            f"FROM {query.measurement} WHERE time < {instant(query.end_ns)}{self.host_filter(query)} "
            f"GROUP BY bucket ORDER BY bucket DESC LIMIT {qtype.limit}"
        )

    def range_agg(self, query: LogicalQuery) -> str:
        return (
            f"SELECT {self.aggregates(query)} "
            f"FROM {query.measurement} WHERE {self.window(query)}{self.host_filter(query)}"
        )


# Kind → name of the SqlDialect method that renders it (looked up on the instance, so a subclass may
# override any of them).
RENDERERS: dict[Kind, str] = {
    Kind.GROUPBY: "groupby",
    Kind.GROUPBY_HOST: "groupby_host",
    Kind.HIGH_CPU: "high_cpu",
    Kind.LASTPOINT: "lastpoint",
    Kind.ORDERBY_LIMIT: "orderby_limit",
    Kind.READ: "read",
    Kind.SCAN: "scan",
    Kind.RANGE_AGG: "range_agg",
    **{kind: function_name(kind) for kind in IOT_KINDS},  # IotSql's methods
}
