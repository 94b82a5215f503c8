"""Every target declares how people see it: a title, a colour of its own and its client packages,
read from the registry by the report, the charts and the machine facts of a result."""

from __future__ import annotations

import re
from importlib import metadata

from tsbench.machine import client_versions
from tsbench.targets.registry import FALLBACK_COLOURS, load_target, target_colour, target_names, target_title


def test_every_target_has_a_title_and_a_distinct_colour() -> None:
    names = target_names()
    assert {"questdb", "mongodb", "mongodb_naive"} <= set(names)
    for name in names:
        target = load_target(name)
        assert target.title.strip() and target.title != name, name
        assert re.fullmatch(r"#[0-9A-Fa-f]{6}", target.colour), name
        assert target_title(name) == target.title and target_colour(name) == target.colour
    colours = [load_target(name).colour.lower() for name in names]
    assert len(set(colours)) == len(colours), colours
    titles = [load_target(name).title for name in names]
    assert len(set(titles)) == len(titles), titles


def test_a_name_without_a_folder_keeps_its_name_and_a_fallback_colour() -> None:
    assert target_title("retired_db") == "retired_db"
    assert target_colour("retired_db") in FALLBACK_COLOURS


def test_client_versions_cover_every_targets_declared_packages() -> None:
    versions = client_versions()
    for name in target_names():
        for package in load_target(name).client_packages:
            assert versions[package] == metadata.version(package), (name, package)
    assert versions["pyarrow"] == metadata.version("pyarrow")
