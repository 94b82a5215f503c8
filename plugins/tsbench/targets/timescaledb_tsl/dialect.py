"""The full edition speaks the timescaledb target's SQL (``time_bucket``; compressed chunks answer
the same queries)."""

from tsbench.targets.timescaledb.dialect import TimescaleDialect

__all__ = ["TimescaleDialect"]
