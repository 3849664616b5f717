"""Length-prefixed messages on a stream socket (grader <-> zygote <-> worker).

Control messages are JSON; calls and results are ``autograder.wire``
payloads.  A reader never trusts the length it is sent beyond ``limit``.
"""

from __future__ import annotations

import json
import socket
import struct

_LEN = struct.Struct("!Q")
CONTROL_LIMIT = 1 << 20


class ChannelClosed(EOFError):
    pass


def send(sock: socket.socket, data: bytes) -> None:
    sock.sendall(_LEN.pack(len(data)) + data)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise ChannelClosed("the other side closed the connection")
        buf += chunk
    return bytes(buf)


def recv(sock: socket.socket, limit: int) -> bytes:
    (n,) = _LEN.unpack(_recv_exact(sock, _LEN.size))
    if n > limit:
        raise ValueError(f"message of {n} bytes is over the {limit}-byte limit")
    return _recv_exact(sock, n)


def send_json(sock: socket.socket, obj) -> None:
    send(sock, json.dumps(obj).encode())


def recv_json(sock: socket.socket, limit: int = CONTROL_LIMIT):
    return json.loads(recv(sock, limit))
