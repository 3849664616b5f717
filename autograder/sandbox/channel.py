"""Length-prefixed messages on a stream socket (grader <-> zygote <-> worker).

Control messages are JSON; calls and results are ``autograder.calls.wire``
payloads.  A reader never trusts the length it is sent beyond ``limit``,
and with a ``deadline`` (a ``time.monotonic()`` value) the whole message,
however slowly it trickles in, must arrive by then, or ``socket.timeout``.
"""

from __future__ import annotations

import json
import socket
import struct
import time

_LEN = struct.Struct("!Q")
CONTROL_LIMIT = 1 << 20


class ChannelClosed(EOFError):
    pass


def send(sock: socket.socket, data: bytes) -> None:
    sock.sendall(_LEN.pack(len(data)) + data)


def _recv_exact(sock: socket.socket, n: int, deadline: float | None) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout("deadline passed")
            sock.settimeout(left)
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise ChannelClosed("the other side closed the connection")
        buf += chunk
    return bytes(buf)


def recv(sock: socket.socket, limit: int, deadline: float | None = None) -> bytes:
    (n,) = _LEN.unpack(_recv_exact(sock, _LEN.size, deadline))
    if n > limit:
        raise ValueError(f"message of {n} bytes is over the {limit}-byte limit")
    return _recv_exact(sock, n, deadline)


def send_json(sock: socket.socket, obj) -> None:
    send(sock, json.dumps(obj).encode())


def recv_json(sock: socket.socket, limit: int = CONTROL_LIMIT, deadline: float | None = None):
    return json.loads(recv(sock, limit, deadline))
