"""What the across-points sections (``scales``, ``sweep``) read of one point's sections: a protocol
that ``tsbench.report.model.ScaleView`` meets, so that they need not import the module that
imports them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from tsbench.report.sections.footprint import FootprintSection
from tsbench.report.sections.load import LoadSection
from tsbench.report.sections.queries import QueriesSection
from tsbench.report.sections.target_view import TargetView


class PointRun(Protocol):
    """The run facts a point's comparison reads: its spec (RunSpec fields as recorded)."""

    @property
    def spec(self) -> Mapping[str, Any]: ...


class PointView(Protocol):
    """One point of a comparison as the sections across points read it."""

    @property
    def prefix(self) -> str: ...
    @property
    def heading(self) -> str: ...
    @property
    def axis_value(self) -> str: ...
    @property
    def run(self) -> PointRun: ...
    @property
    def targets(self) -> Sequence[TargetView]: ...
    @property
    def load(self) -> LoadSection: ...
    @property
    def queries(self) -> QueriesSection: ...
    @property
    def footprint(self) -> FootprintSection: ...
