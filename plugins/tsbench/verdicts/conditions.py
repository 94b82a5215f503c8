"""Whether a point of a run meets a claim's conditions (``tsbench.verdicts.published.Condition``): a point
that does not cannot check the claim, and the verdict there names what it lacked."""

from __future__ import annotations

from tsbench.results.model import RunResult
from tsbench.verdicts.published import Condition


def unmet(condition: Condition, run: RunResult) -> str:
    """Why ``run``'s point does not meet ``condition`` ("" when it does), with both sides' figures."""
    why = f" ({condition.why})" if condition.why else ""
    missing = _CHECKS[condition.kind](condition, run)
    return f"needs {missing}{why}" if missing else ""


def _compressed(condition: Condition, run: RunResult) -> str:
    name = condition.compressed or ""
    body = run.targets.get(name)
    phase = body.footprint if body is not None else None
    if phase is not None and phase.compression is not None and phase.compression.units > 0:
        return ""
    declared = body.provision.capabilities.compression if body and body.provision else ""
    here = (
        "not in this run"
        if body is None
        else f"stored uncompressed here ({declared or 'no native compression'})"
    )
    return f"{name}'s data compressed; {name} {here}"


def _rollup(condition: Condition, run: RunResult) -> str:
    name = condition.rollup or ""
    body = run.targets.get(name)
    if body is not None and body.queries is not None and body.queries.rollup is not None:
        return ""
    return f"a rollup built on {name}; none was built here (run option rollup_after_load)"


def _bound(have: object, bound: int | None, at_least: bool, unit: str) -> str:
    """Empty when ``have`` (a count) is at least (or at most) ``bound``; else both, for people."""
    limit = bound or 0
    ok = isinstance(have, int) and (have >= limit if at_least else have <= limit)
    shown = f"{have:,}" if isinstance(have, int) else "?"
    return "" if ok else f"{'≥' if at_least else '≤'} {limit:,} {unit}; here {shown}"


def _min_cores(condition: Condition, run: RunResult) -> str:
    return _bound(run.machine.cores, condition.min_cores, True, "cores")


def _larger_than_memory(condition: Condition, run: RunResult) -> str:
    memory = run.machine.memory_bytes
    short = []
    for name in condition.larger_than_memory or []:
        body = run.targets.get(name)
        figures = body.footprint.after_load if body and body.footprint else None
        stored = (figures.disk_bytes or figures.bytes) if figures is not None else None
        if not memory or stored is None or stored <= memory:
            shown = f"{stored / 2**30:.2f} GiB" if stored is not None else "no footprint"
            short.append(f"{name} {shown}")
    if not short:
        return ""
    here = f"{memory / 2**30:.0f} GiB" if memory else "unknown"
    return f"data larger than memory; here {', '.join(short)} against {here} of memory"


def _min_scale(condition: Condition, run: RunResult) -> str:
    return _bound(run.spec.get("scale"), condition.min_scale, True, "hosts")


def _max_scale(condition: Condition, run: RunResult) -> str:
    return _bound(run.spec.get("scale"), condition.max_scale, False, "hosts")


def _min_rows(condition: Condition, run: RunResult) -> str:
    rows = run.dataset.rows
    total = sum(rows.values()) if isinstance(rows, dict) else None
    return _bound(total, condition.min_rows, True, "rows")


_CHECKS = {
    "compressed": _compressed,
    "rollup": _rollup,
    "min_cores": _min_cores,
    "larger_than_memory": _larger_than_memory,
    "min_scale": _min_scale,
    "max_scale": _max_scale,
    "min_rows": _min_rows,
}
