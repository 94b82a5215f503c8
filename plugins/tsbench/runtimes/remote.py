"""A server on another host, reached over the network, with the tsbench node agent beside it.

The database is used over its own protocol exactly as locally; what needs the host itself — process
CPU and memory, bytes on disk, a cold restart with the page cache dropped, host facts — goes through
the node agent (``infra/modules/benchmark_host/files/node_agent.py``), authenticated with a per-run
token.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

from tsbench.runtimes.contract import Endpoint, NotReadyError, TargetError
from tsbench.runtimes.ports import port_open


class AgentClient:
    """JSON calls to a node agent at ``url`` (``http://host:port``)."""

    def __init__(self, url: str, token: str, timeout_s: float = 30.0):
        self.url = url.rstrip("/")
        self._token = token
        self.timeout_s = timeout_s

    def call(self, method: str, path: str, timeout_s: float | None = None) -> dict[str, Any]:
        request = urllib.request.Request(
            self.url + path, method=method, headers={"Authorization": f"Bearer {self._token}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout_s or self.timeout_s) as answer:
                return json.loads(answer.read())
        except urllib.error.HTTPError as error:
            detail = error.read().decode(errors="replace")[:300]
            raise TargetError(f"node agent {self.url}{path}: HTTP {error.code} {detail}") from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise TargetError(f"node agent {self.url}{path} unreachable: {reason}") from None


class AgentUsageProbe:
    """CPU % of the database service between two calls (from its CPU seconds) and its RSS."""

    def __init__(self, agent: AgentClient):
        self.agent = agent
        self._last: tuple[float, float] | None = None

    def measure(self) -> tuple[float, int]:
        body = self.agent.call("GET", "/usage", timeout_s=5)
        now = (body["clock_s"], body["cpu_seconds"])
        last, self._last = self._last, now
        if last is None or now[0] <= last[0]:
            return 0.0, int(body["rss_bytes"])
        return 100.0 * (now[1] - last[1]) / (now[0] - last[0]), int(body["rss_bytes"])


def ports_open(host: str, ports: list[int], timeout_s: float = 2.0) -> bool:
    """Every port accepts a connection (a wider timeout than the local probe: a real network)."""
    return all(port_open(port, host, timeout_s) for port in ports)


class RemoteServer:
    """One database on a remote host. ``placement`` holds the provisioning facts (instance type,
    addresses, volumes …) shown in the report; it must not contain secrets."""

    def __init__(
        self,
        instance: str,
        endpoint: Endpoint,
        agent: AgentClient,
        placement: Mapping[str, Any],
        ready_timeout_s: float = 600.0,
    ):
        self.instance = instance
        self._endpoint = endpoint
        self.agent = agent
        self.placement = dict(placement)
        self.ready_timeout_s = ready_timeout_s

    def endpoint(self) -> Endpoint:
        return self._endpoint

    def usage_probe(self) -> AgentUsageProbe:
        return AgentUsageProbe(self.agent)

    def wait_ready(self, timeout_s: float | None = None) -> float:
        """Until the agent answers, the service runs and every database port accepts connections;
        returns the seconds waited. TargetError with the last obstacle after ``timeout_s``."""
        started = time.monotonic()
        deadline = started + (timeout_s if timeout_s is not None else self.ready_timeout_s)
        obstacle = "not tried"
        while True:
            try:
                health = self.agent.call("GET", "/health", timeout_s=5)
                if not health.get("active"):
                    obstacle = "database service not running yet"
                elif not ports_open(self._endpoint.host, list(self._endpoint.ports.values())):
                    obstacle = f"ports {sorted(self._endpoint.ports.values())} not accepting connections yet"
                else:
                    return time.monotonic() - started
            except TargetError as error:
                obstacle = str(error)
            if time.monotonic() >= deadline:
                waited = deadline - started
                raise NotReadyError(f"{self.instance}: not ready after {waited:.0f} s: {obstacle}")
            time.sleep(min(5.0, max(0.2, deadline - time.monotonic())))

    def restart_cold(self) -> dict[str, Any]:
        body = self.agent.call("POST", "/restart-cold", timeout_s=max(600.0, self.ready_timeout_s))
        body["ready_s"] = round(self.wait_ready(), 3)
        return body

    def disk_bytes(self) -> int:
        return int(self.agent.call("GET", "/disk")["bytes"])

    def facts(self) -> dict[str, Any]:
        host = self.agent.call("GET", "/facts")
        return {
            "server_binary": host.pop("server_version", ""),
            "config": host.pop("server_config", ""),
            **self.placement,
            "host": host,
        }
