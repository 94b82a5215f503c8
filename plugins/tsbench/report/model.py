"""The report's content, computed from a run's files: plain dicts and lists for the template.

Reads only what ``tsbench.runner`` / ``tsbench.results.collect`` write (``result.json``,
``targets/<name>/rendered.jsonl``) and the validation outcome (``validation.json``). Nothing here
branches on a database's name: what differs between targets comes from their declared
capabilities and recorded figures. Raw numbers stay numbers; the template formats them with the
filters of ``tsbench.report.fmt`` (sentences are formatted here with the same functions).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tsbench.report import charts, client_share, fmt
from tsbench.targets.registry import target_colour, target_title
from tsbench.timeutil import format_instant
from tsbench.workload.answers import ABS_TOL, REL_TOL, answer_columns
from tsbench.workload.query_types import QUERY_TYPES

# The query types the published studies headline (A: high-cpu-*, lastpoint, single-groupby-1-1-1,
# double-groupby; C: double-groupby-5, cpu-max-all-8, lastpoint, groupby-orderby-limit).
HEADLINE_TYPES = (
    "high-cpu-all",
    "lastpoint",
    "single-groupby-1-1-1",
    "double-groupby-5",
    "cpu-max-all-8",
    "groupby-orderby-limit",
    "high-cpu-1",
    "double-groupby-all",
)
TREND_CHART_TYPES = 4
NOISE_RATIO = 1.10  # differences below 10 % are called out as within run-to-run noise
SMALL_ROWS = 1_000_000
FEW_QUERIES = 10
FEW_SAMPLES = 5


# -- reading a run folder ----------------------------------------------------------------------
def read_result(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "result.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} does not exist: run tsbench.results.collect.collect() on the run first"
        )
    return json.loads(path.read_text())


def read_validation(run_dir: Path) -> dict[str, Any] | None:
    path = run_dir / "validation.json"
    return json.loads(path.read_text()) if path.is_file() else None


def read_examples(run_dir: Path, names: Iterable[str]) -> dict[str, dict[str, str]]:
    """The first rendered text of every query type, per target: ``{target: {type: text}}``."""
    examples: dict[str, dict[str, str]] = {}
    for name in names:
        found: dict[str, str] = {}
        path = run_dir / "targets" / name / "rendered.jsonl"
        if path.is_file():
            with path.open() as handle:
                for line in handle:
                    if line.strip():
                        item = json.loads(line)
                        found.setdefault(item["type"], item["text"])
        examples[name] = found
    return examples


# -- helpers -----------------------------------------------------------------------------------
STATS_KEYS = ("count", "errors", "mismatches", "min_ms", "p50_ms", "mean_ms", "p90_ms", "p95_ms", "p99_ms")
STATS_KEYS += ("max_ms", "stddev_ms", "wall_s", "qps")
RESOURCE_KEYS = ("samples", "cpu_percent_mean", "cpu_percent_max", "rss_bytes_mean", "rss_bytes_max")
RESET_KEYS = ("restarted", "was_down", "os_cache_dropped", "os_cache_note", "note", "stop_s", "start_s")


def _complete(body: Mapping[str, Any] | None, keys: Sequence[str]) -> dict[str, Any]:
    """``body`` with every key of ``keys`` present (``None`` when the run did not record it)."""
    return {**dict.fromkeys(keys), **(body or {})}


def _describe(qtype: str) -> str:
    known = QUERY_TYPES.get(qtype)
    return known.describe if known is not None else ""


def _answer_columns(qtype: str) -> list[str]:
    known = QUERY_TYPES.get(qtype)
    return answer_columns(known)[0] if known is not None else []


def _median_trial(load: Mapping[str, Any]) -> tuple[dict[str, Any] | None, int]:
    """The median trial by rows/s (the one ``median_rows_per_s`` names) and its 1-based number."""
    trials = load.get("trials") or []
    if not trials:
        return None, 0
    order = sorted(range(len(trials)), key=lambda i: trials[i]["rows_per_s"])
    index = order[len(order) // 2]
    return trials[index], index + 1


def _ranked(values: Mapping[str, float | None], higher_is_better: bool) -> list[tuple[str, float]]:
    present = [(name, value) for name, value in values.items() if value is not None and value > 0]
    return sorted(present, key=lambda item: -item[1] if higher_is_better else item[1])


def _ratio(best: float, other: float, higher_is_better: bool) -> float:
    return best / other if higher_is_better else other / best


def _noise(ratio: float) -> str:
    return " — under 10 %, within run-to-run noise" if ratio < NOISE_RATIO else ""


def _join(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _query_type_order(types: Iterable[str]) -> list[str]:
    catalogue = list(QUERY_TYPES)
    seen = list(dict.fromkeys(types))
    return sorted(
        seen, key=lambda t: (catalogue.index(t) if t in catalogue else len(catalogue), seen.index(t))
    )


# -- the parts of the report -------------------------------------------------------------------
def _target_view(name: str, body: Mapping[str, Any]) -> dict[str, Any]:
    provision = body.get("provision") or {}
    caps = provision.get("capabilities") or {}
    endpoint = provision.get("endpoint") or {}
    ports = endpoint.get("ports") or {}
    endpoint_text = ""
    if endpoint:
        endpoint_text = endpoint.get("host", "") + (
            " (" + ", ".join(f"{role} {port}" for role, port in ports.items()) + ")" if ports else ""
        )
    status = body.get("status", "incomplete")
    problem = ""
    if status == "failed":
        problem = f"failed in {body.get('failed_phase', '?')}"
    elif status != "ok":
        problem = (
            f"incomplete: {body.get('stopped_before', 'a phase')} never ran (its task did not start:"
            " an earlier task failed or the run was stopped; see the Airflow task logs)"
        )
    return {
        "name": name,
        "label": target_title(name),
        "colour": target_colour(name),
        "status": status,
        "ok": status == "ok",
        "failed_phase": body.get("failed_phase", ""),
        "error": body.get("error", ""),
        "problem": problem,
        "version": provision.get("version", ""),
        "server_binary": provision.get("server_binary", ""),
        "runtime": provision.get("runtime", ""),
        "placement": placement_rows(provision.get("placement") or {}),
        "endpoint": endpoint_text,
        "settings": provision.get("settings") or {},
        "config": provision.get("config", ""),
        "durable": caps.get("durable"),
        "compression": caps.get("compression", ""),
        "schema_note": caps.get("schema_note", ""),
        "unsupported": dict(caps.get("unsupported") or {}),
        "provisioned": bool(provision),
    }


def placement_rows(placement: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """Where a server ran (runtime facts: instance, volumes, image, host) as flat ``(key, text)``
    rows, nested keys joined with dots; empty values and block device listings left out."""
    rows: list[tuple[str, str]] = []
    for key, value in placement.items():
        name = f"{prefix}{key}"
        if value in (None, "", [], {}) or key == "block_devices":
            continue
        if isinstance(value, Mapping):
            rows += placement_rows(value, name + ".")
        elif isinstance(value, list | tuple):
            rows.append((name, ", ".join(str(item) for item in value)))
        else:
            rows.append((name, str(value)))
    return rows


def _banner(validation: Mapping[str, Any] | None, targets: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    failed = [t for t in targets if not t["ok"]]
    failed_text = [
        f"{t['label']} ({t['problem']}" + (f": {t['error']})" if t["error"] else ")") for t in failed
    ]
    if validation is None:
        banner = {
            "kind": "none",
            "title": "Not validated",
            "text": "No validation.json in the run folder: these figures have not been checked by the "
            "validation suites.",
        }
    elif validation.get("success"):
        warnings = validation.get("warnings") or []
        banner = {
            "kind": "pass",
            "title": "Validation passed",
            "text": "Every critical expectation holds"
            + (f"; {len(warnings)} warning(s), listed under Validation." if warnings else "."),
        }
    else:
        critical = validation.get("critical_failed") or []
        banner = {
            "kind": "fail",
            "title": "Validation FAILED — not replacing the latest report",
            "text": "Critical expectations failed: "
            + (", ".join(map(str, critical)) or "see Validation")
            + ".",
        }
    banner["failed_targets"] = failed_text
    return banner


def _load_section(
    result: Mapping[str, Any], targets: Sequence[dict[str, Any]], prefix: str
) -> dict[str, Any]:
    rows = []
    for target in targets:
        load = result["targets"][target["name"]].get("load") or {}
        trial, number = _median_trial(load)
        complete = bool(trial) and load.get("row_count_ok", False) and "median_rows_per_s" in load
        row: dict[str, Any] = {"target": target, "trial": trial, "complete": complete, "note": ""}
        if trial:
            trials = load["trials"]
            row.update(
                rows=trial["rows"],
                metrics=trial["metrics"],
                seconds=trial["seconds"],
                rows_per_s=trial["rows_per_s"] if complete else None,
                metrics_per_s=trial["metrics_per_s"] if complete else None,
                trial_number=number,
                trial_rates=[t["rows_per_s"] for t in trials] if len(trials) > 1 else [],
                resources=_complete(trial.get("resources"), RESOURCE_KEYS),
                row_counts=trial.get("row_counts") or {},
                client=client_share.load_client(trial),
            )
            if not complete:
                row["note"] = "row count after load differs from the dataset: " + json.dumps(
                    trial.get("row_counts") or {}
                )
        else:
            row.update(
                rows=None,
                metrics=None,
                seconds=None,
                rows_per_s=None,
                metrics_per_s=None,
                trial_number=0,
                trial_rates=[],
                resources={},
                row_counts={},
                client=client_share.load_client(None),
            )
            row["note"] = target["problem"] or "no load figures"
        rows.append(row)
    ranked = _ranked({r["target"]["name"]: r["rows_per_s"] for r in rows}, True)
    best = ranked[0][1] if ranked else None
    for row in rows:
        row["best"] = bool(ranked) and row["target"]["name"] == ranked[0][0]
        row["vs_best"] = best / row["rows_per_s"] if best and row["rows_per_s"] else None
    chart = charts.bar_chart(
        f"{prefix}load-chart",
        [r["target"]["label"] for r in rows],
        [r["rows_per_s"] for r in rows],
        [r["target"]["colour"] for r in rows],
        "rows/s (median trial)",
        notes=[r["note"] or "no figure" for r in rows],
        value_text=[fmt.rate(r["rows_per_s"]) for r in rows],
    )
    return {"rows": rows, "chart": chart, "prepared": client_share.prepare_notes(result, targets)}


def _cell_for(target: Mapping[str, Any], body: Mapping[str, Any], qtype: str) -> dict[str, Any]:
    queries = body.get("queries")
    unsupported = {**target["unsupported"], **((queries or {}).get("unsupported") or {})}
    if qtype in unsupported:
        return {"kind": "unsupported", "reason": unsupported[qtype]}
    if not queries:
        return {"kind": "failed", "reason": target["problem"] or "no query figures"}
    hot = (queries.get("hot") or {}).get(qtype)
    cold = (queries.get("cold") or {}).get(qtype)
    if hot is None and cold is None:
        return {"kind": "missing", "reason": "not run"}
    hot = _complete(hot, STATS_KEYS)
    cold = _complete(cold, STATS_KEYS)
    errors = (hot["errors"] or 0) + (cold["errors"] or 0)
    mismatches = (hot["mismatches"] or 0) + (cold["mismatches"] or 0)
    clean = not errors and not mismatches and (hot["count"] or 0) > 0
    return {
        "kind": "ok",
        "hot": hot,
        "cold": cold,
        "qps": hot["qps"] if (hot["count"] or 0) > 0 else None,
        "errors": errors,
        "mismatches": mismatches,
        "clean": clean,
        "best": False,
    }


def _queries_section(
    result: Mapping[str, Any], targets: Sequence[dict[str, Any]], prefix: str
) -> dict[str, Any]:
    bodies = result["targets"]
    seen: list[str] = list(result["spec"].get("query_types") or [])
    for target in targets:
        queries = bodies[target["name"]].get("queries") or {}
        for part in ("hot", "cold", "unsupported"):
            seen.extend(queries.get(part) or {})
    types = _query_type_order(seen)
    rows = []
    wins: dict[str, int] = {}
    for qtype in types:
        cells = {t["name"]: _cell_for(t, bodies[t["name"]], qtype) for t in targets}
        ranked = _ranked({n: c["qps"] for n, c in cells.items() if c["kind"] == "ok" and c["clean"]}, True)
        if ranked:
            cells[ranked[0][0]]["best"] = True
            wins[ranked[0][0]] = wins.get(ranked[0][0], 0) + 1
        rows.append(
            {
                "type": qtype,
                "describe": _describe(qtype),
                "cells": [(t, cells[t["name"]]) for t in targets],
                "ranked": ranked,
                "anchor": f"{prefix}q-{qtype}",
            }
        )
    series = {t["label"]: [_qps(row, t) for row in rows] for t in targets}
    chart = ""
    if rows and any(v for values in series.values() for v in values):
        chart = charts.grouped_bars(
            f"{prefix}qps-chart",
            [r["type"] for r in rows],
            series,
            {t["label"]: t["colour"] for t in targets},
            "queries/s (hot)",
        )
    return {
        "types": types,
        "rows": rows,
        "chart": chart,
        "wins": wins,
        "client": client_share.query_client_rows({"rows": rows}, targets),
    }


def _qps(row: Mapping[str, Any], target: Mapping[str, Any]) -> float | None:
    for item, cell in row["cells"]:
        if item["name"] == target["name"]:
            return cell.get("qps") if cell["kind"] == "ok" else None
    return None


def _footprint_section(
    result: Mapping[str, Any], targets: Sequence[dict[str, Any]], prefix: str
) -> dict[str, Any]:
    rows = []
    settle_seconds = None
    for target in targets:
        footprint = result["targets"][target["name"]].get("footprint") or {}
        settle_seconds = footprint.get("settle_seconds", settle_seconds)
        load = footprint.get("after_load") or {}
        settle = footprint.get("after_settle") or {}
        rows.append(
            {
                "target": target,
                "db_load": load.get("bytes"),
                "db_settle": settle.get("bytes"),
                "disk_load": load.get("disk_bytes"),
                "disk_settle": settle.get("disk_bytes"),
                "parts": (settle or load).get("parts") or {},
                "note": (settle or load).get("note", ""),
                "missing": not footprint,
                "reason": target["problem"] or "no footprint figures",
            }
        )
    for key in ("db", "disk"):
        ranked = _ranked({r["target"]["name"]: r[f"{key}_settle"] or r[f"{key}_load"] for r in rows}, False)
        for row in rows:
            row[f"{key}_smallest"] = bool(ranked) and row["target"]["name"] == ranked[0][0]
    chart = ""
    if any(not r["missing"] for r in rows):
        chart = charts.grouped_bars(
            f"{prefix}footprint-chart",
            ["DB's own accounting", "disk bytes of the data folders"],
            {r["target"]["label"]: [r["db_settle"], r["disk_settle"]] for r in rows},
            {t["label"]: t["colour"] for t in targets},
            "bytes",
            rotate=False,
        )
    return {"rows": rows, "settle_seconds": settle_seconds, "chart": chart}


def _resources_section(
    result: Mapping[str, Any], targets: Sequence[dict[str, Any]], load_rows: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    rows = []
    trials = result["spec"].get("trials", 1)
    for target, load_row in zip(targets, load_rows, strict=True):
        queries = result["targets"][target["name"]].get("queries") or {}
        if load_row.get("resources"):
            phase = "load" + (
                f" (trial {load_row['trial_number']} of {trials}, the median)" if trials > 1 else ""
            )
            rows.append({"target": target, "phase": phase, **_complete(load_row["resources"], RESOURCE_KEYS)})
        if queries.get("resources"):
            passes = 1 + queries.get("hot_passes", 0)
            phase = f"queries (cold + {passes - 1} hot pass{'es' if passes > 2 else ''})"
            rows.append({"target": target, "phase": phase, **_complete(queries["resources"], RESOURCE_KEYS)})
        if not load_row.get("resources") and not queries.get("resources"):
            rows.append({"target": target, "phase": target["problem"] or "no samples", "missing": True})
        for row in rows:
            row.setdefault("missing", False)
    return rows


def _cache_rows(result: Mapping[str, Any], targets: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for target in targets:
        reset = result["targets"][target["name"]].get("cache_reset")
        rows.append(
            {
                "target": target,
                "reset": _complete(reset, RESET_KEYS) if reset is not None else None,
                "reason": target["problem"] or "not run",
            }
        )
    return rows


def _answers_section(result: Mapping[str, Any], targets: Sequence[dict[str, Any]]) -> dict[str, Any]:
    rows, samples, errors = [], [], []
    for target in targets:
        queries = result["targets"][target["name"]].get("queries")
        if not queries:
            rows.append({"target": target, "missing": True, "reason": target["problem"] or "no queries"})
            continue
        checks = queries.get("answer_checks") or {}
        error_info = queries.get("errors") or {}
        rows.append(
            {
                "target": target,
                "missing": False,
                "checked": checks.get("checked", 0),
                "agreed": checks.get("agreed", 0),
                "mismatches": checks.get("mismatches", 0),
                "errors": error_info.get("count", 0),
            }
        )
        for sample in checks.get("mismatch_samples") or []:
            qtype = str(sample.get("query_id", "")).split("#")[0]
            diff_rows = sample.get("rows") or []
            width = max((len(r.get("expected") or r.get("actual") or []) for r in diff_rows), default=0)
            columns = _answer_columns(qtype)
            if len(columns) != width:
                columns = [f"col {i + 1}" for i in range(width)]
            table = []
            for diff in diff_rows:
                want, got = diff.get("expected"), diff.get("actual")
                differs = [
                    want is None or got is None or i >= len(want) or i >= len(got) or want[i] != got[i]
                    for i in range(width)
                ]
                table.append(
                    {
                        "row": diff.get("row"),
                        "expected": None if want is None else _show_values(columns, want),
                        "actual": None if got is None else _show_values(columns, got),
                        "differs": differs,
                    }
                )
            samples.append(
                {
                    "target": target,
                    "pass": sample.get("pass", ""),
                    "query_id": sample.get("query_id", ""),
                    "type": qtype,
                    "reason": sample.get("reason", ""),
                    "columns": columns,
                    "rows": table,
                }
            )
        for sample in error_info.get("samples") or []:
            errors.append({"target": target, **sample})
    return {"rows": rows, "samples": samples, "errors": errors, "rel_tol": REL_TOL, "abs_tol": ABS_TOL}


TIME_COLUMNS = ("bucket", "time")


def _show_values(columns: Sequence[str], values: Sequence[Any]) -> list[str]:
    """An answer row for a person: ns timestamps under time columns as ISO instants."""
    shown = []
    for column, value in zip(columns, values, strict=False):
        if column in TIME_COLUMNS and isinstance(value, int) and not isinstance(value, bool):
            shown.append(format_instant(value))
        else:
            shown.append(fmt.cell(value))
    return shown


def _validation_section(validation: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if validation is None:
        return None
    suites = []
    counts = {"pass": 0, "fail": 0, "warning": 0, "skipped": 0}
    for suite in validation.get("suites") or []:
        critical = bool(suite.get("critical", True))
        results = []
        for item in suite.get("results") or []:
            if item.get("skipped"):
                status = "skipped"
            else:
                status = "pass" if item.get("success") else ("fail" if critical else "warning")
            counts[status] += 1
            results.append(
                {
                    "expectation": item.get("expectation", ""),
                    "success": bool(item.get("success")),
                    "observed": item.get("observed"),
                    "details": item.get("details"),
                    "status": status,
                }
            )
        if suite.get("status") == "skipped":
            suite_status = "skipped"
        else:
            suite_status = "pass" if suite.get("success") else ("fail" if critical else "warning")
        suites.append(
            {"name": suite.get("name", "?"), "critical": critical, "status": suite_status, "results": results}
        )
    return {
        "success": bool(validation.get("success")),
        "critical_failed": validation.get("critical_failed") or [],
        "warnings": validation.get("warnings") or [],
        "suites": suites,
        "counts": counts,
    }


def _summary(
    prefix: str,
    result: Mapping[str, Any],
    targets: Sequence[dict[str, Any]],
    load: Mapping[str, Any],
    queries: Mapping[str, Any],
    footprint: Mapping[str, Any],
) -> dict[str, Any]:
    labels = {t["name"]: t["label"] for t in targets}
    winners: list[dict[str, Any]] = []
    headlines: list[str] = []

    def add(
        metric: str, anchor: str, ranked: list[tuple[str, float]], unit: str, form: Any, higher: bool
    ) -> None:
        def show(value: float) -> str:
            return form(value) + (f" {unit}" if unit else "")

        row: dict[str, Any] = {
            "metric": metric,
            "anchor": anchor,
            "verb": "faster than" if higher else "smaller than",
            "best": None,
            "runner_up": None,
            "last": None,
        }
        if ranked:
            name, value = ranked[0]
            row["best"] = {"label": labels[name], "value": show(value), "colour": target_colour(name)}
            if len(ranked) > 1:
                other, other_value = ranked[1]
                ratio = _ratio(value, other_value, higher)
                row["runner_up"] = {"label": labels[other], "value": show(other_value), "ratio": ratio}
            if len(ranked) > 2:
                last, last_value = ranked[-1]
                ratio = _ratio(value, last_value, higher)
                row["last"] = {"label": labels[last], "value": show(last_value), "ratio": ratio}
        winners.append(row)

    load_ranked = _ranked({r["target"]["name"]: r["rows_per_s"] for r in load["rows"]}, True)
    add("Load", f"{prefix}load", load_ranked, "rows/s", fmt.rate, True)
    if len(load_ranked) > 1:
        (best, best_v), (other, other_v) = load_ranked[0], load_ranked[1]
        ratio = best_v / other_v
        text = f"{labels[best]} loads {fmt.times(ratio)} faster than {labels[other]}"
        text += f" ({fmt.rate(best_v)} vs {fmt.rate(other_v)} rows/s){_noise(ratio)}"
        if len(load_ranked) > 2:
            last, last_v = load_ranked[-1]
            text += f"; {fmt.times(best_v / last_v)} faster than {labels[last]}, the slowest"
        headlines.append(text + ".")
    elif load_ranked:
        headlines.append(
            f"Only {labels[load_ranked[0][0]]} completed its load ({fmt.rate(load_ranked[0][1])} rows/s)."
        )

    for row in queries["rows"]:
        add(f"{row['type']} (hot)", row["anchor"], row["ranked"], "qps", fmt.rate, True)
    wins = queries["wins"]
    if wins:
        order = sorted(wins.items(), key=lambda item: -item[1])
        counted = sum(wins.values())
        parts = [f"{labels[name]} in {count}" for name, count in order]
        headlines.append(
            f"Fastest hot queries: of {counted} query type(s) with a clean answer from at least one target, "
            f"{_join(parts)}."
        )

    for key, metric, what in (
        ("db", "Footprint, DB's own accounting", "by its own accounting"),
        ("disk", "Footprint, disk bytes", "on disk"),
    ):
        ranked = _ranked(
            {r["target"]["name"]: r[f"{key}_settle"] or r[f"{key}_load"] for r in footprint["rows"]}, False
        )
        add(metric, f"{prefix}footprint", ranked, "", fmt.size, False)
        if len(ranked) > 1:
            (best, best_v), (other, other_v) = ranked[0], ranked[1]
            ratio = other_v / best_v
            headlines.append(
                f"{labels[best]} stores the data in the least space {what}: {fmt.size(best_v)}; "
                f"{labels[other]} needs {fmt.times(ratio)} as much ({fmt.size(other_v)}){_noise(ratio)}."
            )
    return {
        "winners": winners,
        "has_last": any(w["last"] for w in winners),
        "headlines": headlines,
        "caveats": _caveats(result, targets, load, queries),
    }


def _caveats(
    result: Mapping[str, Any],
    targets: Sequence[dict[str, Any]],
    load: Mapping[str, Any],
    queries: Mapping[str, Any],
) -> list[dict[str, Any]]:
    """Honest limits of this run, most serious first: ``{"severity": bad|warn|info, "text": ...}``."""
    spec = result["spec"]
    out: list[dict[str, Any]] = []
    for target in targets:
        if target["status"] == "failed":
            out.append(
                {
                    "severity": "bad",
                    "text": f"{target['label']} failed in {target['failed_phase']}: {target['error']}. "
                    "It is left out of every comparison after that phase.",
                }
            )
        elif not target["ok"]:
            out.append({"severity": "bad", "text": f"{target['label']}: {target['problem']}."})
    for row in load["rows"]:
        if row["trial"] and not row["complete"]:
            out.append({"severity": "bad", "text": f"{row['target']['label']}: {row['note']}."})
    for target in targets:
        bad = [
            (row["type"], cell)
            for row in queries["rows"]
            for item, cell in row["cells"]
            if item["name"] == target["name"]
            and cell["kind"] == "ok"
            and (cell["errors"] or cell["mismatches"])
        ]
        if bad:
            described = [
                f"{qtype} ({cell['errors']} error(s), {cell['mismatches']} wrong answer(s))"
                for qtype, cell in bad
            ]
            out.append(
                {
                    "severity": "bad",
                    "text": f"{target['label']}: {_join(described)}. Those types do not count as wins; see "
                    "Answer checks.",
                }
            )
    for target in targets:
        in_run = {qtype: r for qtype, r in target["unsupported"].items() if qtype in queries["types"]}
        if in_run:
            reasons: dict[str, list[str]] = {}
            for qtype, reason in in_run.items():
                reasons.setdefault(reason, []).append(qtype)
            text = "; ".join(f"{_join(types)}: {reason}" for reason, types in reasons.items())
            out.append({"severity": "warn", "text": f"{target['label']} does not run {text}."})
    for target in targets:
        if target["provisioned"] and target["compression"]:
            out.append(
                {"severity": "info", "text": f"{target['label']} compression: {target['compression']}."}
            )
        if target["durable"] is False:
            out.append(
                {
                    "severity": "warn",
                    "text": f"{target['label']}'s flush makes data visible, not durable (no fsync/WAL wait) "
                    "— its load rate is not like-for-like with durable targets.",
                }
            )
    for target in targets:
        reset = result["targets"][target["name"]].get("cache_reset")
        if reset is None:
            continue
        if not reset.get("restarted"):
            out.append(
                {
                    "severity": "warn",
                    "text": f"{target['label']} was not restarted before the cold pass "
                    f"({reset.get('note', 'no reason given')}): its cold figures are warm.",
                }
            )
        elif not reset.get("os_cache_dropped"):
            out.append(
                {
                    "severity": "warn",
                    "text": f"{target['label']}: the OS page cache was not dropped before the cold pass "
                    f"({reset.get('os_cache_note', '')}); cold figures may include cached data.",
                }
            )
    rows_total = result.get("dataset", {}).get("rows_total") or 0
    if rows_total and rows_total < SMALL_ROWS:
        out.append(
            {
                "severity": "info",
                "text": f"Small dataset ({fmt.integer(rows_total)} rows): fixed costs (connections, commits, "
                "planning) weigh heavily; do not set these figures beside the published studies' "
                "(millions of rows, bigger machines).",
            }
        )
    per_type = spec.get("queries_per_type", 0)
    if per_type and per_type < FEW_QUERIES:
        out.append(
            {
                "severity": "info",
                "text": f"Only {per_type} queries per type and pass: p95/p99 are interpolated from a "
                "handful of latencies and say little.",
            }
        )
    if spec.get("trials", 1) == 1:
        out.append(
            {"severity": "info", "text": "Each load ran once (trials = 1): no median over trials, no spread."}
        )
    short = [
        r["target"]["label"]
        for r in load["rows"]
        if r.get("resources") and (r["resources"].get("samples") or 0) < FEW_SAMPLES
    ]
    if short:
        out.append(
            {
                "severity": "info",
                "text": f"The load of {_join(short)} took under {FEW_SAMPLES} samples of the 0.5 s resource "
                "sampler: its load CPU/memory figures are rough.",
            }
        )
    cores = (result.get("machine") or {}).get("cores")
    if spec.get("runtime", "local") == "local":
        out.append(
            {
                "severity": "info",
                "text": "Database servers and the benchmark client ran on the same machine"
                + (f" ({cores} cores)" if cores else "")
                + ", one database at a time, competing for the same CPUs (as in study A).",
            }
        )
    remote = [t["label"] for t in targets if t.get("runtime") in ("aws", "docker")]
    if spec.get("runtime") == "aws":
        out.append(
            {
                "severity": "info",
                "text": "Each database ran on its own cloud host provisioned for this run (see Environment); "
                "the benchmark client ran on the orchestrator and reached it over the network, so "
                "latencies include the network round trip.",
            }
        )
    elif remote and spec.get("runtime") == "docker":
        out.append(
            {
                "severity": "info",
                "text": "Databases ran in containers (official images, pinned tags in Environment) on the "
                "Docker engine's host.",
            }
        )
    out += client_share.client_caveats(spec, load["rows"], queries["client"])
    order = {"bad": 0, "warn": 1, "info": 2}
    return sorted(out, key=lambda item: order[item["severity"]])


def _environment(result: Mapping[str, Any], targets: Sequence[dict[str, Any]]) -> dict[str, Any]:
    machine = result.get("machine") or {}
    memory = machine.get("memory_bytes")
    facts = [
        ("CPU", machine.get("cpu_model", "")),
        ("Cores", machine.get("cores", "")),
        ("Memory", f"{memory / 2**30:.1f} GiB" if memory else ""),
        ("OS", machine.get("os", "")),
        ("Kernel", machine.get("kernel", "")),
        ("Python", machine.get("python", "")),
        ("Runtime", result["spec"].get("runtime", "")),
        ("Host (hash of the name)", machine.get("hostname_hash", "")),
    ]
    known = {"cpu_model", "cores", "memory_bytes", "os", "kernel", "python", "hostname_hash"}
    facts += [(key, value) for key, value in machine.items() if key not in known]
    return {
        "machine": facts,
        "cores": machine.get("cores"),
        "clients": sorted((result.get("clients") or {}).items()),
        "servers": targets,
    }


def _trends(
    prefix: str,
    result: Mapping[str, Any],
    history: Sequence[Mapping[str, Any]],
    limit: int,
    query_types: Sequence[str],
) -> dict[str, Any] | None:
    spec = result["spec"]
    same = [
        h
        for h in history
        if h.get("run_id") != result["run_id"]
        and h.get("spec", {}).get("use_case") == spec["use_case"]
        and h.get("spec", {}).get("scale") == spec["scale"]
    ]
    skipped = len(history) - len(same)
    runs = sorted([*same, result], key=lambda r: (r.get("created_at", ""), r.get("run_id", "")))[-limit:]
    if len(runs) < 2:
        return None
    labels = []
    for run in runs:
        created = run.get("created_at", "")
        label = f"{created[:10]} {created[11:16]}" if len(created) >= 16 else run.get("run_id", "?")
        labels.append(label + (" (this)" if run is result else ""))
    if len(set(labels)) != len(labels):
        labels = [run.get("run_id", "?") + (" (this)" if run is result else "") for run in runs]
    names = list(dict.fromkeys([*result["targets"], *(n for run in runs for n in run.get("targets", {}))]))
    colours = {target_title(n): target_colour(n) for n in names}

    def load_rate(run: Mapping[str, Any], name: str) -> float | None:
        return ((run.get("targets", {}).get(name) or {}).get("load") or {}).get("median_rows_per_s")

    def hot_qps(run: Mapping[str, Any], name: str, qtype: str) -> float | None:
        queries = (run.get("targets", {}).get(name) or {}).get("queries") or {}
        stats = (queries.get("hot") or {}).get(qtype)
        if not stats or stats.get("errors") or stats.get("mismatches") or not stats.get("count"):
            return None
        return stats.get("qps")

    def series(getter: Any) -> dict[str, list[float | None]]:
        out = {target_title(n): [getter(run, n) for run in runs] for n in names}
        return {label: values for label, values in out.items() if any(v is not None for v in values)}

    made = []
    load_series = series(load_rate)
    if load_series:
        made.append(
            charts.trend_chart(f"{prefix}trend-load", labels, load_series, colours, "Load rate", "rows/s")
        )
    chosen = [t for t in HEADLINE_TYPES if t in query_types][:TREND_CHART_TYPES]
    for qtype in chosen:
        qps_series = series(lambda run, name, q=qtype: hot_qps(run, name, q))
        if qps_series:
            made.append(
                charts.trend_chart(
                    f"{prefix}trend-{qtype}", labels, qps_series, colours, f"{qtype}, hot", "queries/s"
                )
            )
    return {
        "charts": made,
        "runs": [
            {"label": label, "run_id": run.get("run_id", ""), "created_at": run.get("created_at", "")}
            for label, run in zip(labels, runs, strict=True)
        ],
        "skipped": skipped,
        "types": chosen,
        "limit": limit,
    }


def _appendix(
    queries: Mapping[str, Any], targets: Sequence[dict[str, Any]], examples: Mapping[str, Mapping[str, str]]
) -> dict[str, Any]:
    """One rendered example per query type and target. Targets without any text (failed before
    their queries) are named once instead of under every type."""
    without = [
        {"target": t, "reason": t["problem"] or "no rendered.jsonl"}
        for t in targets
        if not examples.get(t["name"])
        and not any(
            cell["kind"] == "unsupported"
            for row in queries["rows"]
            for item, cell in row["cells"]
            if item is t
        )
    ]
    skipped = {item["target"]["name"] for item in without}
    blocks = []
    for row in queries["rows"]:
        texts = []
        for target, cell in row["cells"]:
            if target["name"] in skipped:
                continue
            text = (examples.get(target["name"]) or {}).get(row["type"])
            if text:
                none = ""
            elif cell["kind"] == "unsupported":
                none = f"unsupported: {cell['reason']}"
            elif cell["kind"] == "failed":
                none = cell["reason"]
            else:
                none = "no rendered text recorded"
            texts.append({"target": target, "text": text or "", "none": none})
        blocks.append({"type": row["type"], "describe": row["describe"], "texts": texts})
    return {"queries": blocks, "without": without, "configs": [t for t in targets if t["config"]]}


def _flatten_history(history: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Earlier runs as result dicts: a comparison (``comparison.json``) gives one per scale."""
    out: list[Mapping[str, Any]] = []
    for item in history:
        if "results" in item and "targets" in item and not isinstance(item.get("targets"), dict):
            out.extend(item["results"].values())
        elif "spec" in item:
            out.append(item)
    return out


def scale_context(
    result: Mapping[str, Any],
    validation: Mapping[str, Any] | None = None,
    examples: Mapping[str, Mapping[str, str]] | None = None,
    history: Sequence[Mapping[str, Any]] = (),
    trend_runs: int = 10,
    prefix: str = "",
) -> dict[str, Any]:
    """The report's sections for one result (one scale): ``prefix`` keeps anchors and chart ids
    unique when several scales share a document."""
    spec = result["spec"]
    targets = [_target_view(name, body) for name, body in result["targets"].items()]
    load = _load_section(result, targets, prefix)
    queries = _queries_section(result, targets, prefix)
    footprint = _footprint_section(result, targets, prefix)
    dataset = result.get("dataset") or {}
    return {
        "prefix": prefix,
        "scale": spec["scale"],
        "run": {
            "id": result["run_id"],
            "created_at": result.get("created_at", ""),
            "finished_at": result.get("finished_at", ""),
            "spec": spec,
            "dataset": dataset,
            "oracle_s": result.get("oracle_s"),
            "query_count": result.get("queries"),
            "format": result.get("format", ""),
        },
        "targets": targets,
        "banner": _banner(validation, targets),
        "summary": _summary(prefix, result, targets, load, queries, footprint),
        "environment": _environment(result, targets),
        "cache": _cache_rows(result, targets),
        "load": load,
        "queries": queries,
        "footprint": footprint,
        "resources": _resources_section(result, targets, load["rows"]),
        "validation": _validation_section(validation),
        "answers": _answers_section(result, targets),
        "trends": _trends(prefix, result, _flatten_history(history), trend_runs, queries["types"]),
        "appendix": _appendix(queries, targets, examples or {}),
    }


def _overall_banner(scales: Sequence[Mapping[str, Any]], validations: Sequence[Any]) -> dict[str, Any]:
    """One status for the whole document: failed if any scale failed validation, not validated if
    any scale lacks it, else passed; failed targets of every scale."""
    if len(scales) == 1:
        return scales[0]["banner"]
    named = [(f"scale {fmt.integer(s['scale'])}", s, v) for s, v in zip(scales, validations, strict=True)]
    failed_targets = [f"{label}: {text}" for label, s, _ in named for text in s["banner"]["failed_targets"]]
    missing = [label for label, _, v in named if v is None]
    failing = [(label, v) for label, _, v in named if v is not None and not v.get("success")]
    if failing:
        critical = [f"{label}: {item}" for label, v in failing for item in (v.get("critical_failed") or [])]
        banner = {
            "kind": "fail",
            "title": "Validation FAILED — not replacing the latest report",
            "text": "Critical expectations failed: " + ("; ".join(critical) or "see Validation") + ".",
        }
    elif missing:
        banner = {
            "kind": "none",
            "title": "Not validated",
            "text": f"No validation.json for {_join(missing)}: those figures have not been checked.",
        }
    else:
        warnings = sum(len(v.get("warnings") or []) for _, _, v in named)
        banner = {
            "kind": "pass",
            "title": "Validation passed",
            "text": "Every critical expectation holds at every scale"
            + (f"; {warnings} warning(s), listed under Validation." if warnings else "."),
        }
    banner["failed_targets"] = failed_targets
    return banner


def _across_scales(scales: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Study A/B's shape: figures per scale × database (only when the document has several scales)."""
    if len(scales) < 2:
        return None
    names = list(dict.fromkeys(t["name"] for s in scales for t in s["targets"]))
    views = {t["name"]: t for s in scales for t in s["targets"]}
    targets = [views[name] for name in names]

    def row(scale: Mapping[str, Any], values: Mapping[str, float | None], higher: bool) -> dict[str, Any]:
        ranked = _ranked(values, higher)
        return {
            "scale": scale["scale"],
            "prefix": scale["prefix"],
            "cells": [
                (t, values.get(t["name"]), bool(ranked) and ranked[0][0] == t["name"]) for t in targets
            ],
        }

    load_rows = []
    for scale in scales:
        rates = {r["target"]["name"]: r["rows_per_s"] for r in scale["load"]["rows"]}
        load_rows.append(row(scale, rates, True))
    footprint_rows = []
    for scale in scales:
        sizes = {r["target"]["name"]: r["disk_settle"] or r["disk_load"] for r in scale["footprint"]["rows"]}
        footprint_rows.append(row(scale, sizes, False))
    present = [t for t in HEADLINE_TYPES if any(t in s["queries"]["types"] for s in scales)][:5]
    query_rows = []
    for qtype in present:
        for scale in scales:
            qps = {}
            for query_row in scale["queries"]["rows"]:
                if query_row["type"] == qtype:
                    qps = {
                        t["name"]: c["qps"] for t, c in query_row["cells"] if c["kind"] == "ok" and c["clean"]
                    }
            query_rows.append({"type": qtype, **row(scale, qps, True)})
    labels = [fmt.integer(s["scale"]) for s in scales]
    series = {
        t["label"]: [dict((c[0]["name"], c[1]) for c in r["cells"]).get(t["name"]) for r in load_rows]
        for t in targets
    }
    series = {label: values for label, values in series.items() if any(v is not None for v in values)}
    chart = ""
    if series:
        chart = charts.trend_chart(
            "scales-load",
            labels,
            series,
            {t["label"]: t["colour"] for t in targets},
            "Load rate by scale",
            "rows/s",
            xlabel="scale (hosts)",
        )
    return {
        "targets": targets,
        "load": load_rows,
        "footprint": footprint_rows,
        "queries": query_rows,
        "chart": chart,
    }


def build_report_context(
    runs: Sequence[
        tuple[Mapping[str, Any], Mapping[str, Any] | None, Mapping[str, Mapping[str, str]] | None]
    ],
    history: Sequence[Mapping[str, Any]] = (),
    trend_runs: int = 10,
) -> dict[str, Any]:
    """The whole document: ``runs`` = (result, validation, examples) per scale, smallest first."""
    if not runs:
        raise ValueError("a report needs at least one result")
    multi = len(runs) > 1
    scales = [
        scale_context(
            result, validation, examples, history, trend_runs, f"s{result['spec']['scale']}-" if multi else ""
        )
        for result, validation, examples in runs
    ]
    first = scales[0]
    labels = list(dict.fromkeys(t["label"] for s in scales for t in s["targets"]))
    return {
        "title": {
            "use_case": first["run"]["spec"]["use_case"],
            "scales": [s["scale"] for s in scales],
            "targets": labels,
            "run_id": first["run"]["id"],
            "created_at": min(s["run"]["created_at"] for s in scales),
            "finished_at": max(s["run"]["finished_at"] for s in scales),
        },
        "multi": multi,
        "banner": _overall_banner(scales, [v for _, v, _ in runs]),
        "scales": scales,
        "across": _across_scales(scales),
    }


def build_context(
    result: Mapping[str, Any],
    validation: Mapping[str, Any] | None = None,
    examples: Mapping[str, Mapping[str, str]] | None = None,
    history: Sequence[Mapping[str, Any]] = (),
    trend_runs: int = 10,
) -> dict[str, Any]:
    """Everything the template shows for one result (``result.json``), its validation outcome, the
    example query texts per target (``read_examples``) and earlier results (for trends)."""
    return build_report_context([(result, validation, examples)], history, trend_runs)
