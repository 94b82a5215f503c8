"""Workload: data generators, dataset I/O, TSBS interop, logical queries and the oracle."""
