"""Per-instance secrets every worker of a deployment derives alike, so none has to be stored.

A deployment (the Celery form, a team's workers) shares one key, ``$TSBENCH_SECRET_KEY``; an
instance's secret ``name`` is HMAC-SHA256(key, ``<instance>/<name>``). A worker that provisions a
server and a worker that later attaches to it or tears it down compute the same value. Without the
key, values are random and the runtime keeps them in its own state root (one worker only).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a leaf module: the run options (runtimes.options) read the key too
    from tsbench.runtimes.container_spec import ContainerSpec

SECRET_KEY_ENV = "TSBENCH_SECRET_KEY"


def deployment_key() -> str | None:
    """The deployment's key, None when this worker has none."""
    return os.environ.get(SECRET_KEY_ENV) or None


def derived_secret(key: str, instance: str, name: str) -> str:
    """The secret ``name`` of ``instance`` under deployment key ``key`` (43 URL-safe characters)."""
    digest = hmac.new(key.encode(), f"{instance}/{name}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def instance_secret_values(
    spec: ContainerSpec, instance: str, source: Callable[[str], str | None]
) -> tuple[dict[str, str], set[str]]:
    """Values of the spec's secret variables for ``instance``: from ``source`` (the orchestrator's
    environment) where it has them, else derived from the deployment key, else random. Returns
    ``(values, names not from source)``; only random ones need keeping."""
    from tsbench.runtimes.container_spec import secret_values

    key = deployment_key()
    if key is None:
        return secret_values(spec, source)
    return secret_values(spec, source, lambda name: derived_secret(key, instance, name))
