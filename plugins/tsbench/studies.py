"""Declarative studies: a small YAML file per study (``studies/*.yaml``) — which published study it
mirrors, its parameters (the comparison's, sweep axes as lists) and named sizes that override them
(``small``: finishes on a 2-core machine with the local targets; ``paper``: the published scales,
``runtime: aws`` on the study's machine shape). Each file becomes its own DAG (Params form prefilled
with the default size) and runs from the command line (``python -m tsbench study FILE``).

A size may raise the sweep limits (``limits``): a paper-size study is larger than the limits meant
to catch a mistyped ad-hoc sweep, and its file says so explicitly.
"""

from __future__ import annotations

import os
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tsbench.spec import SpecError
from tsbench.sweep.plan import SweepLimits, SweepPlan, expand_sweep
from tsbench.verdicts.coverage import Coverage, PlannedPoint, claims_coverage
from tsbench.verdicts.published import Published

REPO = Path(__file__).resolve().parents[2]
PUBLISHED_STUDIES = ("A", "B", "C", "D", "E")


class StudySize(BaseModel):
    """One size of a study: parameters over the study's own, and optionally higher sweep limits."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    description: str = ""
    params: dict[str, Any] = Field(default_factory=dict)
    limits: dict[str, float] = Field(default_factory=dict)


class Study(BaseModel):
    """A study file: ``name`` (its DAG is ``tsbench_study_<name>``), the published study it
    ``mirrors`` (A–E, ``../shared/studies/published.json``), what it reproduces and what not."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_]*$")
    mirrors: str | None = None
    title: str
    description: str = ""
    differences: list[str] = Field(default_factory=list)
    params: dict[str, Any] = Field(default_factory=dict)
    sizes: dict[str, StudySize]
    default_size: str = "small"
    published: Published | None = None

    @property
    def dag_id(self) -> str:
        return f"tsbench_study_{self.name}"

    @property
    def latest_folder(self) -> str:
        """The published latest folder a passing run of this study replaces (DAG and CLI)."""
        return f"latest-study-{self.name.replace('_', '-')}"

    def params_for(self, size: str | None = None, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
        """The comparison parameters of ``size`` (default: ``default_size``), then ``overrides``
        (an ``aws`` or ``docker`` object is merged key by key)."""
        chosen = self.size(size)
        values = {**self.params, **chosen.params}
        for key, value in (overrides or {}).items():
            both_dicts = isinstance(value, dict) and isinstance(values.get(key), dict)
            values[key] = {**values[key], **value} if both_dicts else value
        return values

    def size(self, size: str | None = None) -> StudySize:
        name = size or self.default_size
        if name not in self.sizes:
            raise SpecError(
                [("size", f"study {self.name} has no size {name!r}; sizes: {', '.join(self.sizes)}")]
            )
        return self.sizes[name]

    def limits(self, size: str | None = None) -> SweepLimits:
        return replace(SweepLimits(), **self.size(size).limits)

    def widest_limits(self) -> SweepLimits:
        """Every size's limits at once (the study DAG's: its form may be switched to any size)."""
        sizes = [self.limits(name) for name in self.sizes]
        return SweepLimits(*(max(getattr(lim, f.name) for lim in sizes) for f in fields(SweepLimits)))

    def doc_md(self) -> str:
        """The study DAG's documentation: what it mirrors, its sizes and its differences."""
        lines = [f"### tsbench study: {self.title}", "", self.description.strip(), ""]
        if self.mirrors:
            lines.append(f"Mirrors published study **{self.mirrors}** (`../shared/studies/published.json`).")
        lines += ["", "Sizes (the form is prefilled with `" + self.default_size + "`):"]
        lines += [f"- `{name}`: {size.description}" for name, size in self.sizes.items()]
        if self.differences:
            lines += ["", "Differences from the published setup:"]
            lines += [f"- {text}" for text in self.differences]
        return "\n".join(lines)

    def plan(
        self, size: str | None = None, overrides: dict[str, Any] | None = None, fit: bool = True
    ) -> SweepPlan:
        """The validated points of a size (SpecError naming every problem, before any work; with
        ``fit`` False, not its fit on its machines: ``expand_sweep``)."""
        return expand_sweep(self.params_for(size, overrides), self.limits(size), fit)

    def claims_coverage(
        self, size: str | None = None, overrides: dict[str, Any] | None = None
    ) -> list[Coverage]:
        """Per published claim, whether this size can judge it (``tsbench.verdicts.coverage``)."""
        if self.published is None:
            return []
        points = [
            PlannedPoint(p.spec.model_dump(), p.spec.rows_total)
            for p in self.plan(size, overrides, fit=False).points
        ]
        return claims_coverage(self.published, points, self.params_for(size, overrides))


# libyaml's safe loader when PyYAML was built with it (pure Python: ~0.3 s per study file, paid at
# every parse of the studies' DAG file).
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_study(path: Path) -> Study:
    """Read one study file; SpecError naming the file and every bad field."""
    try:
        body = yaml.load(Path(path).read_text(), Loader=SAFE_LOADER)
    except (OSError, yaml.YAMLError) as error:
        raise SpecError([(str(path), f"not a readable YAML file: {error}")]) from None
    try:
        study = Study.model_validate(body)
    except ValidationError as error:
        raise SpecError(
            [(f"{Path(path).name}: {'.'.join(map(str, e['loc']))}", e["msg"]) for e in error.errors()]
        ) from None
    if study.default_size not in study.sizes:
        raise SpecError([(f"{Path(path).name}: default_size", f"no size {study.default_size!r}")])
    if study.mirrors is not None and study.mirrors not in PUBLISHED_STUDIES:
        raise SpecError([(f"{Path(path).name}: mirrors", f"one of {', '.join(PUBLISHED_STUDIES)}")])
    _check_published_targets(Path(path).name, study.published)
    return study


def _check_published_targets(file: str, published: Published | None) -> None:
    """Every target a figure or claim names is a registered target (SpecError naming it)."""
    from tsbench.targets.registry import target_names

    if published is None:
        return
    known = set(target_names())
    problems = [
        (f"{file}: published.figures[{i}].target", f"no target {figure.target!r}")
        for i, figure in enumerate(published.figures)
        if figure.target not in known
    ]
    problems += [
        (f"{file}: published.claims[{i}]", f"no target {name!r}")
        for i, claim in enumerate(published.claims)
        for name in claim.targets
        if name not in known
    ]
    if problems:
        raise SpecError(problems)


def studies_dir() -> Path:
    """The folder of study files: ``$TSBENCH_STUDIES_DIR`` (a team's own studies) or the
    repository's ``studies/``; read at each call, as the DAG processor re-parses the DAG file."""
    return Path(os.environ.get("TSBENCH_STUDIES_DIR") or REPO / "studies")


def find_study(name: str, directory: Path | None = None) -> Study | None:
    """The study file named ``name`` (its ``name`` field), None when there is none."""
    return next((study for study in all_studies(directory) if study.name == name), None)


def study_files(directory: Path | None = None) -> list[Path]:
    return sorted((directory or studies_dir()).glob("*.yaml"))


def all_studies(directory: Path | None = None) -> list[Study]:
    """Every study file of the folder, each validated: one bad file is a SpecError naming the file
    and its fields (in the studies' DAG file: an import error, never a silently missing DAG)."""
    return [load_study(path) for path in study_files(directory)]
