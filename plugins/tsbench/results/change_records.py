"""``changes.json``: the change points found in the history of a run's figures (``tsbench.changes``).

One ``ChangeRecord`` per change: which series (target × metric × use case × scale × point), the
runs on either side of it, the level before and after with an interval, and what differed between
those two runs (versions, settings, parameters, tsbench's commit). The report's Trends section, the
results explorer and the notifications read this file; none of them runs the detector again.
"""

from __future__ import annotations

from typing import ClassVar

from tsbench.results.record import Number, Record

RECENT_RUNS = 7  # a change is "recent" while its new level has at most this many runs


class RunRef(Record):
    """A run on a series: the run store's id, when it was created (UTC, ISO), its point folder."""

    run_id: str = ""
    created_at: str = ""
    point: str = ""


class Difference(Record):
    """One thing that differs between the run before a change and the run after it: ``what``
    (``"questdb version"``, ``"questdb setting shared.worker.nap.threshold"``, ``"parameter
    batch_size"``, ``"tsbench commit"``), its value before and after (``""``: absent)."""

    what: str = ""
    before: str = ""
    after: str = ""

    def text(self) -> str:
        return f"{self.what}: {self.before or '(none)'} → {self.after or '(none)'}"


class ChangeRecord(Record):
    """A change point of one series. ``before``: the last run of the old level; ``after``: the
    first run of the new level. ``relative``: mean after ÷ mean before − 1, ``low``/``high`` its
    95 % interval (None: a segment too short), ``pvalue`` Welch's. ``better``: which direction of
    the metric is better (``higher``, ``lower``); ``verdict``: ``improvement`` or ``regression``."""

    target: str = ""
    metric: str = ""
    unit: str = ""
    better: str = "higher"
    use_case: str = ""
    scale: int | None = None
    point: str = ""
    before: RunRef = RunRef()
    after: RunRef = RunRef()
    runs_before: int = 0
    runs_after: int = 0
    mean_before: Number = 0.0
    mean_after: Number = 0.0
    relative: Number = 0.0
    low: Number | None = None
    high: Number | None = None
    pvalue: Number | None = None
    verdict: str = ""
    differences: list[Difference] = []

    def interval_text(self) -> str:
        """``"−12.3 % [−15.0, −9.4]"``: the relative change and its interval, in per cent."""
        text = f"{self.relative * 100:+.1f} %"
        if self.low is not None and self.high is not None:
            text += f" [{self.low * 100:+.1f}, {self.high * 100:+.1f}]"
        return text.replace("-", "−")

    def summary(self) -> str:
        """One line for people: series, change, runs, and what changed."""
        changed = "; ".join(d.text() for d in self.differences) or "nothing recorded changed"
        return (
            f"{self.target} {self.metric} (scale {self.scale}): {self.verdict} {self.interval_text()} "
            f"from run {self.before.run_id} to run {self.after.run_id}; changed: {changed}"
        )


class ChangeReport(Record):
    """Every change found for one run: the history searched (``runs``: how many runs, ``series``:
    how many series), the detector and its settings, the changes (newest first)."""

    FILE: ClassVar[str] = "changes"

    format: str = ""
    run_id: str = ""
    computed_at: str = ""
    runs: int = 0
    series: int = 0
    detector: str = ""
    changes: list[ChangeRecord] = []

    def recent(self, within_runs: int = RECENT_RUNS) -> list[ChangeRecord]:
        """The changes whose new level began within the last ``within_runs`` runs of its series
        (this run included): what a notification leads with."""
        return [c for c in self.changes if c.runs_after <= within_runs]
