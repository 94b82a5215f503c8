"""The report's content, computed from a run's files: frozen views (dataclasses) for the template.

Reads only what ``tsbench.run.target_phases`` / ``tsbench.run.collect`` write (``result.json``,
``targets/<name>/rendered.jsonl``) and the validation outcome (``validation.json``). Nothing here
branches on a database's name: what differs between targets comes from their declared title,
colour and capabilities and their recorded figures. Raw numbers stay numbers; the template formats
them with the filters of ``tsbench.report.fmt``. Each section is a module of
``tsbench.report.sections`` with its views; this module reads the inputs and assembles the document.
Dicts remain only where the content is free-form as recorded (the run's spec, ``wire``
facts, error and mismatch samples).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from tsbench.report.sections.answers import (
    AnswersSection,
    ValidationView,
    answers_section,
    validation_section,
)
from tsbench.report.sections.cost import CostSection, cost_section
from tsbench.report.sections.environment import (
    AppendixSection,
    EnvironmentSection,
    appendix_section,
    environment_section,
)
from tsbench.report.sections.footprint import (
    CacheRow,
    FootprintSection,
    ResourceRow,
    cache_rows,
    footprint_section,
    resources_section,
)
from tsbench.report.sections.live import LiveSection, live_section
from tsbench.report.sections.load import LoadSection, load_section
from tsbench.report.sections.published import PublishedSection, published_section
from tsbench.report.sections.queries import QueriesSection, queries_section
from tsbench.report.sections.rollups import RollupRow, rollup_rows
from tsbench.report.sections.scales import AcrossSection, PointNaming, across_scales_section, point_naming
from tsbench.report.sections.status import (
    Banner,
    TargetView,
    banner,
    overall_banner,
    placement_rows,
    target_views,
)
from tsbench.report.sections.summary import SummarySection, summary_section
from tsbench.report.sections.trends import TrendsSection, flatten_history, trends_section
from tsbench.results.change_records import ChangeReport
from tsbench.results.documents import HistoryItem, read_result, read_validation
from tsbench.results.folder import PointFolder
from tsbench.results.model import DatasetFacts, Number, RunResult, Validation
from tsbench.studies import Study

__all__ = [
    "build_context",
    "build_report_context",
    "placement_rows",
    "read_examples",
    "read_result",
    "read_validation",
    "scale_context",
]


# -- reading a run folder ----------------------------------------------------------------------
def read_examples(run_dir: Path, names: Iterable[str]) -> dict[str, dict[str, str]]:
    """The first rendered text of every query type, per target: ``{target: {type: text}}``."""
    examples: dict[str, dict[str, str]] = {}
    for name in names:
        found: dict[str, str] = {}
        path = PointFolder(run_dir).target(name).rendered
        if path.is_file():
            with path.open() as handle:
                for line in handle:
                    if line.strip():
                        item = json.loads(line)
                        found.setdefault(item["type"], item["text"])
        examples[name] = found
    return examples


# -- the document ------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunFacts:
    """The run as the methodology states it: identity, times (ISO), spec and dataset (as recorded),
    the oracle's seconds and the number of queries."""

    id: str
    created_at: str
    finished_at: str
    spec: dict[str, Any]
    dataset: DatasetFacts
    oracle_s: Number | None
    query_count: int | None
    format: str


@dataclass(frozen=True)
class ScaleView:
    """Every section of one result (one point: a scale, or a sweep's point); ``prefix`` keeps
    anchors and chart ids unique; ``heading`` names the point's part, ``axis_value`` its place on
    the across section's axis."""

    prefix: str
    scale: int
    heading: str
    axis_value: str
    run: RunFacts
    targets: list[TargetView]
    banner: Banner
    summary: SummarySection
    environment: EnvironmentSection
    cost: CostSection
    cache: list[CacheRow]
    load: LoadSection
    queries: QueriesSection
    footprint: FootprintSection
    rollups: list[RollupRow]
    live: LiveSection | None
    resources: list[ResourceRow]
    validation: ValidationView | None
    answers: AnswersSection
    trends: TrendsSection | None
    appendix: AppendixSection


@dataclass(frozen=True)
class Title:
    """The document's title: use case, scales, target titles, first run id, first start and last
    finish (ISO instants)."""

    use_case: str
    scales: list[int]
    targets: list[str]
    run_id: str
    created_at: str
    finished_at: str


@dataclass(frozen=True)
class ReportView:
    """The whole document: title, overall banner, a view per scale, the across-scales tables."""

    title: Title
    multi: bool
    banner: Banner
    scales: list[ScaleView]
    across: AcrossSection | None
    published: PublishedSection | None = None

    def template_vars(self) -> dict[str, Any]:
        """The fields as the template's top-level names (not copied: ``asdict`` would deep-copy)."""
        return {item.name: getattr(self, item.name) for item in fields(self)}


def _run_facts(run: RunResult) -> RunFacts:
    return RunFacts(
        id=run.run_id,
        created_at=run.created_at,
        finished_at=run.finished_at,
        spec=run.spec,
        dataset=run.dataset,
        oracle_s=run.oracle_s,
        query_count=run.queries,
        format=run.format,
    )


Validations = Validation | Mapping[str, Any] | None
Examples = Mapping[str, Mapping[str, str]] | None
ScaleInputs = tuple[RunResult | Mapping[str, Any], Validations, Examples]


def _validation(validation: Validations) -> Validation | None:
    if validation is None or isinstance(validation, Validation):
        return validation
    return Validation.from_json(validation)


def scale_context(
    result: RunResult | Mapping[str, Any],
    validation: Validations = None,
    examples: Examples = None,
    history: Sequence[HistoryItem] = (),
    trend_runs: int = 10,
    naming: PointNaming | None = None,
    changes: ChangeReport | None = None,
) -> ScaleView:
    """The report's sections for one result (one scale; a ``RunResult`` or ``result.json``'s
    content) and its validation (a ``Validation`` or ``validation.json``'s content): ``prefix``
    keeps anchors and chart ids unique when several points share a document (``naming``: the
    point's prefix, heading and axis value; default: one scale alone)."""
    run = result if isinstance(result, RunResult) else RunResult.from_json(result)
    naming = naming or point_naming([run])[1][0]
    prefix = naming.prefix
    checked = _validation(validation)
    targets = target_views(run.targets)
    load = load_section(run, targets, prefix)
    queries = queries_section(run, targets, prefix)
    footprint = footprint_section(run, targets, prefix)
    return ScaleView(
        prefix=prefix,
        scale=run.spec["scale"],
        heading=naming.heading,
        axis_value=naming.value,
        run=_run_facts(run),
        targets=targets,
        banner=banner(checked, targets),
        summary=summary_section(prefix, run, targets, load, queries, footprint),
        environment=environment_section(run, targets),
        cost=cost_section(run, targets, load),
        cache=cache_rows(run, targets),
        load=load,
        queries=queries,
        footprint=footprint,
        rollups=rollup_rows(run, targets),
        live=live_section(prefix, run, targets),
        resources=resources_section(run, targets, load.rows),
        validation=validation_section(checked),
        answers=answers_section(run, targets),
        trends=trends_section(prefix, run, flatten_history(history), trend_runs, queries.types, changes),
        appendix=appendix_section(queries, targets, examples or {}),
    )


def build_report_context(
    runs: Sequence[ScaleInputs],
    history: Sequence[HistoryItem] = (),
    trend_runs: int = 10,
    study: Study | None = None,
    changes: ChangeReport | None = None,
) -> ReportView:
    """The whole document: ``runs`` = (result, validation, examples) per scale, smallest first;
    ``history``: earlier results or comparisons (records, their JSON, or stored results);
    ``study``: the study file the run is an instance of (its published claims are checked);
    ``changes``: the run's change points (``changes.json``; None: detection did not run)."""
    if not runs:
        raise ValueError("a report needs at least one result")
    multi = len(runs) > 1
    typed = [
        (r if isinstance(r, RunResult) else RunResult.from_json(r), _validation(v), e) for r, v, e in runs
    ]
    axis, names = point_naming([result for result, _, _ in typed])
    scales = [
        scale_context(result, validation, examples, history, trend_runs, name, changes)
        for (result, validation, examples), name in zip(typed, names, strict=True)
    ]
    first = scales[0]
    title = Title(
        use_case=first.run.spec["use_case"],
        scales=list(dict.fromkeys(s.scale for s in scales)),
        targets=list(dict.fromkeys(t.label for s in scales for t in s.targets)),
        run_id=first.run.id,
        created_at=min(s.run.created_at for s in scales),
        finished_at=max(s.run.finished_at for s in scales),
    )
    return ReportView(
        title=title,
        multi=multi,
        banner=overall_banner(scales, [v for _, v, _ in typed]),
        scales=scales,
        across=across_scales_section(scales, axis),
        published=_published(study, [result for result, _, _ in typed]),
    )


def _published(study: Study | None, results: Sequence[RunResult]) -> PublishedSection | None:
    if study is None or study.published is None:
        return None
    return published_section(study.name, study.title, study.published, results)


def build_context(
    result: RunResult | Mapping[str, Any],
    validation: Validations = None,
    examples: Examples = None,
    history: Sequence[HistoryItem] = (),
    trend_runs: int = 10,
) -> ReportView:
    """Everything the template shows for one result (``result.json``), its validation outcome, the
    example query texts per target (``read_examples``) and earlier results (for trends)."""
    return build_report_context([(result, validation, examples)], history, trend_runs)
