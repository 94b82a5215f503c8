"""Each target as every section shows it (``TargetView``): name, title, colour, status and the
server facts recorded at provisioning. It imports no other section, so every section may import it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from tsbench.results.model import Provision, TargetResult
from tsbench.targets.registry import target_colour, target_title
from tsbench.targets.releases import split_instance


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
    keeps: str
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
        keeps=caps.keeps,
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


def target_views(targets: Mapping[str, TargetResult]) -> list[TargetView]:
    """Every target's view, in order. Where the run holds other releases of a target (a run's
    ``versions``: ``questdb@9.2.3`` titled "QuestDB 9.2.3"), the pinned one is labelled with the
    version it ran too ("QuestDB 9.3.4")."""
    views = [target_view(name, body) for name, body in targets.items()]
    released = {split_instance(view.name)[0] for view in views if split_instance(view.name)[1]}
    named = [view.name in released and view.version for view in views]
    return [replace(v, label=f"{v.label} {v.version}") if n else v for v, n in zip(views, named, strict=True)]
