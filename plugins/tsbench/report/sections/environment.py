"""The environment (machine, client packages, servers) and the appendix (query texts, configs)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tsbench.machine_state import describe as describe_state
from tsbench.report.sections.common import TargetNote
from tsbench.report.sections.queries import QueriesSection, QueryCell
from tsbench.report.sections.status import TargetView
from tsbench.results.model import MachineFacts, RunResult
from tsbench.spec import RunSpec

MACHINE_KEYS = set(MachineFacts.model_fields)


@dataclass(frozen=True)
class EnvironmentSection:
    """Machine facts as (label, text) rows, its cores, client packages (name, version), servers."""

    machine: list[tuple[str, Any]]
    cores: int | None
    clients: list[tuple[str, str]]
    servers: Sequence[TargetView]


@dataclass(frozen=True)
class QueryText:
    """One target's example text of a query type, or why there is none (``reason``)."""

    target: TargetView
    text: str
    reason: str


@dataclass(frozen=True)
class QueryTexts:
    """One query type's example texts, a target each."""

    type: str
    describe: str
    texts: list[QueryText]


@dataclass(frozen=True)
class AppendixSection:
    """Appendix A's texts per query type, the targets without any text, targets with a config."""

    queries: list[QueryTexts]
    without: list[TargetNote]
    configs: list[TargetView]


def environment_section(run: RunResult, targets: Sequence[TargetView]) -> EnvironmentSection:
    """Machine facts as (label, value) rows (unknown keys after the known ones), clients, servers."""
    machine = run.machine
    memory = machine.memory_bytes
    facts = [
        ("CPU", machine.cpu_model),
        ("Cores", machine.cores if machine.cores is not None else ""),
        ("Memory", f"{memory / 2**30:.1f} GiB" if memory else ""),
        ("OS", machine.os),
        ("Kernel", machine.kernel),
        ("Python", machine.python),
        ("Runtime", RunSpec.recorded(run.spec).runtime),
        ("tsbench commit", run.tsbench_commit or "not recorded"),
        ("Host (hash of the name)", machine.hostname_hash),
    ]
    facts += [(key, value) for key, value in machine.to_json().items() if key not in MACHINE_KEYS]
    facts.append(("State as the run started", describe_state(run.machine_state)))
    return EnvironmentSection(
        machine=facts, cores=machine.cores, clients=sorted(run.clients.items()), servers=targets
    )


def _no_text(cell: QueryCell) -> str:
    """Why a target shows no query text for a type."""
    if cell.kind == "unsupported":
        return f"unsupported: {cell.reason}"
    if cell.kind == "failed":
        return cell.reason
    return "no rendered text recorded"


def appendix_section(
    queries: QueriesSection, targets: Sequence[TargetView], examples: Mapping[str, Mapping[str, str]]
) -> AppendixSection:
    """One rendered example per query type and target. Targets without any text (failed before
    their queries) are named once instead of under every type."""
    without = [
        TargetNote(t, t.problem or "no rendered.jsonl")
        for t in targets
        if not examples.get(t.name)
        and not any(
            cell.kind == "unsupported" for row in queries.rows for item, cell in row.cells if item is t
        )
    ]
    skipped = {item.target.name for item in without}
    blocks = []
    for row in queries.rows:
        texts = []
        for target, cell in row.cells:
            if target.name in skipped:
                continue
            text = (examples.get(target.name) or {}).get(row.type)
            texts.append(QueryText(target, text or "", "" if text else _no_text(cell)))
        blocks.append(QueryTexts(row.type, row.describe, texts))
    return AppendixSection(queries=blocks, without=without, configs=[t for t in targets if t.config])
