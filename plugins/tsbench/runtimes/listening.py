"""What a local server listens on, read from the sockets its processes hold (not from its config).

Servers listen on loopback only: a bind address a server ignores, or one it was never given, shows
here whatever its configuration says. Listening means a TCP socket in state LISTEN, or a UDP socket
bound with no peer (a datagram from anyone reaches it: a database's UDP line-protocol input, a
syslog-style listener); a UDP socket connected to one peer (a DNS lookup in flight) is a client's.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import NamedTuple

import psutil

from tsbench.runtimes.contract import TargetError


class Listener(NamedTuple):
    """One socket a server listens on."""

    address: str
    port: int
    protocol: str = "tcp"

    def __str__(self) -> str:
        where = f"[{self.address}]:{self.port}" if ":" in self.address else f"{self.address}:{self.port}"
        return where if self.protocol == "tcp" else f"{self.protocol} {where}"


def listening_sockets(processes: Iterable[psutil.Process]) -> list[Listener]:
    """Every TCP socket in state LISTEN and every UDP socket bound with no peer that ``processes``
    hold, sorted (TCP first)."""
    found: set[Listener] = set()
    for process in processes:
        try:
            tcp, udp = process.net_connections(kind="tcp"), process.net_connections(kind="udp")
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
        found.update(Listener(c.laddr.ip, c.laddr.port) for c in tcp if c.status == psutil.CONN_LISTEN)
        found.update(Listener(c.laddr.ip, c.laddr.port, "udp") for c in udp if not c.raddr)
    return sorted(found, key=lambda listener: (listener.protocol != "tcp", listener))


def is_loopback(address: str) -> bool:
    """True for 127.0.0.0/8 and ::1 (an IPv4-mapped loopback too); false for wildcards."""
    parsed = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    return parsed.is_loopback


def require_loopback(instance: str, processes: Iterable[psutil.Process]) -> list[Listener]:
    """The listening sockets of ``processes``; ``TargetError`` naming each one that is not loopback."""
    sockets = listening_sockets(processes)
    exposed = [str(listener) for listener in sockets if not is_loopback(listener.address)]
    if exposed:
        raise TargetError(
            f"{instance}: listens beyond loopback on {', '.join(exposed)} — every address must be "
            "127.0.0.1 (set the server's bind address for each of these ports)"
        )
    return sockets
