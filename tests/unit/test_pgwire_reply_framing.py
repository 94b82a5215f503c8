"""``pgwire_frames`` on replies written here byte by byte (the real server's replies are in
tests/integration/test_pgwire_frames.py): the end of a reply is its ReadyForQuery, not bytes that
look like one at the end of a received block; a reply that does not frame is an error, never a
partial answer; a server's error names its message."""

from __future__ import annotations

import socket
import struct
import threading
import time

import pytest

from tsbench.targets.pgwire_frames import Frames, WireError, exchange


def message(kind: bytes, body: bytes) -> bytes:
    return kind + struct.pack("!i", len(body) + 4) + body


def float_column(name: str) -> bytes:  # RowDescription field: name, table, attnum, float8, len, mod, binary
    return name.encode() + b"\x00" + struct.pack("!ihihih", 0, 0, 701, 8, -1, 1)


def data_row(*values: bytes) -> bytes:
    return message(
        b"D", struct.pack("!h", len(values)) + b"".join(struct.pack("!i", len(v)) + v for v in values)
    )


READY = message(b"Z", b"I")
HEAD = message(b"1", b"") + message(b"2", b"") + message(b"T", struct.pack("!h", 1) + float_column("x"))
# A float8 whose last bytes are a ReadyForQuery's: b"Z\x00\x00\x00\x05I" ends its 8 bytes.
LOOKALIKE = b"\x40\x09Z\x00\x00\x00\x05I"


def test_bytes_like_a_ready_for_query_at_a_block_end_do_not_end_the_reply() -> None:
    first = HEAD + data_row(LOOKALIKE)
    rest = data_row(struct.pack("!d", 2.5)) + message(b"C", b"SELECT 2\x00") + READY
    client, server = socket.socketpair()

    def serve() -> None:
        server.recv(1 << 16)  # the query
        server.sendall(first)
        time.sleep(0.3)  # the client has received the first block, ending like a ReadyForQuery
        server.sendall(rest)

    replying = threading.Thread(target=serve)
    replying.start()
    try:
        reply = exchange(client, "SELECT x")
    finally:
        replying.join()
        client.close()
        server.close()
    assert reply == first + rest
    frames = Frames.parse(reply)
    assert frames.tag == "SELECT 2" and len(frames.row_starts) == 2
    rows = [row for part in frames.rows(lambda oid: bytes, rows_per_part=1) for row in part]
    assert rows == [(struct.unpack("!d", LOOKALIKE)[0],), (2.5,)]


def test_a_reply_that_does_not_frame_is_an_error() -> None:
    whole = HEAD + data_row(struct.pack("!d", 1.0)) + message(b"C", b"SELECT 1\x00") + READY
    with pytest.raises(WireError, match="runs past"):
        Frames.parse(bytearray(whole[:-1]))
    with pytest.raises(WireError, match="header cut"):
        Frames.parse(bytearray(whole[:-3]))
    with pytest.raises(WireError, match="does not end with ReadyForQuery"):
        Frames.parse(bytearray(whole[: -len(READY)]))


def test_a_refused_query_names_the_server_message() -> None:
    error = message(b"E", b'SERROR\x00C42P01\x00Mrelation "nope" does not exist\x00\x00')
    with pytest.raises(WireError, match='ERROR: relation "nope" does not exist'):
        Frames.parse(bytearray(message(b"1", b"") + error + READY))


def test_nulls_and_texts_decode_as_none_and_shared_strings() -> None:
    text_column = b"h\x00" + struct.pack("!ihihih", 0, 0, 25, -1, -1, 1)
    head = HEAD[: -len(message(b"T", struct.pack("!h", 1) + float_column("x")))]
    description = message(b"T", struct.pack("!h", 2) + float_column("x") + text_column)
    null = struct.pack("!i", -1)
    rows = (
        data_row(struct.pack("!d", 1.5), b"host_1")
        + message(b"D", struct.pack("!h", 2) + null + struct.pack("!i", 6) + b"host_1")
        + message(b"D", struct.pack("!h", 2) + struct.pack("!i", 8) + struct.pack("!d", 3.0) + null)
    )
    reply = bytearray(head + description + rows + message(b"C", b"SELECT 3\x00") + READY)
    decoded = [row for part in Frames.parse(reply).rows(lambda oid: bytes, rows_per_part=2) for row in part]
    assert decoded == [(1.5, "host_1"), (None, "host_1"), (3.0, None)]
    assert decoded[0][1] is decoded[1][1]
