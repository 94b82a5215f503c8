"""Credentials from Airflow Connections (never from the repository, never logged)."""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("tsbench.airflow")
S3_CONNECTION = "tsbench_s3"


def s3_from_connection(conn_id: str = S3_CONNECTION) -> dict[str, Any] | None:
    """S3 publication settings from connection ``conn_id`` (type aws: login = access key id,
    password = secret; extra: ``bucket``, ``prefix``, ``endpoint_url``, ``region_name``).
    None when the connection does not exist — then the environment decides (see tsbench.pipeline)."""
    from airflow.sdk import Connection
    from airflow.sdk.exceptions import AirflowNotFoundException, AirflowRuntimeError

    try:
        conn = Connection.get(conn_id)
    except (AirflowNotFoundException, AirflowRuntimeError, LookupError) as error:
        log.info(
            "no Airflow connection %s (%s); S3 settings come from the environment",
            conn_id,
            type(error).__name__,
        )
        return None
    extra = conn.extra_dejson
    if not extra.get("bucket"):
        log.warning("connection %s has no 'bucket' in its extra; S3 publication skipped", conn_id)
        return None
    return {
        "bucket": extra["bucket"],
        "prefix": extra.get("prefix", ""),
        "endpoint_url": extra.get("endpoint_url"),
        "region": extra.get("region_name"),
        "aws_access_key_id": conn.login or None,
        "aws_secret_access_key": conn.password or None,
        "create_bucket": bool(extra.get("create_bucket", False)),
    }
