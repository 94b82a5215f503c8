"""Discovery of target databases: every subpackage of ``tsbench.targets`` with a ``target`` module
defining ``TARGET`` (a ``Target`` subclass), and the instances of their other releases
(``<name>@<release>``, ``tsbench.targets.releases``)."""

from __future__ import annotations

import importlib
import pkgutil
import zlib
from collections.abc import Mapping, Sequence
from functools import cache

import tsbench.targets as package
from tsbench.targets.base import Target
from tsbench.targets.releases import (
    Releases,
    release_colour,
    release_title,
    released_target,
    split_instance,
)


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
    """The ``Target`` class of folder ``name``, or of an instance ``<folder>@<release>`` running
    another release its folder declares (``releases.released_target``); ValueError naming the known
    targets, or the installable releases, otherwise."""
    folder, release = split_instance(name)
    if folder not in target_names():
        raise ValueError(f"unknown target {folder!r}; known: {', '.join(target_names()) or '(none)'}")
    module = importlib.import_module(f"{package.__name__}.{folder}.target")
    target = module.TARGET
    if target.name != folder:
        raise ValueError(f"targets/{folder}/target.py defines TARGET.name={target.name!r}")
    return released_target(target, release) if release else target


# Colours for a name with no target folder (e.g. a result of a retired target), chosen by hash.
FALLBACK_COLOURS = ("#332288", "#117733", "#882255", "#44AA99", "#AA4499", "#999933", "#6699CC", "#661100")


def _known(name: str) -> tuple[type[Target] | None, str]:
    """The folder's target of ``name`` (None when no folder declares it) and the release it names."""
    folder, release = split_instance(name)
    return (load_target(folder) if folder in target_names() else None), release


def target_title(name: str) -> str:
    """How a target is named for people (its ``Target.title``, with the release of an instance:
    "QuestDB 9.2.3", also for a release its folder no longer declares); the name itself when no
    target folder declares it."""
    target, release = _known(name)
    if target is None:
        return name
    return release_title(target.title, release) if release else target.title


def target_colour(name: str) -> str:
    """A target's chart colour (its ``Target.colour``; a release's: a shade of it); one of
    ``FALLBACK_COLOURS`` by name hash when no target folder declares it."""
    target, release = _known(name)
    if target is None:
        return FALLBACK_COLOURS[zlib.crc32(name.encode()) % len(FALLBACK_COLOURS)]
    if not release:
        return target.colour
    return release_colour(target.colour, release, Releases.of(target).others)


def release_problems(
    targets: Sequence[str], versions: Mapping[str, Sequence[str]], runtime: str
) -> list[tuple[str, str]]:
    """``(field, message)`` of each problem of a run's ``versions`` and the instances named in its
    ``targets``: each names a target of the run whose recipe installs that release side by side on
    ``runtime``."""
    named: dict[str, list[str]] = {}  # releases the targets field names as instances
    for name in targets:
        target, release = split_instance(name)
        if release:
            named.setdefault(target, []).append(release)
    problems: list[tuple[str, str]] = []
    for target in versions:
        if target not in targets:
            pinned = ", ".join(name for name in targets if not split_instance(name)[1])
            problems.append((f"versions.{target}", f"not one of the run's targets ({pinned})"))
    for target in dict.fromkeys([*versions, *named]):
        if target not in target_names() or (target in versions and target not in targets):
            continue  # an unknown target is the targets field's own problem
        asked = list(versions.get(target, []))
        asked += [release for release in named.get(target, []) if release not in asked]
        field = f"versions.{target}" if target in versions else "targets"
        problems += [(field, p) for p in Releases.of(load_target(target)).problems(asked, runtime)]
    return problems


def client_packages() -> tuple[str, ...]:
    """The distributions every target's client code imports, sorted, each once."""
    return tuple(
        sorted({package for name in target_names() for package in load_target(name).client_packages})
    )


def use_case_problems(targets: Sequence[str], use_case: str) -> list[tuple[str, str]]:
    """``("targets", message)`` for each of ``targets`` that cannot count the rows of ``use_case``'s
    data (its fields may all be missing from a row, and the target counts rows by a field). Both are
    known: the run's own field checks ran before."""
    from tsbench.workload.usecases import USE_CASES

    if not USE_CASES[use_case].gapped_fields:
        return []
    message = f"counts rows by a field every row carries, and no field of {use_case} data is sure to be"
    return [
        ("targets", f"{name} {message}")
        for name in targets
        if not load_target(split_instance(name)[0]).capabilities.counts_gapped_rows
    ]
