"""The explorer's data (``explorer-data.js``), typed: the runs, oldest first, and every series
(target × metric × origin × use case × scale × point) with its values and detected changes.

Runs are referred to by their position in ``ExplorerData.runs``, so a run's id, date and report
link are written once however many series it is on.
"""

from __future__ import annotations

from tsbench.results.record import Number, Record

FORMAT = "tsbench-explorer/1"


class ExplorerRun(Record):
    """A published run: its id, when it was created (UTC, ISO), its origin (the study it is an
    instance of, ``""`` for nightly and ad-hoc runs), its validation verdict (``passed``,
    ``failed``, ``not validated``) and its report as a URL relative to explorer.html (None: it has
    none)."""

    run_id: str = ""
    created_at: str = ""
    origin: str = ""
    verdict: str = "not validated"
    report: str | None = None

    @property
    def valid(self) -> bool:
        """Whether the run's figures count (its validation did not fail)."""
        return self.verdict != "failed"


class ExplorerChange(Record):
    """A detected change of a series: ``before`` is the last run of the old level and ``after``
    the first of the new one (positions in ``ExplorerData.runs``); the levels, the relative change
    (after ÷ before − 1) with its 95 % interval (None: a segment too short) and, as text,
    ``interval`` (``"−30.1 % [−33.0, −27.2]"``); Welch's p-value; ``verdict`` (``improvement`` or
    ``regression``); ``differences``: what differed between the two runs, one line each."""

    before: int = 0
    after: int = 0
    verdict: str = ""
    mean_before: Number = 0.0
    mean_after: Number = 0.0
    runs_before: int = 0
    runs_after: int = 0
    relative: Number = 0.0
    low: Number | None = None
    high: Number | None = None
    interval: str = ""
    pvalue: Number | None = None
    differences: list[str] = []


class ExplorerSeries(Record):
    """One series: which (origin, use case, scale, point, target, metric with its unit and which
    direction is better: ``higher``/``lower``), its values (``runs[i]``: the position of the run
    ``values[i]`` was measured in, oldest first; a run whose validation failed is kept, marked by its
    verdict, and left out of change detection) and its detected changes, oldest first."""

    origin: str = ""
    use_case: str = ""
    scale: int | None = None
    point: str = ""
    target: str = ""
    metric: str = ""
    unit: str = ""
    better: str = "higher"
    runs: list[int] = []
    values: list[Number] = []
    changes: list[ExplorerChange] = []


class ExplorerData(Record):
    """Everything the explorer page shows: the data's format, the change detector and its
    settings, the runs (oldest first) and the series."""

    format: str = FORMAT
    detector: str = ""
    runs: list[ExplorerRun] = []
    series: list[ExplorerSeries] = []
