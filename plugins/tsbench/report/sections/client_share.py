"""When the client mattered: the benchmark client's CPU during loads and query types, its share of
the machine, and the caveat when it shared the server's cores and took more than a quarter of them.

Shares are fractions of the machine that ran the client (CPU-seconds ÷ (wall seconds × cores));
the figures come from the load trials and query passes (``client_cpu_s``, ``client_share``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tsbench.report.sections.common import Caveat
from tsbench.report.sections.target_view import TargetView
from tsbench.results.model import LoadTrial, Number, RunResult
from tsbench.results.phase_records import WireFacts
from tsbench.spec import RunSpec

# Above this share of the machine's CPU, a client that shared the server's cores is called out.
CLIENT_SHARE_LIMIT = 0.25
# Runtimes whose servers run on the machine that runs the client (the Docker engine here is local).
SHARED_CORE_RUNTIMES = frozenset({"local", "docker"})


@dataclass(frozen=True)
class ClientShare:
    """The benchmark client's CPU-seconds and its share of the machine's CPU (0–1); ``source``:
    where a load's bodies came from (wire cache, Arrow batches)."""

    cpu_s: Number | None = None
    share: Number | None = None
    source: str | None = None


@dataclass(frozen=True)
class PreparedNote:
    """How a target's load bodies were encoded before the timed window (or, ``streamed``, during
    it): ``wire`` is ``load.wire`` as recorded."""

    target: TargetView
    wire: WireFacts

    @property
    def streamed(self) -> bool:
        """Encoded during the load by worker processes (``measure.wire_stream``), not before it."""
        return self.wire.streamed


@dataclass(frozen=True)
class ClientRow:
    """One query type: each target's client CPU-seconds and share over its hot passes."""

    type: str
    cells: list[tuple[TargetView, ClientShare]]


def load_client(trial: LoadTrial | None) -> ClientShare:
    """``client_cpu_s`` and ``client_share`` (0–1) of one load trial, and where its bodies came from."""
    if trial is None:
        return ClientShare()
    return ClientShare(cpu_s=trial.client_cpu_s, share=trial.client_share, source=trial.source)


def prepare_notes(run: RunResult, targets: Sequence[TargetView]) -> list[PreparedNote]:
    """Per target, how its load bodies were prepared outside the timed window (``load.wire``)."""
    notes = []
    for target in targets:
        load = run.targets[target.name].load
        wire = load.wire if load is not None else None
        if wire:
            notes.append(PreparedNote(target, wire))
    return notes


class LoadShare(Protocol):
    """A load row as the caveat reads it (``tsbench.report.sections.load.LoadRow``, which imports
    this module)."""

    @property
    def target(self) -> TargetView: ...
    @property
    def client(self) -> ClientShare: ...


def _over(share: float | None) -> bool:
    return share is not None and share > CLIENT_SHARE_LIMIT


def client_caveats(
    spec: Mapping[str, Any], load_rows: Sequence[LoadShare], query_rows: Sequence[ClientRow]
) -> list[Caveat]:
    """A warning naming every load and query type where a client that shared the server's cores
    used more than ``CLIENT_SHARE_LIMIT`` of the machine; none when the server ran elsewhere."""
    if RunSpec.recorded(dict(spec)).runtime not in SHARED_CORE_RUNTIMES:
        return []
    heavy = [
        f"{row.target.label} load ({row.client.share:.0%})" for row in load_rows if _over(row.client.share)
    ]
    heavy += [
        f"{target.label} {row.type} ({cell.share:.0%})"
        for row in query_rows
        for target, cell in row.cells
        if _over(cell.share)
    ]
    if not heavy:
        return []
    text = (
        f"The benchmark client used more than {CLIENT_SHARE_LIMIT:.0%} of the machine's CPU in "
        + ", ".join(heavy)
        + ". Client and server shared the same cores, so those figures include the client's competition "
        "for CPU: they measure the client as well as the database."
    )
    return [Caveat("warn", text)]
