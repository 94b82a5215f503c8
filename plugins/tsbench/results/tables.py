"""Plain-text tables shaped like the published studies' (load, queries per type, footprint), from
one scale's ``RunResult``."""

from __future__ import annotations

from tabulate import tabulate

from tsbench.results.model import FootprintFigures, FootprintPhase, QueriesPhase, RunResult


def _gb(value: float | None) -> str:
    return "–" if value is None else f"{value / 1e9:.3f}"


def load_table(result: RunResult) -> str:
    """Per target: the median trial by rows/s (rows, seconds, rows/s, metrics/s)."""
    rows = []
    for name, body in result.targets.items():
        trials = body.load.trials if body.load is not None else []
        if not trials:
            rows.append([name, body.status, "–", "–", "–", "–"])
            continue
        best = sorted(trials, key=lambda t: t.rows_per_s)[len(trials) // 2]
        rows.append(
            [
                name,
                body.status,
                f"{best.rows:,}",
                f"{best.seconds:.2f}",
                f"{best.rows_per_s:,.0f}",
                f"{best.metrics_per_s:,.0f}",
            ]
        )
    return tabulate(rows, ["target", "status", "rows", "seconds", "rows/s", "metrics/s"], tablefmt="github")


def query_table(result: RunResult, pass_kind: str = "hot", figure: str = "qps") -> str:
    """Query type × target: ``figure`` (a ``QueryStats`` field) of the ``pass_kind`` pass (hot or
    cold); ✗ marks errors or wrong answers."""
    names = list(result.targets)
    phases = {name: body.queries or QueriesPhase() for name, body in result.targets.items()}
    types: list[str] = []
    for queries in phases.values():
        for qtype in getattr(queries, pass_kind):
            if qtype not in types:
                types.append(qtype)
    rows = []
    for qtype in types:
        row = [qtype]
        for name in names:
            queries = phases[name]
            stats = getattr(queries, pass_kind).get(qtype)
            if stats is None:
                row.append("unsupported" if qtype in queries.unsupported else "–")
            else:
                flag = " ✗" if stats.mismatches or stats.errors else ""
                value = getattr(stats, figure)  # None when every query of the type failed
                row.append(f"{value:,.1f}{flag}" if value is not None else f"–{flag}")
        rows.append(row)
    return tabulate(rows, [f"{pass_kind} {figure}", *names], tablefmt="github")


def footprint_table(result: RunResult) -> str:
    """Per target: the database's own bytes and disk bytes after load and after settle, in GB."""
    rows = []
    for name, body in result.targets.items():
        footprint = body.footprint or FootprintPhase()
        load = footprint.after_load or FootprintFigures()
        settle = footprint.after_settle or FootprintFigures()
        rows.append([name, _gb(load.bytes), _gb(settle.bytes), _gb(load.disk_bytes), _gb(settle.disk_bytes)])
    return tabulate(
        rows,
        ["target", "DB GB after load", "DB GB after settle", "disk GB after load", "disk GB after settle"],
        tablefmt="github",
    )


def summary(result: RunResult) -> str:
    """A line per failed target (phase, error) and per target whose answers were checked (agreement)."""
    lines = []
    for name, body in result.targets.items():
        checks = body.queries.answer_checks if body.queries is not None else None
        if body.status == "failed":
            lines.append(f"{name}: FAILED in {body.failed_phase}: {body.error}")
        elif checks is not None and checks.checked:
            lines.append(f"{name}: {checks.agreed}/{checks.checked} answers agree with the oracle")
    return "\n".join(lines)


def all_tables(result: RunResult) -> str:
    """Load, queries (or a line saying the run had none), footprint and the summary lines."""
    queried = result.queries != 0  # the query set's size, as the report reads it (None: not recorded)
    queries = [
        "Queries (hot, queries/s; ✗ = errors or answers differing from the oracle)\n"
        + query_table(result, "hot"),
        "Queries (cold, mean ms)\n" + query_table(result, "cold", "mean_ms"),
    ]
    return "\n\n".join(
        [
            "Load\n" + load_table(result),
            *(queries if queried else [f"Queries: none (a load-only run: {_no_queries_reason(result)})"]),
            "Footprint\n" + footprint_table(result),
            summary(result),
        ]
    )


def _no_queries_reason(result: RunResult) -> str:
    if result.spec.get("queries_per_type") == 0:
        return "queries_per_type 0"
    return "no query type fits this use case and span"
