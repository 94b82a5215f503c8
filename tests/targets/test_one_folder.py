"""Adding a database = one folder (+ its client in pyproject.toml): no generic file names a target.

Every file of the generic parts (``scripts/``, ``plugins/tsbench/runtimes/``, ``infra/``, ``.ci/``) is
searched for each registered target's name (as a word, any case) and its definition's version pin.
Documentation is not searched: Markdown files and ``infra/envs/*/examples/`` (sample study inputs).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tsbench.runtimes.definition import load_definition
from tsbench.targets.registry import target_names

REPO = Path(__file__).resolve().parents[2]
GENERIC = ["scripts", "plugins/tsbench/runtimes", "infra", ".ci"]
DEFINED = [name for name in target_names() if load_definition(name) is not None]
# Generic files that use a product a target also benchmarks, for something else (file → name, why).
OTHER_USES = {
    "scripts/airflow_celery.sh": ("postgres", "PostgreSQL as Airflow's metadata DB, not a benchmark target"),
}


def generic_files() -> list[Path]:
    files = []
    for top in GENERIC:
        for path in sorted((REPO / top).rglob("*")):
            relative = path.relative_to(REPO).parts
            if not path.is_file() or path.suffix == ".md" or "examples" in relative:
                continue
            if any(part.startswith(".") and part != ".ci" for part in relative):  # .terraform caches
                continue
            files.append(path)
    return files


def naming(name: str) -> list[str]:
    """``path:line: text`` for every line of a generic file that names target ``name``."""
    definition = load_definition(name)
    words = [re.escape(name)] + ([re.escape(definition.version)] if definition else [])
    pattern = re.compile(r"(?<![\w.])(" + "|".join(words) + r")(?![\w])", re.IGNORECASE)
    found = []
    for path in generic_files():
        if OTHER_USES.get(str(path.relative_to(REPO)), ("",))[0] == name:
            continue
        try:
            lines = path.read_text().splitlines()
        except UnicodeDecodeError:
            continue
        found += [
            f"{path.relative_to(REPO)}:{number}: {line.strip()}"
            for number, line in enumerate(lines, 1)
            if pattern.search(line)
        ]
    return found


@pytest.mark.parametrize("name", DEFINED)
def test_no_generic_file_names_the_target(name: str) -> None:
    assert naming(name) == []


def test_every_target_is_described_in_its_folder() -> None:
    assert list(target_names()) == DEFINED and len(DEFINED) == 11
