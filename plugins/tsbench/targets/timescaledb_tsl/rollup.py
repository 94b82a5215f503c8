"""A 1-minute continuous aggregate of cpu (TimescaleDB full edition, Timescale License) and the
queries it answers exactly.

The view keeps per host and minute, for every cpu field, ``max``, ``sum`` and ``count`` — enough to
answer TSBS's max and mean aggregations over any bucket that is a whole number of minutes
(single-groupby-*: max per minute; cpu-max-all-*: max per hour; double-groupby-*: mean per host and
hour) to the same answer as the raw rows. A query window starts and ends at any second, so a query
reads the view for the whole minutes inside its window and the raw rows of the partial minutes at
its edges, and aggregates both (``UNION ALL``): the answer is the raw data's, not one rounded to
the rollup's resolution. Mean = sum of sums / sum of counts. Other kinds (rows, lastpoint, limits)
are not answered from the view.
"""

from __future__ import annotations

from tsbench.targets.postgres.dialect import instant
from tsbench.targets.rollups import MEASUREMENT, RESOLUTION_NS, answerable, whole_minutes
from tsbench.targets.timescaledb.dialect import TimescaleDialect
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_types import Kind

VIEW = "cpu_1m"
ANSWERED = {Kind.GROUPBY: "groupby", Kind.GROUPBY_HOST: "groupby_host"}


def create_view(fields: tuple[str, ...]) -> str:
    """The view, created empty (``WITH NO DATA``; ``refresh_continuous_aggregate`` fills it), read
    as materialised only (every row loaded is materialised before any query)."""
    columns = ", ".join(f"max({f}) AS max_{f}, sum({f}) AS sum_{f}, count({f}) AS n_{f}" for f in fields)
    return (
        f"CREATE MATERIALIZED VIEW {VIEW} "
        "WITH (timescaledb.continuous, timescaledb.materialized_only = true) AS "
        f"SELECT time_bucket(INTERVAL '1 minute', time) AS minute, tags_id, {columns} "
        f"FROM {MEASUREMENT} GROUP BY minute, tags_id WITH NO DATA"
    )


class RollupDialect(TimescaleDialect):
    """Renders the answerable queries on the view (``render_on_rollup``)."""

    def render_on_rollup(self, query: LogicalQuery) -> str | None:
        if not answerable(query):
            return None
        return getattr(self, f"{ANSWERED[query.query_type.kind]}_on_rollup")(query)

    def parts(self, query: LogicalQuery) -> str:
        """Per minute and host: the view's rows of the whole minutes in the window, the raw rows of
        its partial edge minutes; columns ``minute, tags_id`` and per field ``v_<f>`` (max or sum)
        and ``n_<f>`` (count; mean only)."""
        first, last = whole_minutes(query)
        whole = f"minute >= {instant(first)} AND minute < {instant(last)}"
        mean = query.query_type.agg == "mean"
        from_view = ", ".join(
            f"sum_{f} AS v_{f}, n_{f}" if mean else f"max_{f} AS v_{f}" for f in query.fields
        )
        from_rows = ", ".join(
            f"{f} AS v_{f}, ({f} IS NOT NULL)::int AS n_{f}" if mean else f"{f} AS v_{f}"
            for f in query.fields
        )
        return (
            f"SELECT minute, tags_id, {from_view} FROM {VIEW} WHERE {whole}{self.host_filter(query)} "
            f"UNION ALL SELECT {self.bucket(RESOLUTION_NS)} AS minute, tags_id, {from_rows} "
            f"FROM {MEASUREMENT} WHERE {self.window(query)} "
            f"AND NOT (time >= {instant(first)} AND time < {instant(last)}){self.host_filter(query)}"
        )

    def combined(self, query: LogicalQuery) -> str:
        """The query's aggregates over ``parts``, named as on the raw table."""
        agg = query.query_type.agg
        if agg == "mean":
            return ", ".join(f"sum(v_{f}) / sum(n_{f}) AS {agg}_{f}" for f in query.fields)
        return ", ".join(f"max(v_{f}) AS {agg}_{f}" for f in query.fields)

    def groupby_on_rollup(self, query: LogicalQuery) -> str:
        bucket = self.bucket(query.query_type.bucket_ns, "minute")
        return (
            f"SELECT {bucket} AS bucket, {self.combined(query)} FROM ({self.parts(query)}) p "
            "GROUP BY bucket ORDER BY bucket"
        )

    def groupby_host_on_rollup(self, query: LogicalQuery) -> str:
        return self.named_hosts(
            query,
            f"SELECT {self.bucket(query.query_type.bucket_ns, 'minute')} AS bucket, tags_id, "
            f"{self.combined(query)} FROM ({self.parts(query)}) p GROUP BY bucket, tags_id",
        )
