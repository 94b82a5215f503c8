"""Plain PostgreSQL 15 target (TSBS relational schema, binary COPY); TimescaleDB builds on it."""
