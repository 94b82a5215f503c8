"""What a local server listens on, read from the sockets its processes hold (not from its config).

Servers listen on loopback only: a bind address a server ignores, or one it was never given, shows
here whatever its configuration says.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

import psutil

from tsbench.runtimes.contract import TargetError


def listening_sockets(processes: Iterable[psutil.Process]) -> list[tuple[str, int]]:
    """``(address, port)`` of every TCP socket in state LISTEN held by ``processes``, sorted."""
    found: set[tuple[str, int]] = set()
    for process in processes:
        try:
            connections = process.net_connections(kind="tcp")
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
        found.update(
            (conn.laddr.ip, conn.laddr.port) for conn in connections if conn.status == psutil.CONN_LISTEN
        )
    return sorted(found)


def is_loopback(address: str) -> bool:
    """True for 127.0.0.0/8 and ::1 (an IPv4-mapped loopback too); false for wildcards."""
    parsed = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    return parsed.is_loopback


def require_loopback(instance: str, processes: Iterable[psutil.Process]) -> list[tuple[str, int]]:
    """The listening sockets of ``processes``; ``TargetError`` naming each one that is not loopback."""
    sockets = listening_sockets(processes)
    exposed = [f"{address}:{port}" for address, port in sockets if not is_loopback(address)]
    if exposed:
        raise TargetError(
            f"{instance}: listens beyond loopback on {', '.join(exposed)} — every address must be "
            "127.0.0.1 (set the server's bind address for each of these ports)"
        )
    return sockets
