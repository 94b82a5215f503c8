"""VictoriaMetrics (single-node): InfluxDB line protocol in, MetricsQL out."""
