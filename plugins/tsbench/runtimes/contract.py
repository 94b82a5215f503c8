"""What a runtime and a database folder agree on: where a server listens (``Endpoint``), how
either says a step failed (``TargetError``, ``NotReadyError``) and what a runtime asks of a target
class (``ServedTarget``). Runtimes import this module and never ``tsbench.targets``; the target
contract (``targets/base.py``) re-exports these names, so a database folder imports them from there.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Protocol


class TargetError(RuntimeError):
    """A target failed; the message says what and where (never contains credentials).
    ``retryable`` False: trying the same step again would only repeat the failure and its cost (an
    orchestrator fails the task without its retries)."""

    retryable = True


class NotReadyError(TargetError):
    """A provisioned server never became ready within the run's own patience (its ready timeout):
    not retried — a second wait as long costs as much and rarely ends otherwise."""

    retryable = False


@dataclass(frozen=True)
class Endpoint:
    """Where a running server listens. Serialisable (it travels between pipeline tasks).

    ``ports`` by role (e.g. ``{"http": 19000, "pg": 18812}``); ``secrets`` (passwords, tokens) are
    excluded from ``to_json`` and ``repr`` and come from the environment or Airflow Connections.
    """

    host: str
    ports: dict[str, int]
    user: str | None = None
    database: str | None = None
    data_dirs: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def port(self, role: str) -> int:
        return self.ports[role]

    def to_json(self) -> dict[str, Any]:
        body = asdict(self)
        body.pop("secrets")
        body["data_dirs"] = list(self.data_dirs)
        return body

    @classmethod
    def from_json(cls, body: Mapping[str, Any], secrets: Mapping[str, str] | None = None) -> Endpoint:
        return cls(
            host=body["host"],
            ports=dict(body["ports"]),
            user=body.get("user"),
            database=body.get("database"),
            data_dirs=tuple(body.get("data_dirs", ())),
            extra=dict(body.get("extra", {})),
            secrets=dict(secrets or {}),
        )


class ServedTarget(Protocol):
    """A target (``targets.base.Target`` is one) as a runtime sees it: its folder's name, the
    local-process recipe of its server, and a connection to a running server that tells its version
    (the runtimes' ready check). Runtimes take the class, ``type[ServedTarget]``."""

    name: ClassVar[str]

    @staticmethod
    def server_recipe() -> type: ...

    @classmethod
    def answering(cls, endpoint: Endpoint) -> Answering: ...


class Answering(Protocol):
    """A connection to a running server, as far as a ready check uses it."""

    def version(self) -> str: ...

    def close(self) -> None: ...


def class_path(cls: type) -> str:
    """``module:qualname`` of ``cls``, recorded in an instance's state so that a later process
    (``attach``) imports only the module that declares it (``class_at``)."""
    return f"{cls.__module__}:{cls.__qualname__}"


def class_at(path: str) -> type:
    """The class a ``class_path`` names; TargetError when it no longer exists."""
    module, _, name = path.partition(":")
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as error:
        raise TargetError(f"no class {path!r}: {error}") from None
    if not isinstance(found, type):
        raise TargetError(f"{path!r} is not a class")
    return found
