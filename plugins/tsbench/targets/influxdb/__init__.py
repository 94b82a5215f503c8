"""InfluxDB 1.x target (see README.md)."""
