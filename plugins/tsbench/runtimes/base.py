"""The runtime contract: where a target's server runs (local process, container, cloud VM).

The pipeline's phases only see these two protocols, so the same phases run a target wherever its
server lives. Every method is safe to call from a fresh process: ``attach`` finds an instance by
name from state the runtime persisted at ``provision``.
"""

from __future__ import annotations

from typing import Any, Protocol

from tsbench.runtimes.contract import Endpoint, ServedTarget


class UsageProbe(Protocol):
    """Samples the server's resource use. ``measure`` returns (CPU % since the previous call —
    100 = one core busy — and resident memory in bytes), summed over the server's processes."""

    def measure(self) -> tuple[float, int]: ...


class Server(Protocol):
    """One provisioned server instance."""

    instance: str

    def endpoint(self) -> Endpoint:
        """How clients reach the server (host may be remote)."""

    def usage_probe(self) -> UsageProbe:
        """A fresh probe for one measured phase."""

    def restart_cold(self) -> dict[str, Any]:
        """Stop, drop OS caches where possible, start, wait until ready. Returns what happened,
        including ``os_cache_dropped`` (bool) and a note saying how or why not."""

    def disk_bytes(self) -> int:
        """Bytes allocated on disk by the server's data and WAL directories."""

    def facts(self) -> dict[str, Any]:
        """What the report's environment section shows about where this server ran: at least
        ``server_binary`` (version string) and ``config`` (text); runtimes add theirs (image,
        instance type, addresses…). No secrets."""


class Runtime(Protocol):
    """Creates, finds and removes server instances. ``teardown`` never raises for a missing
    instance and may be called at any point, even twice."""

    name: str

    def provision(self, target_type: type[ServedTarget], instance: str) -> Server: ...

    def attach(self, instance: str) -> Server: ...

    def teardown(self, instance: str) -> None: ...
