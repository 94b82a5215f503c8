"""Discovery of target databases: every subpackage of ``tsbench.targets`` with a ``target`` module."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

import tsbench.targets as package


@cache
def target_names() -> tuple[str, ...]:
    """Names of all target folders, sorted (a folder counts when it has ``target.py``)."""
    names = []
    for info in pkgutil.iter_modules(package.__path__):
        if info.ispkg and importlib.util.find_spec(f"{package.__name__}.{info.name}.target"):
            names.append(info.name)
    return tuple(sorted(names))
