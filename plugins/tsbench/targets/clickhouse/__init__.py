"""ClickHouse target (see README.md)."""
