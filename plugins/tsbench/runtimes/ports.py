"""Loopback TCP ports: free ones to hand a server, and whether one accepts connections now."""

from __future__ import annotations

import socket
from contextlib import ExitStack


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """``count`` distinct free loopback ports: every probe stays bound until all are picked (two
    probes bound and closed one after another may be handed the same port)."""
    with ExitStack() as stack:
        probes = [stack.enter_context(socket.socket()) for _ in range(count)]
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in probes]


def port_open(port: int, host: str = "127.0.0.1", timeout_s: float = 0.2) -> bool:
    with socket.socket() as probe:
        probe.settimeout(timeout_s)
        return probe.connect_ex((host, port)) == 0
