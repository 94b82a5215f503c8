"""TimescaleDB 2.19 (Apache-2 edition) target: the PostgreSQL target with hypertables."""
