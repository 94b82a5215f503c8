"""HTTP Basic credentials as a request header: for the targets' HTTP clients and for the local
recipes' ready checks (a recipe module stays free of the targets' client code)."""

from __future__ import annotations

import base64


def basic_auth(user: str | None, password: str | None) -> dict[str, str]:
    """The ``Authorization`` header of HTTP Basic ``user``:``password`` (none without a password)."""
    if not password:
        return {}
    return {"Authorization": "Basic " + base64.b64encode(f"{user or ''}:{password}".encode()).decode()}
