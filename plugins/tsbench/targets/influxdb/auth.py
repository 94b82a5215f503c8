"""Who tsbench is to InfluxDB: the HTTP ``Authorization`` header from an endpoint's secrets.

InfluxDB 2 takes a token (``Token …``, ``v2.py``). InfluxDB 1.x with ``[http] auth-enabled`` takes a
user and password, here as HTTP Basic (1.x reads it as it reads ``u``/``p``, without putting them in
the URL, where they would reach logs): the user ``USER``, an admin, which the local server's recipe
creates on its first start (``server.py``). An endpoint with neither (the 1.8 container) sends none.
"""

from __future__ import annotations

from tsbench.runtimes.basic_auth import basic_auth
from tsbench.targets.base import Endpoint

USER = "tsbench"


def basic(password: str) -> dict[str, str]:
    """The header authenticating ``USER`` with ``password``."""
    return basic_auth(USER, password)


def auth_headers(endpoint: Endpoint) -> dict[str, str]:
    """The header for the endpoint's token (InfluxDB 2) or password (1.x), else none."""
    token, password = endpoint.secrets.get("token"), endpoint.secrets.get("password")
    if token:
        return {"Authorization": f"Token {token}"}
    return basic(password) if password else {}
