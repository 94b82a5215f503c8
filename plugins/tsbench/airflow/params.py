"""The trigger form: Airflow Params generated from a comparison's parameters (``tsbench.parameters``,
derived from RunSpec's schema — names, types, defaults, limits and help are declared there only).

The JSON schema here carries only each field's type (the form's widget), its known values as
``examples`` (pick lists and multi-selects that Airflow does not enforce) and a description that
states the limits. Every value check lives in RunSpec and runs in the first task,
``validate_params``, which names **every** bad field at once — a value constraint in this schema
would make Airflow refuse a trigger one field at a time."""

from __future__ import annotations

from typing import Any

from airflow.sdk import Param

from tsbench.parameters import Parameter, defaults, parameters
from tsbench.runtimes.definition import main_job_targets

# The form's proposal for the one required parameter (RunSpec has no default for it): the targets
# the main job compares (their definitions' ``main_job`` positions).
FORM_TARGETS = main_job_targets()
DEFAULTS: dict[str, Any] = {"targets": FORM_TARGETS, **defaults()}
# The JSON Schema draft of every field's schema. Airflow checks a Param's value with
# ``jsonschema.validate``, which first checks the schema itself against its draft's metaschema, and
# it resolves every Param of every task many times per run (each task's context, and each time the
# DAG is serialized: ~9,600 resolves in a 2-target ``dag.test()``). Against draft 2020-12 (the
# default) one check costs ~1.1 ms here, against draft-07 ~0.3 ms (``bench/param_check.py``); the
# fields use only ``type``, ``items`` and ``examples``, which mean the same in both.
SCHEMA_DRAFT = "http://json-schema.org/draft-07/schema#"


def param_of(parameter: Parameter, default: Any) -> Param:
    """One field of the form: type (and item type), known values, description with the limits."""
    schema: dict[str, Any] = {
        "$schema": SCHEMA_DRAFT,
        "type": [parameter.kind, "null"] if parameter.nullable else parameter.kind,
    }
    if parameter.item_kind:
        schema["items"] = {"type": parameter.item_kind}
    if parameter.choices:
        schema["examples"] = list(parameter.choices)
    return Param(default, title=parameter.title, description=parameter.description(), **schema)


def comparison_params(overrides: dict[str, Any] | None = None) -> dict[str, Param]:
    """Every parameter of a comparison, defaults from RunSpec's schema unless ``overrides`` say."""
    values = {**DEFAULTS, **(overrides or {})}
    return {p.name: param_of(p, values[p.name]) for p in parameters(comparison=True)}


def run_parameters(params: dict[str, Any]) -> dict[str, Any]:
    """Params as given → the input of ``tsbench.run.comparison.parse_comparison``."""
    values = dict(params)
    if not values.get("query_types"):
        values["query_types"] = None
    return values
