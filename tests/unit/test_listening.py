"""What a server listens on is read from the sockets its processes hold: a real process bound to the
wildcard address is refused, one bound to loopback passes (``runtimes/listening.py``)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psutil
import pytest

from tsbench.runtimes.listening import is_loopback, listening_sockets, require_loopback
from tsbench.runtimes.ports import free_port, port_open
from tsbench.targets.base import TargetError


@contextmanager
def http_server(bind: str) -> Iterator[tuple[psutil.Process, int]]:
    """``python -m http.server`` bound to ``bind`` on a free port, as a child process."""
    port = free_port()
    child = subprocess.Popen(
        [sys.executable, "-m", "http.server", "--bind", bind, str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while not port_open(port) and time.monotonic() < deadline:
            time.sleep(0.05)
        yield psutil.Process(child.pid), port
    finally:
        child.kill()
        child.wait(10)


def test_a_loopback_listener_passes_and_is_reported() -> None:
    with http_server("127.0.0.1") as (process, port):
        assert require_loopback("demo", [process]) == [("127.0.0.1", port, "tcp")]


def test_a_wildcard_listener_is_refused_with_its_address() -> None:
    with http_server("0.0.0.0") as (process, port):
        assert listening_sockets([process]) == [("0.0.0.0", port, "tcp")]
        with pytest.raises(TargetError, match=rf"demo: listens beyond loopback on 0\.0\.0\.0:{port}"):
            require_loopback("demo", [process])


@contextmanager
def udp_listener(bind: str) -> Iterator[tuple[psutil.Process, int]]:
    """A child process holding a UDP socket bound to ``bind`` with no peer (as a ``[[udp]]`` input)."""
    code = (
        "import socket, sys, time\n"
        "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        f"s.bind(({bind!r}, 0))\n"
        "print(s.getsockname()[1], flush=True)\n"
        "time.sleep(60)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        yield psutil.Process(child.pid), int(child.stdout.readline())
    finally:
        child.kill()
        child.wait(10)


def test_a_udp_socket_on_the_wildcard_is_refused_and_one_on_loopback_passes() -> None:
    with udp_listener("0.0.0.0") as (process, port):
        assert [str(listener) for listener in listening_sockets([process])] == [f"udp 0.0.0.0:{port}"]
        with pytest.raises(TargetError, match=rf"demo: listens beyond loopback on udp 0\.0\.0\.0:{port}"):
            require_loopback("demo", [process])
    with udp_listener("127.0.0.1") as (process, port):
        assert require_loopback("demo", [process]) == [("127.0.0.1", port, "udp")]


def test_loopback_addresses() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("127.3.2.1") and is_loopback("::1")
    assert is_loopback("::ffff:127.0.0.1")
    assert not is_loopback("0.0.0.0") and not is_loopback("::") and not is_loopback("10.0.0.5")
