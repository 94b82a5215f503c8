"""Credentials from Airflow Connections (never from the repository, never logged)."""

from __future__ import annotations

import logging
from typing import Any

from tsbench.results.publish import S3Settings

log = logging.getLogger("tsbench.airflow")
S3_CONNECTION = "tsbench_s3"


def optional_connection(conn_id: str) -> Any | None:
    """Airflow's connection ``conn_id`` (``airflow.sdk.Connection``), None when it does not exist
    or no connection can be read here."""
    from airflow.sdk import Connection
    from airflow.sdk.exceptions import AirflowNotFoundException, AirflowRuntimeError

    try:
        return Connection.get(conn_id)
    except (AirflowNotFoundException, AirflowRuntimeError, LookupError):
        return None


def s3_from_connection(conn_id: str = S3_CONNECTION) -> S3Settings | None:
    """S3 publication settings from connection ``conn_id`` (type aws: login = access key id,
    password = secret; extra: ``bucket``, ``prefix``, ``endpoint_url``, ``region_name``).
    None when the connection does not exist — then the environment decides (see tsbench.run.pipeline)."""
    conn = optional_connection(conn_id)
    if conn is None:
        log.info("no Airflow connection %s; S3 settings come from the environment", conn_id)
        return None
    extra = conn.extra_dejson
    if not extra.get("bucket"):
        log.warning("connection %s has no 'bucket' in its extra; S3 publication skipped", conn_id)
        return None
    return S3Settings(
        bucket=extra["bucket"],
        prefix=extra.get("prefix", ""),
        endpoint_url=extra.get("endpoint_url"),
        region=extra.get("region_name"),
        aws_access_key_id=conn.login or None,
        aws_secret_access_key=conn.password or None,
        create_bucket=bool(extra.get("create_bucket", False)),
    )


AWS_CONNECTION = "tsbench_aws"


def runtime_environment(conn_id: str = AWS_CONNECTION) -> dict[str, str]:
    """Credentials for the runtimes' tools from connection ``conn_id`` (type aws: login = access key
    id, password = secret; extra: ``region_name``, ``aws_session_token``) as the environment
    variables Terraform's AWS provider reads. Empty when the connection does not exist: then the
    worker's own environment or instance profile applies."""
    conn = optional_connection(conn_id)
    if conn is None:
        return {}
    extra = conn.extra_dejson
    pairs = {
        "AWS_ACCESS_KEY_ID": conn.login,
        "AWS_SECRET_ACCESS_KEY": conn.password,
        "AWS_SESSION_TOKEN": extra.get("aws_session_token"),
        "AWS_REGION": extra.get("region_name"),
    }
    return {key: value for key, value in pairs.items() if value}
