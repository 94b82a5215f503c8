"""``Sample``: one measured figure with its unit and labels (PerfKitBenchmarker's record shape).

Run-wide labels (run id, scale, target, versions…) are stamped on every sample so that reports
and history can group by anything.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Sample:
    metric: str
    value: float
    unit: str
    labels: dict[str, str] = field(default_factory=dict)
    timestamp: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> Sample:
        return cls(
            body["metric"], body["value"], body["unit"], dict(body.get("labels", {})), body["timestamp"]
        )


def stamp(samples: list[Sample], labels: dict[str, str]) -> list[Sample]:
    """The same samples with ``labels`` added (sample labels win on conflict)."""
    return [Sample(s.metric, s.value, s.unit, {**labels, **s.labels}, s.timestamp) for s in samples]
