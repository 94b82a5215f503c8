"""One run as the index of runs lists it (``index.json``, locally and on S3), typed: what a listing
shows without opening the run (``store.summarize`` makes it from the run's documents)."""

from __future__ import annotations

from tsbench.results.model import ValidationSummary
from tsbench.results.record import Number, Record


class IndexDataset(Record):
    """The datasets a run loaded: their ids (one per point) and their rows in all."""

    ids: list[str] = []
    rows_total: int = 0


class ReportPaths(Record):
    """The run's report files, as paths relative to its folder (None: it has none)."""

    html: str | None = None
    pdf: str | None = None


class IndexLine(Record):
    """One run: id, times, kind (``run`` or ``comparison``), use case, scales (``scale``: the largest),
    data span, targets with their worst status over the points, the verdict and validation summary,
    load rows/s per target (the largest scale's, and per scale), the datasets and the report. Where
    it is published: ``links`` (``index.RunLinks``: URLs relative to index.html) and the latest folder
    it was published under (None in a local index)."""

    run_id: str | None = None
    created_at: str | None = None
    finished_at: str | None = None
    kind: str = "run"
    study: str | None = None  # the study the run is an instance of (None: ad hoc or nightly)
    use_case: str | None = None
    scale: int | None = None
    scales: list[int | None] = []
    start: str | int | None = None
    end: str | int | None = None
    targets: list[str] = []
    status: dict[str, str] = {}
    verdict: str = "not validated"
    validation: ValidationSummary | None = None
    load_rows_per_s: dict[str, Number | None] = {}
    load_rows_per_s_by_scale: dict[str, dict[str, Number | None]] = {}
    dataset: IndexDataset = IndexDataset()
    report: ReportPaths = ReportPaths()
    links: dict[str, str | None] | None = None
    latest_folder: str | None = None

    def with_(self, **changes: object) -> IndexLine:
        """This line with ``changes`` (each written as a key of the JSON)."""
        return IndexLine.from_json({**self.to_json(), **changes})
