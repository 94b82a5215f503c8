"""Dotted option paths as nested mappings, for the targets whose configuration format nests
(ClickHouse's XML, MongoDB's YAML): ``logger.level`` is ``level`` inside ``logger``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def nest(options: Mapping[str, str]) -> dict[str, Any]:
    """``options`` by dotted path as a tree of dicts; options sharing a parent go into one mapping,
    in first-seen order."""
    tree: dict[str, Any] = {}
    for path, value in options.items():
        *parents, leaf = path.split(".")
        node = tree
        for name in parents:
            node = node.setdefault(name, {})
        node[leaf] = value
    return tree
