"""Running suites with great_expectations 1.x in an ephemeral (in-memory) data context.

Every ``Frame`` of a suite becomes one pandas data asset with a whole-dataframe batch definition,
one ``ExpectationSuite`` and one ``ValidationDefinition``; its checks become expectation objects
(``gx.expectations.<Class>``) with severity ``critical`` or ``warning``. Nothing is written by GE
itself: the caller stores GE's result JSON.

great_expectations is imported lazily (it takes seconds), so importing ``tsbench.validation`` stays
cheap (DAG files and the CLI import it).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from tsbench.validation.checks import Check, Frame, SuiteSpec, entry

RESULT_FORMAT = {"result_format": "SUMMARY", "partial_unexpected_count": 10}
MAX_EXAMPLES = 5


class GxRunner:
    """One ephemeral GE context for one validation (suite and asset names are unique within it)."""

    def __init__(self) -> None:
        import great_expectations as gx
        from great_expectations.data_context.types.base import ProgressBarsConfig

        _quiet_ge_logging()
        self.gx = gx
        self.context = gx.get_context(mode="ephemeral")
        self.context.variables.progress_bars = ProgressBarsConfig(globally=False)
        self.source = self.context.data_sources.add_pandas("tsbench")
        self._used: dict[str, int] = {}

    def _expectation(self, check: Check, order: int, severity: str) -> Any:
        from great_expectations.expectations.row_conditions import Column

        cls = getattr(self.gx.expectations, check.expectation)
        kwargs = dict(check.kwargs)
        if check.where is not None:
            column, value = check.where
            kwargs["row_condition"] = Column(column) == value
        return cls(**kwargs, severity=severity, meta={"tsbench_order": order, "tsbench_name": check.name})

    def run_frame(self, suite: SuiteSpec, frame: Frame) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Validate one frame; returns (one part per check, in check order) and GE's result JSON."""
        name = f"{suite.name}.{frame.name}"
        self._used[name] = self._used.get(name, 0) + 1
        if self._used[name] > 1:  # the same suite run again in this context
            name = f"{name}#{self._used[name]}"
        severity = "critical" if suite.critical else "warning"
        asset = self.source.add_dataframe_asset(name)
        batch = asset.add_batch_definition_whole_dataframe("whole")
        expectations = [self._expectation(c, i, severity) for i, c in enumerate(frame.checks)]
        ge_suite = self.context.suites.add(self.gx.ExpectationSuite(name=name, expectations=expectations))
        definition = self.context.validation_definitions.add(
            self.gx.ValidationDefinition(name=name, data=batch, suite=ge_suite)
        )
        outcome = definition.run(batch_parameters={"dataframe": frame.frame}, result_format=RESULT_FORMAT)
        ge_json = outcome.to_json_dict()
        parts: list[dict[str, Any] | None] = [None] * len(frame.checks)
        for item in ge_json["results"]:
            order = item["expectation_config"]["meta"]["tsbench_order"]
            parts[order] = _part(frame.checks[order], item)
        missing = [frame.checks[i].name for i, p in enumerate(parts) if p is None]
        if missing:  # GE dropped an expectation: never let that pass silently
            raise RuntimeError(f"great_expectations returned no result for: {', '.join(missing)}")
        return [p for p in parts if p is not None], {"frame": frame.name, "rows": len(frame.frame), **ge_json}

    def run(self, suite: SuiteSpec) -> tuple[dict[str, Any], dict[str, Any]]:
        """The suite's entry for ``validation.json`` and its GE result document."""
        started = time.perf_counter()
        results: list[dict[str, Any]] = []
        validations = []
        for frame in suite.frames:
            parts, ge_json = self.run_frame(suite, frame)
            results.extend(_merge_groups(frame.checks, parts))
            validations.append(ge_json)
        results.extend(suite.static)
        checked = [r for r in results if not r.get("skipped")]
        success = all(r["success"] for r in checked)
        if success and results and not checked:
            status = "skipped"
        elif success:
            status = "passed"
        else:
            status = "failed" if suite.critical else "warning"
        body = {
            "name": suite.name,
            "critical": suite.critical,
            "success": success,
            "status": status,
            "seconds": round(time.perf_counter() - started, 3),
            **({"info": suite.info} if suite.info else {}),
            "results": results,
        }
        ge_doc = {
            "suite": suite.name,
            "critical": suite.critical,
            "great_expectations_version": self.gx.__version__,
            "validations": validations,
        }
        return body, ge_doc


def _quiet_ge_logging() -> None:
    """GE logs set-up chatter at INFO, and some of its modules pin their level to INFO. Keep task
    logs readable: GE's loggers inherit from ``great_expectations``, which defaults to WARNING
    unless the application configured it."""
    top = logging.getLogger("great_expectations")
    if top.level == logging.NOTSET:
        top.setLevel(logging.WARNING)
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("great_expectations.") and logging.getLogger(name).level == logging.INFO:
            logging.getLogger(name).setLevel(logging.NOTSET)


def ge_observed(result: dict[str, Any]) -> Any:
    """A short ``observed`` from GE's result dict: the observed value, or counts and examples."""
    if "observed_value" in result:
        return result["observed_value"]
    if "unexpected_count" in result:
        return {
            "checked": result.get("element_count"),
            "unexpected": result.get("unexpected_count"),
            "examples": (result.get("partial_unexpected_list") or [])[:MAX_EXAMPLES],
        }
    return result or None


def _part(check: Check, item: dict[str, Any]) -> dict[str, Any]:
    success = bool(item.get("success"))
    details = check.details
    error = (item.get("exception_info") or {}).get("exception_message")
    if error:
        success = False
        details = f"{details} great_expectations raised: {error}".strip()
    observed = check.observed if check.observed is not None else ge_observed(item.get("result") or {})
    return {
        **entry(check.name, success, observed, details),
        "ge_expectation": item["expectation_config"]["type"],
    }


def _merge_groups(checks: list[Check], parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Checks sharing a ``group`` become one entry (success = all of them), in first-seen order."""
    merged: list[dict[str, Any]] = []
    groups: dict[str, list[tuple[Check, dict[str, Any]]]] = {}
    for check, part in zip(checks, parts, strict=True):
        if check.group is None:
            merged.append(part)
            continue
        if check.group not in groups:
            groups[check.group] = []
            merged.append({"group": check.group})
        groups[check.group].append((check, part))
    out = []
    for item in merged:
        if "group" not in item:
            out.append(item)
            continue
        members = groups[item["group"]]
        failing = [check.part or check.name for check, part in members if not part["success"]]
        details = members[0][0].details
        if failing:
            details = f"{details} Failing: {', '.join(failing)}.".strip()
        observed = {check.part or check.name: part["observed"] for check, part in members}
        body = entry(item["group"], not failing, observed, details)
        body["ge_expectation"] = sorted({part["ge_expectation"] for _, part in members})
        out.append(body)
    return out
