"""When the client mattered: the benchmark client's CPU during loads and query types, its share of
the machine, and the caveat when it shared the server's cores and took more than a quarter of them.

Shares are fractions of the machine that ran the client (CPU-seconds ÷ (wall seconds × cores));
the figures come from the load trials and query passes (``client_cpu_s``, ``client_share``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tsbench.report.sections.status import TargetView
from tsbench.results.model import LoadTrial, RunResult

# Above this share of the machine's CPU, a client that shared the server's cores is called out.
CLIENT_SHARE_LIMIT = 0.25
# Runtimes whose servers run on the machine that runs the client (the Docker engine here is local).
SHARED_CORE_RUNTIMES = frozenset({"local", "docker"})


def load_client(trial: LoadTrial | None) -> dict[str, Any]:
    """``client_cpu_s`` and ``client_share`` (0–1) of one load trial, and where its bodies came from."""
    if trial is None:
        return {"cpu_s": None, "share": None, "source": None}
    return {"cpu_s": trial.client_cpu_s, "share": trial.client_share, "source": trial.source}


def prepare_notes(run: RunResult, targets: Sequence[TargetView]) -> list[dict[str, Any]]:
    """Per target, how its load bodies were prepared outside the timed window (``load.wire``)."""
    notes = []
    for target in targets:
        load = run.targets[target.name].load
        wire = load.wire if load is not None else None
        if wire:
            notes.append({"target": target, **wire})
    return notes


def query_client_rows(queries: Mapping[str, Any], targets: Sequence[TargetView]) -> list[dict[str, Any]]:
    """Per query type, each target's client CPU-seconds and share over its hot passes."""
    rows = []
    for row in queries["rows"]:
        cells = []
        for target, cell in row["cells"]:
            hot = cell.get("hot") or {} if cell["kind"] == "ok" else {}
            cells.append((target, {"cpu_s": hot.get("client_cpu_s"), "share": hot.get("client_share")}))
        if any(c["cpu_s"] is not None for _, c in cells):
            rows.append({"type": row["type"], "cells": cells})
    return rows


def _over(share: float | None) -> bool:
    return share is not None and share > CLIENT_SHARE_LIMIT


def client_caveats(
    spec: Mapping[str, Any], load_rows: Sequence[Mapping[str, Any]], query_rows: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """A warning naming every load and query type where a client that shared the server's cores
    used more than ``CLIENT_SHARE_LIMIT`` of the machine; none when the server ran elsewhere."""
    if spec.get("runtime", "local") not in SHARED_CORE_RUNTIMES:
        return []
    heavy = [
        f"{row['target'].label} load ({row['client']['share']:.0%})"
        for row in load_rows
        if _over((row.get("client") or {}).get("share"))
    ]
    heavy += [
        f"{target.label} {row['type']} ({cell['share']:.0%})"
        for row in query_rows
        for target, cell in row["cells"]
        if _over(cell["share"])
    ]
    if not heavy:
        return []
    text = (
        f"The benchmark client used more than {CLIENT_SHARE_LIMIT:.0%} of the machine's CPU in "
        + ", ".join(heavy)
        + ". Client and server shared the same cores, so those figures include the client's competition "
        "for CPU: they measure the client as well as the database."
    )
    return [{"severity": "warn", "text": text}]
