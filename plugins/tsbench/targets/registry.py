"""Discovery of target databases: every subpackage of ``tsbench.targets`` with a ``target`` module
defining ``TARGET`` (a ``Target`` subclass)."""

from __future__ import annotations

import importlib
import pkgutil
import zlib
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


# Colours for a name with no target folder (e.g. a result of a retired target), chosen by hash.
FALLBACK_COLOURS = ("#332288", "#117733", "#882255", "#44AA99", "#AA4499", "#999933", "#6699CC", "#661100")


def _known(name: str) -> type[Target] | None:
    return load_target(name) if name in target_names() else None


def target_title(name: str) -> str:
    """How a target is named for people (its ``Target.title``); the name itself when no target
    folder declares it."""
    target = _known(name)
    return target.title if target is not None else name


def target_colour(name: str) -> str:
    """A target's chart colour (its ``Target.colour``); one of ``FALLBACK_COLOURS`` by name hash
    when no target folder declares it."""
    target = _known(name)
    if target is not None:
        return target.colour
    return FALLBACK_COLOURS[zlib.crc32(name.encode()) % len(FALLBACK_COLOURS)]


def client_packages() -> tuple[str, ...]:
    """The distributions every target's client code imports, sorted, each once."""
    return tuple(
        sorted({package for name in target_names() for package in load_target(name).client_packages})
    )
