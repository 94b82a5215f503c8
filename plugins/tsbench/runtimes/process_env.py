"""The environment a local database server starts with: the orchestrator's, without its secrets.

A task runs with Airflow's settings (its JWT secret, ``*_CMD`` commands that print connection
strings), cloud credentials and the generated database passwords in its environment; a server
process inherits none of them (a recipe writes what its server needs into its own config files).
"""

from __future__ import annotations

import os
import re

_PRIVATE = re.compile(r"^(AIRFLOW|AWS_)|SECRET|PASSWORD|TOKEN|CREDENTIAL|_CMD$", re.IGNORECASE)


def server_environment() -> dict[str, str]:
    """``os.environ`` minus every variable whose name marks it as Airflow's, AWS's or a secret."""
    return {key: value for key, value in os.environ.items() if not _PRIVATE.search(key)}
