"""Releases as an axis: other versions of a database run as target instances of their own.

A target folder's server definition (``definition.py``) declares ``releases``, the other versions its
install recipe installs side by side with the pin, and ``release_runtimes``, where they run. A run's
``versions`` (``tsbench.spec.RunSpec``) adds, besides the pinned target ``questdb``, an instance
``questdb@9.2.3`` per release asked for: a target of its own (``released_target``: the folder's
class with that name, the title "QuestDB 9.2.3", a shade of the folder's colour, the recipe
installing that release), so everything keyed by a target's name — branches, ``result.json``'s
targets, ``targets/<name>/`` folders, report rows, change-detection series — keeps them apart.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tsbench.runtimes.release_recipe import recipe_at_release

if TYPE_CHECKING:
    from tsbench.targets.base import Target

SEPARATOR = "@"


def instance_name(target: str, release: str) -> str:
    """The target instance running ``release`` of ``target``'s server (``target`` itself for "")."""
    return f"{target}{SEPARATOR}{release}" if release else target


def split_instance(name: str) -> tuple[str, str]:
    """``(target folder, release)`` of a target name: ``("questdb", "9.2.3")`` for ``questdb@9.2.3``,
    ``("questdb", "")`` for the pinned ``questdb``."""
    target, _, release = name.partition(SEPARATOR)
    return target, release


@dataclass(frozen=True)
class Releases:
    """What a target's install recipe installs: the ``pinned`` version, the ``others`` it installs
    side by side (newest first) and the ``runtimes`` that run them."""

    target: str
    pinned: str
    others: tuple[str, ...]
    runtimes: tuple[str, ...]

    @classmethod
    def of(cls, target_type: type[Target]) -> Releases:
        """The releases the definition of ``target_type``'s server recipe declares."""
        definition = getattr(target_type.server_recipe(), "definition", None)
        if definition is None:
            return cls(target_type.name, "", (), ())
        return cls(target_type.name, definition.version, definition.releases, definition.release_runtimes)

    def installable_text(self) -> str:
        """e.g. ``installable: 9.3.2, 9.2.3 (pinned: 9.3.4)``, or why none."""
        if not self.others:
            return f"{self.target}'s recipe installs only its pinned version {self.pinned or '(none)'}"
        return f"installable: {', '.join(self.others)} (pinned: {self.pinned})"

    def problems(self, asked: Sequence[str], runtime: str) -> list[str]:
        """What is wrong with running ``asked`` releases on ``runtime`` (empty: nothing)."""
        if not self.others:
            return [f"{self.installable_text()}; no other release runs side by side"]
        problems = []
        if runtime not in self.runtimes:
            where = ", ".join(self.runtimes)
            problems.append(f"{self.target}'s releases run side by side on runtime {where}, not {runtime}")
        if self.pinned in asked:
            problems.append(f"{self.pinned} is the pinned version, which target {self.target} runs already")
        unknown = [version for version in asked if version not in self.others and version != self.pinned]
        if unknown:
            problems.append(f"cannot install {', '.join(unknown)}; {self.installable_text()}")
        if len(set(asked)) != len(asked):
            problems.append("a version is listed twice")
        return problems


def with_releases(targets: Sequence[str], versions: Mapping[str, Sequence[str]]) -> list[str]:
    """``targets`` with an instance for every release of ``versions`` not named yet, each after its
    target's last instance (idempotent: a recorded run's targets already name them); a target not
    in ``targets`` gets none."""
    out = list(targets)
    for target, releases in versions.items():
        for release in releases if target in out else ():
            name = instance_name(target, release)
            if name in out:
                continue
            last = max(i for i, known in enumerate(out) if split_instance(known)[0] == target)
            out.insert(last + 1, name)
    return out


def with_release_instances(values: Any) -> Any:
    """A run's parameters as given (``RunSpec``'s input) with ``targets`` naming the instances of
    ``versions`` (``with_releases``); as they are when either is not of its type (the spec names it)."""
    if not isinstance(values, dict):
        return values
    targets, versions = values.get("targets"), values.get("versions")
    if not _texts(targets) or not isinstance(versions, dict) or not versions:
        return values
    typed = {name: releases for name, releases in versions.items() if _texts(releases)}
    return {**values, "targets": with_releases(targets, typed)}


def _texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def released_target(base: type[Target], release: str) -> type[Target]:
    """``base`` (a folder's target) running ``release`` of its server: named ``<name>@<release>``,
    titled "<title> <release>", coloured a shade of ``base.colour``, its server recipe installing
    ``release`` (``runtimes.release_recipe``). ``release`` must be one the definition declares."""
    declared = Releases.of(base)
    if release not in declared.others:
        raise ValueError(f"target {base.name}: cannot install {release}; {declared.installable_text()}")
    recipe = recipe_at_release(base.server_recipe(), release)
    body = {
        "name": instance_name(base.name, release),
        "title": release_title(base.title, release),
        "colour": release_colour(base.colour, release, declared.others),
        "server_recipe": staticmethod(lambda: recipe),
        "__qualname__": base.__qualname__,
        "__module__": base.__module__,
    }
    return type(base.__name__, (base,), body)


def release_title(title: str, release: str) -> str:
    return f"{title} {release}"


def release_colour(colour: str, release: str, releases: Sequence[str]) -> str:
    """A shade of ``colour`` for ``release``: by its place among the declared ``releases``
    (alternately lighter and darker, further from ``colour`` the older), by a hash of the version
    for one no longer declared (a run of the past)."""
    known = release in releases
    place = releases.index(release) if known else zlib.crc32(release.encode()) % 8
    steps = max(1, (len(releases) + 1) // 2) if known else 4
    toward = (255, 255, 255) if place % 2 == 0 else (0, 0, 0)
    share = 0.2 + 0.6 * (place // 2) / steps
    rgb = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    mixed = [round(c + (t - c) * share) for c, t in zip(rgb, toward, strict=True)]
    return "#" + "".join(f"{c:02X}" for c in mixed)
