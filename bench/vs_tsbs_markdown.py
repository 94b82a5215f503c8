# ruff: noqa: E501 - markdown table rows are long on purpose
"""Markdown tables of one ``bench/vs_tsbs.py`` run (its JSON), for the Benchmarks page (``docs/benchmarks.md``).

    .venv/bin/python bench/vs_tsbs_markdown.py [reports/out/bench/vs_tsbs.json]

Every figure printed comes from that one file, i.e. from one run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

DEFAULT = Path(__file__).resolve().parents[1] / "reports" / "out" / "bench" / "vs_tsbs.json"


def _median(part: dict[str, Any], key: str) -> float | None:
    return (part.get(key) or {}).get("median")


def _range(part: dict[str, Any], key: str, scale: float = 1.0, digits: int = 0) -> str:
    value = part.get(key) or {}
    if not value:
        return "—"
    return f"{value['median'] / scale:,.{digits}f} ({value['min'] / scale:,.{digits}f}–{value['max'] / scale:,.{digits}f})"


def _figure(side: dict[str, Any], key: str) -> str:
    """The side's median with two decimals; "—" for a side that failed (it measured nothing)."""
    value = _median(side, key)
    return "—" if side.get("error") or value is None else f"{value:.2f}"


def _ratio(ours: float | None, theirs: float | None, digits: int = 2) -> str:
    return f"**{ours / theirs:.{digits}f}**" if ours and theirs else "—"


def load_table(body: dict[str, Any]) -> list[str]:
    lines = [
        "| target | workers | TSBS rows/s (min–max) | tsbench rows/s (min–max) | ratio | ratio, TSBS until its rows are visible² | client CPU-s per M rows, TSBS / tsbench | server CPU-s per M rows, TSBS / tsbench |",
        "|---|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    for name, target in body.get("targets", {}).items():
        for workers, row in (target.get("load") or {}).get("workers", {}).items():
            theirs, ours = row["tsbs"], row["ours"]
            tsbs_rate = _range(theirs, "rows_per_s", 1000) + " k" if not theirs["error"] else "fails¹"
            cpu = f"{_figure(theirs, 'client_cpu_s_per_million_rows')} / {_figure(ours, 'client_cpu_s_per_million_rows')}"
            server = f"{_figure(theirs, 'server_cpu_s_per_million_rows')} / {_figure(ours, 'server_cpu_s_per_million_rows')}"
            ratio = _ratio(_median(ours, "rows_per_s"), _median(theirs, "rows_per_s"))
            visible = _ratio(_median(ours, "rows_per_s"), _median(theirs, "rows_per_s_until_visible"), 3)
            lines.append(
                f"| {name} | {workers} | {tsbs_rate} | {_range(ours, 'rows_per_s', 1000)} k | {ratio} | {visible} | {cpu} | {server} |"
            )  # fmt: skip
    lines.append(
        "\n² TSBS's rows over its own seconds plus the seconds from its exit until all its rows were "
        "visible on the server, per trial — the window ours is measured in (until the rows are visible)."
    )
    return lines


def prepare_table(body: dict[str, Any]) -> list[str]:
    lines = [
        "| target | ceiling: wire bodies → do-nothing endpoint | × server | encoding while sending → endpoint | × server | prepare: encode once (s, CPU-s) |",
        "|---|---|---|---|---|---|",
    ]  # fmt: skip
    for name, target in body.get("targets", {}).items():
        ceiling = target.get("ceiling") or {}
        server = _median(
            ((target.get("load") or {}).get("workers", {}).get("2") or {}).get("ours", {}), "rows_per_s"
        )
        prep = (target.get("load") or {}).get("prepare") or {}
        wire, encode = _median(ceiling, "wire"), _median(ceiling, "encode_and_send")
        if not (wire and encode and server):
            continue
        lines.append(
            f"| {name} | {wire / 1e6:.2f} M rows/s | ×{wire / server:.1f} | {encode / 1e6:.2f} M rows/s | ×{encode / server:.1f} "
            f"| {prep.get('encode_s', 0):.2f} s, {prep.get('encode_cpu_s', 0):.2f} CPU-s |"
        )  # fmt: skip
    return lines


def query_table(body: dict[str, Any]) -> list[str]:
    lines = [
        "| target | query type | queries per run | TSBS q/s | same text q/s | same ÷ TSBS | own text q/s | client CPU-s TSBS / same / own |",
        "|---|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    for name, target in body.get("targets", {}).items():
        for qtype, row in (target.get("queries") or {}).items():
            tsbs, same, own = (row[s] for s in ("tsbs", "same_text", "own_text"))
            cpu = " / ".join(
                f"{_median(p, 'client_cpu_s'):.2f}" if _median(p, "client_cpu_s") is not None else "—"
                for p in (tsbs, same, own)
            )
            shown = _range(tsbs, "qps", 1, 1) if not tsbs["error"] else f"fails: {tsbs['error'][:60]}"
            lines.append(
                f"| {name} | {qtype} | {row.get('queries', '—')} | {shown} | {_range(same, 'qps', 1, 1)} | {_ratio(_median(same, 'qps'), _median(tsbs, 'qps'))} "
                f"| {_range(own, 'qps', 1, 1)} | {cpu} |"
            )  # fmt: skip
    return lines


def main() -> None:
    body = json.loads(Path(sys.argv[1] if len(sys.argv) > 1 else DEFAULT).read_text())
    gen = body.get("generator")
    if gen:
        print(
            f"Generator: TSBS {_range(gen['tsbs'], 'rows_per_s', 1000)} k rows/s, tsbench "
            f"{_range(gen['ours'], 'rows_per_s', 1000)} k rows/s ({_ratio(_median(gen['ours'], 'rows_per_s'), _median(gen['tsbs'], 'rows_per_s'))})\n"
        )  # fmt: skip
    for table in (load_table(body), prepare_table(body), query_table(body)):
        print("\n".join(table) + "\n")


if __name__ == "__main__":
    main()
