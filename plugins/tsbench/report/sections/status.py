"""Each target's view (name, title, colour, status, provisioning facts) and the validation banner."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tsbench.report.sections.common import join
from tsbench.results.model import Provision, TargetResult, Validation
from tsbench.targets.registry import target_colour, target_title

if TYPE_CHECKING:
    from tsbench.report.model import ScaleView

FAILED_BANNER_TITLE = "Validation FAILED — not replacing the latest report"


def _endpoint_text(endpoint: Mapping[str, Any]) -> str:
    if not endpoint:
        return ""
    ports = endpoint.get("ports") or {}
    listed = ", ".join(f"{role} {port}" for role, port in ports.items())
    return endpoint.get("host", "") + (f" ({listed})" if ports else "")


def _problem(body: TargetResult) -> str:
    if body.status == "failed":
        return f"failed in {body.failed_phase if body.has('failed_phase') else '?'}"
    if body.status != "ok":
        return (
            f"incomplete: {body.stopped_before if body.has('stopped_before') else 'a phase'} never ran (its "
            "task did not start: an earlier task failed or the run was stopped; see the Airflow task logs)"
        )
    return ""


@dataclass(frozen=True)
class TargetView:
    """A target as every section shows it: title and colour from its folder, its status (``problem``
    says why it is not ok) and the server facts recorded at provisioning."""

    name: str
    label: str
    colour: str
    status: str
    ok: bool
    failed_phase: str
    error: str
    problem: str
    version: str
    server_binary: str
    runtime: str
    placement: list[tuple[str, str]]
    endpoint: str
    settings: dict[str, Any]
    config: str
    durable: bool | None
    compression: str
    rollups: str
    schema_note: str
    row_model_note: str
    unsupported: dict[str, str]
    provisioned: bool


def target_view(name: str, body: TargetResult) -> TargetView:
    """``name``'s view from its ``TargetResult``."""
    provision = body.provision or Provision()
    caps = provision.capabilities
    return TargetView(
        name=name,
        label=target_title(name),
        colour=target_colour(name),
        status=body.status,
        ok=body.ok,
        failed_phase=body.failed_phase,
        error=body.error,
        problem=_problem(body),
        version=provision.version,
        server_binary=provision.server_binary,
        runtime=provision.runtime,
        placement=placement_rows(provision.placement),
        endpoint=_endpoint_text(provision.endpoint),
        settings=provision.settings,
        config=provision.config,
        durable=caps.durable,
        compression=caps.compression,
        rollups=caps.rollups,
        schema_note=caps.schema_note,
        row_model_note=caps.row_model_note,
        unsupported=dict(caps.unsupported),
        provisioned=body.provision is not None and bool(body.provision.to_json()),
    )


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


@dataclass(frozen=True)
class Banner:
    """The status at the top: ``kind`` pass | fail | none (not validated), its title and sentence,
    and a line per failed target."""

    kind: str
    title: str
    text: str
    failed_targets: list[str]


NOT_VALIDATED = "Not validated"
PASSED = "Validation passed"


def banner(validation: Validation | None, targets: Sequence[TargetView]) -> Banner:
    """The status at the top of one scale: validation outcome and the targets that failed."""
    failed = [f"{t.label} ({t.problem}" + (f": {t.error})" if t.error else ")") for t in targets if not t.ok]
    if validation is None:
        text = (
            "No validation.json in the run folder: these figures have not been checked by the "
            "validation suites."
        )
        return Banner("none", NOT_VALIDATED, text, failed)
    if validation.success:
        warnings = validation.warnings
        text = "Every critical expectation holds" + (
            f"; {len(warnings)} warning(s), listed under Validation." if warnings else "."
        )
        return Banner("pass", PASSED, text, failed)
    critical = ", ".join(map(str, validation.critical_failed)) or "see Validation"
    return Banner("fail", FAILED_BANNER_TITLE, f"Critical expectations failed: {critical}.", failed)


def overall_banner(scales: Sequence[ScaleView], validations: Sequence[Validation | None]) -> Banner:
    """One status for the whole document: failed if any scale failed validation, not validated if
    any scale lacks it, else passed; failed targets of every scale."""
    if len(scales) == 1:
        return scales[0].banner
    named = [(s.heading[:1].lower() + s.heading[1:], s, v) for s, v in zip(scales, validations, strict=True)]
    failed = [f"{label}: {text}" for label, s, _ in named for text in s.banner.failed_targets]
    missing = [label for label, _, v in named if v is None]
    failing = [(label, v) for label, _, v in named if v is not None and not v.success]
    if failing:
        critical = "; ".join(f"{label}: {item}" for label, v in failing for item in v.critical_failed)
        text = "Critical expectations failed: " + (critical or "see Validation") + "."
        return Banner("fail", FAILED_BANNER_TITLE, text, failed)
    if missing:
        text = f"No validation.json for {join(missing)}: those figures have not been checked."
        return Banner("none", NOT_VALIDATED, text, failed)
    warnings = sum(len(v.warnings) for _, _, v in named if v is not None)
    text = "Every critical expectation holds at every scale" + (
        f"; {warnings} warning(s), listed under Validation." if warnings else "."
    )
    return Banner("pass", PASSED, text, failed)
