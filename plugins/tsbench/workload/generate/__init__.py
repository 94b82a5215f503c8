"""Deterministic data generators. ``generate(spec)`` is the entry point (see ``driver.py``)."""

from tsbench.workload.generate.driver import GeneratedData, generate

__all__ = ["GeneratedData", "generate"]
