"""Published vs measured: each claim of a study (``tsbench.verdicts.published``) judged on one comparison's
points, and each published figure set beside the figures measured under its conditions.

A claim is judged on rankings and ratios only — never by equating absolute numbers across machines.
Each of its checks gets a verdict (``tsbench.verdicts.checks``); **the claim's verdict is its weakest
comparable check's** (reversed < tie < direction only < reproduced): a claim that one database beats
two others is reproduced only when it beats both, reversed as soon as it loses to one beyond noise.
Checks that could not be made are listed beneath it; when some were made and others not, the claim is
judged on those made and marked ``partly`` ("2 of 4 checks"). With none made: ``not comparable``,
with each reason. Differences of conditions (machine, versions, the study's scale …) are listed
beside every verdict.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from tsbench.results.model import MachineFacts, Number, RunResult
from tsbench.verdicts.checks import (
    CheckVerdict,
    Verdict,
    check_verdict,
    conditions,
    matches,
    point_name,
    weakest,
)
from tsbench.verdicts.figures import measure
from tsbench.verdicts.published import Check, Claim, Published, PublishedFigure


@dataclass(frozen=True)
class ClaimVerdict:
    """One claim's verdict over its checks (module docstring): ``made`` of ``len(checks)`` checks
    could be made; ``reason`` = why none could; ``differences`` = conditions differing from the
    study's (of every check)."""

    claim: Claim
    verdict: Verdict
    checks: list[CheckVerdict] = field(default_factory=list)
    reason: str = ""
    differences: list[str] = field(default_factory=list)

    @property
    def made(self) -> int:
        return sum(c.verdict is not Verdict.NOT_COMPARABLE for c in self.checks)

    @property
    def partly(self) -> bool:
        """Judged on some of its checks only (others could not be made)."""
        return 0 < self.made < len(self.checks)


def judge_claim(published: Published, claim: Claim, runs: Sequence[RunResult]) -> ClaimVerdict:
    """``claim``'s verdict over this comparison's points (see the module docstring)."""
    checks = [
        replace(
            check_verdict(claim, check, runs, published.figures),
            differences=_differences(published, check, runs),
        )
        for check in claim.checks
    ]
    made = [c.verdict for c in checks if c.verdict is not Verdict.NOT_COMPARABLE]
    differences = list(dict.fromkeys(d for c in checks for d in c.differences))
    if not made:
        reasons = list(dict.fromkeys(c.reason for c in checks if c.reason))
        reason = (
            reasons[0]
            if len(reasons) == 1
            else f"none of its {len(checks)} checks could be made (each says why)"
        )
        return ClaimVerdict(claim, Verdict.NOT_COMPARABLE, checks, reason, differences)
    return ClaimVerdict(claim, weakest(made), checks, "", differences)


def _differences(published: Published, check: Check, runs: Sequence[RunResult]) -> list[str]:
    """The study's conditions beside this run's (the machine aside: ``machine_difference``):
    versions of the check's targets, and each of its ``study_at`` fields whose value differs from
    every point here."""
    found = []
    for name in check.targets:
        ours = next((r.targets[name].provision.version for r in runs if _provisioned(r, name)), "")
        theirs = published.versions.get(name)
        if theirs and ours and not _same_version(theirs, ours):
            found.append(f"{name} version: study {theirs}; here {ours}")
    for key, value in check.study_at.items():
        seen = sorted({repr(r.spec[key]) for r in runs if key in r.spec})
        if not seen:
            found.append(f"{key}: study {value}; not a parameter of this run")
        elif repr(value) not in seen:
            found.append(f"{key}: study {value}; here {', '.join(seen)}")
    return found


def machine_difference(published: Published, runs: Sequence[RunResult]) -> str:
    """The study's machine beside this run's (every claim and figure differs in it)."""
    machine = runs[0].machine if runs else MachineFacts()
    memory = machine.memory_bytes
    cores = machine.cores if machine.cores is not None else "?"
    here = f"{cores} cores" + (f", {memory / 2**30:.0f} GiB" if memory else "")
    return f"study: {published.machine}; here: {here}"


def _same_version(theirs: str, ours: str) -> bool:
    """Whether the published version (its first dotted number, e.g. ``9.3.4`` in ``QuestDB
    9.3.4 (Docker)``) is the one this run reported."""
    number = re.search(r"\d+(\.\d+)+", theirs)
    return (
        number is not None and re.search(rf"(?<![\d.]){re.escape(number.group())}(?![\d])", ours) is not None
    )


def _provisioned(run: RunResult, name: str) -> bool:
    body = run.targets.get(name)
    return body is not None and body.provision is not None and bool(body.provision.version)


@dataclass(frozen=True)
class FigureBeside:
    """A published figure and what this run measured under its conditions (``measured``: point
    name → value in tsbench's unit; empty with ``missing`` = why)."""

    figure: PublishedFigure
    measured: list[tuple[str, Number]]
    missing: str = ""


def figure_beside(figure: PublishedFigure, runs: Sequence[RunResult]) -> FigureBeside:
    at_points = [run for run in runs if matches(run, figure.at)]
    if not at_points:
        return FigureBeside(figure, [], f"no point of this run has {conditions(figure.at)}")
    found = [(run, measure(run, figure.target, figure.metric, figure.query_type)) for run in at_points]
    measured = [(point_name(run), m.value) for run, m in found if m.value is not None]
    missing = "" if measured else "; ".join(dict.fromkeys(m.missing for _, m in found))
    return FigureBeside(figure, measured, missing)


@dataclass(frozen=True)
class StudyCheck:
    """Every claim's verdict and every figure beside ours, for one study and one comparison."""

    published: Published
    verdicts: list[ClaimVerdict]
    figures: list[FigureBeside]
    machine: str

    def counts(self) -> dict[Verdict, int]:
        """Claims per verdict (each claim counted once, whatever its number of checks)."""
        return {v: sum(1 for item in self.verdicts if item.verdict is v) for v in Verdict}

    def partly(self) -> int:
        return sum(item.partly for item in self.verdicts)

    def tally(self) -> str:
        """``reproduced 2 · tie 3 · … (2 judged on part of their checks)``: claims, not checks."""
        counts = " · ".join(f"{verdict.value} {n}" for verdict, n in self.counts().items() if n)
        partly = f" ({self.partly()} judged on part of their checks)" if self.partly() else ""
        return counts + partly


def check_study(published: Published, runs: Sequence[RunResult]) -> StudyCheck:
    return StudyCheck(
        published,
        [judge_claim(published, claim, runs) for claim in published.claims],
        [figure_beside(figure, runs) for figure in published.figures],
        machine_difference(published, runs),
    )
