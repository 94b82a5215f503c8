"""The validation banner (the target views live in ``target_view``; re-exported here for the
sections that read both)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from tsbench.report.sections.common import join
from tsbench.report.sections.target_view import TargetView, placement_rows, target_view, target_views
from tsbench.results.model import Validation

__all__ = [
    "Banner",
    "BannerPart",
    "TargetView",
    "banner",
    "overall_banner",
    "placement_rows",
    "target_view",
    "target_views",
]

FAILED_BANNER_TITLE = "Validation FAILED — not replacing the latest report"


@dataclass(frozen=True)
class Banner:
    """The status at the top: ``kind`` pass | fail | none (not validated), its title and sentence,
    and a line per failed target."""

    kind: str
    title: str
    text: str
    failed_targets: list[str]


NOT_VALIDATED = "Not validated"
PASSED = "Validation passed"


def banner(validation: Validation | None, targets: Sequence[TargetView]) -> Banner:
    """The status at the top of one scale: validation outcome and the targets that failed."""
    failed = [f"{t.label} ({t.problem}" + (f": {t.error})" if t.error else ")") for t in targets if not t.ok]
    if validation is None:
        text = (
            "No validation.json in the run folder: these figures have not been checked by the "
            "validation suites."
        )
        return Banner("none", NOT_VALIDATED, text, failed)
    if validation.success:
        warnings = validation.warnings
        text = "Every critical expectation holds" + (
            f"; {len(warnings)} warning(s), listed under Validation." if warnings else "."
        )
        return Banner("pass", PASSED, text, failed)
    critical = ", ".join(map(str, validation.critical_failed)) or "see Validation"
    return Banner("fail", FAILED_BANNER_TITLE, f"Critical expectations failed: {critical}.", failed)


class BannerPart(Protocol):
    """A part of the document with its own banner (``tsbench.report.model.ScaleView``)."""

    @property
    def heading(self) -> str: ...
    @property
    def banner(self) -> Banner: ...


def overall_banner(scales: Sequence[BannerPart], validations: Sequence[Validation | None]) -> Banner:
    """One status for the whole document: failed if any scale failed validation, not validated if
    any scale lacks it, else passed; failed targets of every scale."""
    if len(scales) == 1:
        return scales[0].banner
    named = [(s.heading[:1].lower() + s.heading[1:], s, v) for s, v in zip(scales, validations, strict=True)]
    failed = [f"{label}: {text}" for label, s, _ in named for text in s.banner.failed_targets]
    missing = [label for label, _, v in named if v is None]
    failing = [(label, v) for label, _, v in named if v is not None and not v.success]
    if failing:
        critical = "; ".join(f"{label}: {item}" for label, v in failing for item in v.critical_failed)
        text = "Critical expectations failed: " + (critical or "see Validation") + "."
        return Banner("fail", FAILED_BANNER_TITLE, text, failed)
    if missing:
        text = f"No validation.json for {join(missing)}: those figures have not been checked."
        return Banner("none", NOT_VALIDATED, text, failed)
    warnings = sum(len(v.warnings) for _, _, v in named if v is not None)
    text = "Every critical expectation holds at every scale" + (
        f"; {warnings} warning(s), listed under Validation." if warnings else "."
    )
    return Banner("pass", PASSED, text, failed)
