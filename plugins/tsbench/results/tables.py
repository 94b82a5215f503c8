"""Plain-text tables shaped like the published studies' (load, queries per type, footprint)."""

from __future__ import annotations

from typing import Any

from tabulate import tabulate


def _gb(value: float | None) -> str:
    return "–" if value is None else f"{value / 1e9:.3f}"


def load_table(result: dict[str, Any]) -> str:
    rows = []
    for name, body in result["targets"].items():
        trials = body.get("load", {}).get("trials", [])
        if not trials:
            rows.append([name, body["status"], "–", "–", "–", "–"])
            continue
        best = sorted(trials, key=lambda t: t["rows_per_s"])[len(trials) // 2]
        rows.append(
            [
                name,
                body["status"],
                f"{best['rows']:,}",
                f"{best['seconds']:.2f}",
                f"{best['rows_per_s']:,.0f}",
                f"{best['metrics_per_s']:,.0f}",
            ]
        )
    return tabulate(rows, ["target", "status", "rows", "seconds", "rows/s", "metrics/s"], tablefmt="github")


def query_table(result: dict[str, Any], pass_kind: str = "hot", figure: str = "qps") -> str:
    names = list(result["targets"])
    types: list[str] = []
    for body in result["targets"].values():
        for qtype in body.get("queries", {}).get(pass_kind, {}):
            if qtype not in types:
                types.append(qtype)
    rows = []
    for qtype in types:
        row = [qtype]
        for name in names:
            queries = result["targets"][name].get("queries", {})
            stats = queries.get(pass_kind, {}).get(qtype)
            if stats is None:
                row.append("unsupported" if qtype in queries.get("unsupported", {}) else "–")
            else:
                flag = " ✗" if stats["mismatches"] or stats["errors"] else ""
                row.append(f"{stats[figure]:,.1f}{flag}")
        rows.append(row)
    return tabulate(rows, [f"{pass_kind} {figure}", *names], tablefmt="github")


def footprint_table(result: dict[str, Any]) -> str:
    rows = []
    for name, body in result["targets"].items():
        fp = body.get("footprint", {})
        load, settle = fp.get("after_load", {}), fp.get("after_settle", {})
        rows.append(
            [
                name,
                _gb(load.get("bytes")),
                _gb(settle.get("bytes")),
                _gb(load.get("disk_bytes")),
                _gb(settle.get("disk_bytes")),
            ]
        )
    return tabulate(
        rows,
        ["target", "DB GB after load", "DB GB after settle", "disk GB after load", "disk GB after settle"],
        tablefmt="github",
    )


def summary(result: dict[str, Any]) -> str:
    lines = []
    for name, body in result["targets"].items():
        checks = body.get("queries", {}).get("answer_checks")
        if body["status"] == "failed":
            lines.append(f"{name}: FAILED in {body['failed_phase']}: {body['error']}")
        elif checks:
            lines.append(f"{name}: {checks['agreed']}/{checks['checked']} answers agree with the oracle")
    return "\n".join(lines)


def all_tables(result: dict[str, Any]) -> str:
    return "\n\n".join(
        [
            "Load\n" + load_table(result),
            "Queries (hot, queries/s; ✗ = errors or answers differing from the oracle)\n"
            + query_table(result, "hot"),
            "Queries (cold, mean ms)\n" + query_table(result, "cold", "mean_ms"),
            "Footprint\n" + footprint_table(result),
            summary(result),
        ]
    )
