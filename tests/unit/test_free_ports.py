"""Ports for a server's roles are distinct: a QuestDB whose HTTP and min-HTTP roles were handed the
same port failed to start in CI ("could not bind socket")."""

from __future__ import annotations

import socket

from tsbench.runtimes.ports import free_ports


def test_ports_picked_together_are_distinct_and_free() -> None:
    for _ in range(20):
        ports = free_ports(8)
        assert len(set(ports)) == 8, ports
        for port in ports:  # all free once picked: each can be bound
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", port))
