"""InfluxDB 1.6.7 target (see README.md)."""
