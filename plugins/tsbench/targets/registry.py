"""Discovery of target databases: every subpackage of ``tsbench.targets`` with a ``target`` module
defining ``TARGET`` (a ``Target`` subclass)."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

import tsbench.targets as package
from tsbench.targets.base import Target


@cache
def target_names() -> tuple[str, ...]:
    """Names of all target folders, sorted (a folder counts when it has ``target.py``)."""
    names = []
    for info in pkgutil.iter_modules(package.__path__):
        if info.ispkg and importlib.util.find_spec(f"{package.__name__}.{info.name}.target"):
            names.append(info.name)
    return tuple(sorted(names))


@cache
def load_target(name: str) -> type[Target]:
    """The ``Target`` class of folder ``name`` (ValueError naming the known ones otherwise)."""
    if name not in target_names():
        raise ValueError(f"unknown target {name!r}; known: {', '.join(target_names()) or '(none)'}")
    module = importlib.import_module(f"{package.__name__}.{name}.target")
    target = module.TARGET
    if target.name != name:
        raise ValueError(f"targets/{name}/target.py defines TARGET.name={target.name!r}")
    return target
