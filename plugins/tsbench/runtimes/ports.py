"""Loopback TCP ports: free ones to hand a server, and whether one accepts connections now."""

from __future__ import annotations

import logging
import re
import socket
from collections.abc import Callable
from contextlib import ExitStack
from typing import TypeVar

log = logging.getLogger("tsbench.runtime")
Started = TypeVar("Started")

# A server's start that failed because a port picked for it was taken before it bound it (by
# another server, or as the local end of some outgoing connection: both come from the same
# ephemeral range), in the words servers use for it (C libraries, the JVM, Go).
_PORT_TAKEN = re.compile(r"(?i)address already in use|could not bind|EADDRINUSE")
START_ATTEMPTS = 3  # a fresh server's starts, each on newly picked ports, before its error stands


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


def port_taken_meanwhile(error: BaseException) -> bool:
    """Whether a server's failed start (its error, with the server's log tail) says a port picked
    for it was already taken when it bound it: then another start on new ports may succeed."""
    return bool(_PORT_TAKEN.search(str(error)))


def start_on_new_ports_if_taken(start: Callable[[int], Started], what: str) -> Started:
    """``start(attempt)`` (1, 2, …; each picks its own ports) until a start did not fail for a
    port taken meanwhile (``port_taken_meanwhile``), ``START_ATTEMPTS`` at most; the last error
    stands."""
    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            return start(attempt)
        except Exception as error:
            if attempt == START_ATTEMPTS or not port_taken_meanwhile(error):
                raise
            log.warning("%s: a port was taken before the server bound it; starting again on new ports", what)
    raise AssertionError("unreachable")


def port_open(port: int, host: str = "127.0.0.1", timeout_s: float = 0.2) -> bool:
    with socket.socket() as probe:
        probe.settimeout(timeout_s)
        return probe.connect_ex((host, port)) == 0
