"""Measurement: load driver, query runner, resource sampler, latency statistics."""
