"""A local server's environment carries none of the orchestrator's secrets."""

from __future__ import annotations

import pytest

from tsbench.runtimes.process_env import server_environment


def test_secrets_airflow_and_aws_settings_stay_with_the_task(monkeypatch: pytest.MonkeyPatch) -> None:
    kept = {"PATH": "/usr/bin", "LANG": "C.UTF-8", "TSBENCH_OPT": "/opt/x", "JAVA_HOME": "/jdk"}
    dropped = {
        "AIRFLOW__API_AUTH__JWT_SECRET": "s",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_CMD": "cat x",
        "AIRFLOW_CONN_TSBENCH_S3": "{}",
        "AWS_SECRET_ACCESS_KEY": "k",
        "AWS_ENDPOINT_URL_S3": "http://x",
        "TSBENCH_POSTGRES_PASSWORD": "p",
        "TSBENCH_INFLUXDB_TOKEN": "t",
        "MY_CREDENTIALS": "c",
    }
    for key, value in {**kept, **dropped}.items():
        monkeypatch.setenv(key, value)
    environment = server_environment()
    assert kept.items() <= environment.items()
    assert not set(dropped) & set(environment)
