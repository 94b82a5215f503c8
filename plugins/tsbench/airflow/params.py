"""The trigger form: Airflow Params mirroring RunSpec.

The JSON schema here carries only each field's type (the form's widget) and its choices as
``examples`` (pick lists and multi-selects that Airflow does not enforce). Every value check lives
in RunSpec and runs in the first task, ``validate_params``, which names **every** bad field at once
— a value constraint in this schema would make Airflow refuse a trigger one field at a time."""

from __future__ import annotations

from typing import Any

from airflow.sdk import Param

from tsbench.spec import INGESTION_ORDERS, RUNTIMES
from tsbench.targets.registry import target_names
from tsbench.workload.query_types import QUERY_TYPES
from tsbench.workload.usecases import USE_CASES

DEFAULTS: dict[str, Any] = {
    "targets": ["questdb", "timescaledb", "postgres", "influxdb"],
    "scales": [100],
    "use_case": "cpu-only",
    "start": "2016-01-01T00:00:00Z",
    "duration": "1d",
    "interval": "10s",
    "seed": 123,
    "ingestion": "interleaved",
    "run_length": 10,
    "workers": 2,
    "batch_size": 10_000,
    "hash_workers": False,
    "query_types": [],
    "queries_per_type": 10,
    "trials": 1,
    "hot_runs": 3,
    "settle_seconds": 0,
    "runtime": "local",
    "aws": {
        "region": "us-east-1",
        "instance_type": "m5.2xlarge",
        "data_volume_type": "gp3",
        "data_volume_gb": 200,
        "orchestrator_cidr": [],
    },
    "docker": {"flavours": {}},
}


def _one_of(default: str, title: str, choices: list[str]) -> Param:
    """A text field whose allowed values are proposed (``examples``) and listed, not enforced."""
    return Param(
        default, type="string", examples=choices, title=title, description="One of: " + ", ".join(choices)
    )


def comparison_params(overrides: dict[str, Any] | None = None) -> dict[str, Param]:
    d = {**DEFAULTS, **(overrides or {})}
    return {
        "targets": Param(
            d["targets"],
            type="array",
            items={"type": "string"},
            examples=list(target_names()),
            title="Targets",
            description="Databases to compare; each runs alone on the machine, one after another.",
        ),
        "scales": Param(
            d["scales"],
            type="array",
            items={"type": "integer"},
            title="Scales",
            description="Numbers of hosts (TSBS scale); one branch per scale, e.g. [100, 1000, 10000].",
        ),
        "use_case": _one_of(d["use_case"], "Use case", list(USE_CASES)),
        "start": Param(d["start"], type="string", title="Start", description="First timestamp, ISO-8601."),
        "duration": Param(d["duration"], type="string", title="Duration", description="e.g. 1d, 12h, 90min"),
        "interval": Param(d["interval"], type="string", title="Interval", description="e.g. 10s"),
        "seed": Param(d["seed"], type="integer", title="Data seed"),
        "ingestion": _one_of(d["ingestion"], "Ingestion order", list(INGESTION_ORDERS)),
        "run_length": Param(d["run_length"], type="integer", title="Rows per host run"),
        "workers": Param(d["workers"], type="integer", title="Workers"),
        "batch_size": Param(d["batch_size"], type="integer", title="Batch size"),
        "hash_workers": Param(d["hash_workers"], type="boolean", title="Hash workers"),
        "query_types": Param(
            d["query_types"],
            type="array",
            items={"type": "string"},
            examples=list(QUERY_TYPES),
            title="Query types",
            description="Empty = every type that fits the data.",
        ),
        "queries_per_type": Param(d["queries_per_type"], type="integer", title="Queries per type"),
        "trials": Param(d["trials"], type="integer", title="Load trials"),
        "hot_runs": Param(d["hot_runs"], type="integer", title="Hot passes"),
        "settle_seconds": Param(d["settle_seconds"], type="number", title="Settle seconds"),
        "runtime": Param(
            d["runtime"],
            type="string",
            examples=list(RUNTIMES),
            title="Runtime",
            description="local: processes on this machine; docker: official images on a Docker engine; "
            "aws: one Terraform-provisioned host per target, destroyed at the end.",
        ),
        "aws": Param(
            d["aws"],
            type="object",
            title="AWS options (runtime aws)",
            description="region, instance_type, ami_id, root_volume_gb, data_volume_type/_gb/_iops/"
            "_throughput, orchestrator_cidr (required), client_host, client_instance_type, "
            "ssh_public_key, ready_timeout_s, endpoint_url, backend_config. Credentials come from the "
            "Airflow connection tsbench_aws or the worker's environment.",
        ),
        "docker": Param(
            d["docker"],
            type="object",
            title="Docker options (runtime docker)",
            description='flavours per target, e.g. {"flavours": {"influxdb": "2.7"}}; '
            "base_url of the engine.",
        ),
    }


def run_parameters(params: dict[str, Any]) -> dict[str, Any]:
    """Params as given → the input of ``tsbench.comparison.parse_comparison``."""
    values = dict(params)
    if not values.get("query_types"):
        values["query_types"] = None
    return values
