"""The full edition speaks the timescaledb target's SQL (``time_bucket``; compressed chunks answer
the same queries), plus the queries it answers from its continuous aggregate (``rollup.py``)."""

from tsbench.targets.timescaledb_tsl.rollup import RollupDialect

__all__ = ["RollupDialect"]
