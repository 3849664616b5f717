"""Length-prefixed messages on a stream socket (grader <-> zygote <-> worker).

Control messages are JSON; calls and results are ``autograder.calls.wire``
payloads.  A reader never trusts the length it is sent beyond ``limit``,
and with a ``deadline`` (a ``time.monotonic()`` value, or a callable that
says how long the reader may still wait: ``clock.WorkerClock``) the whole
message, however slowly it trickles in, must arrive by then, or
``socket.timeout``.

Two limits.  ``CONTROL_LIMIT`` bounds the small messages (a pid, the
isolation report, hello, go, a status).  ``REQUEST_LIMIT`` bounds what the
zygote reads: a spawn request carries every file of the submission, base64
inside JSON, so it is derived from the staging limit and the manifest's
file count, and no submission staging accepts can be over it.
"""

from __future__ import annotations

import json
import socket
import struct
import time

from autograder.core.limits import MAX_FILE_BYTES, MAX_FILES, MAX_NAME_BYTES

_LEN = struct.Struct("!Q")
CONTROL_LIMIT = 1 << 20


def base64_size(n: int) -> int:
    return 4 * -(-n // 3)


# One file in the spawn request: its base64 text (JSON-safe, nothing escaped), its name twice (a
# key of "files" and an item of student_files or support_files), each at worst 6 bytes a byte
# ("\uXXXX"), with quotes and separators. The rest of the request (op, lang, limits, the work
# folder's path, up to PATH_MAX escaped) fits in REQUEST_OVERHEAD.
FILE_OVERHEAD = 2 * (6 * MAX_NAME_BYTES + 8)
REQUEST_OVERHEAD = 6 * 4096 + 4096
REQUEST_LIMIT = MAX_FILES * (base64_size(MAX_FILE_BYTES) + FILE_OVERHEAD) + REQUEST_OVERHEAD


class ChannelClosed(EOFError):
    pass


def send(sock: socket.socket, data: bytes) -> None:
    sock.sendall(_LEN.pack(len(data)) + data)


def seconds_left(deadline) -> float:
    """How long a reader may still wait: ``deadline`` is a ``time.monotonic()`` value, or a
    callable that says it (a worker's clock, which runs slower than the wall's on a busy machine)."""
    return deadline() if callable(deadline) else deadline - time.monotonic()


def _recv_exact(sock: socket.socket, n: int, deadline) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        if deadline is not None:
            left = seconds_left(deadline)
            if left <= 0:
                raise socket.timeout("deadline passed")
            sock.settimeout(left)
        try:
            chunk = sock.recv(min(n - len(buf), 1 << 20))
        except socket.timeout:
            if deadline is None:
                raise  # the socket's own timeout (Zygote.request's)
            continue  # the deadline says whether the wait is over, not the socket's timer
        if not chunk:
            raise ChannelClosed("the other side closed the connection")
        buf += chunk
    return bytes(buf)


def recv(sock: socket.socket, limit: int, deadline=None) -> bytes:
    (n,) = _LEN.unpack(_recv_exact(sock, _LEN.size, deadline))
    if n > limit:
        raise ValueError(f"message of {n} bytes is over the {limit}-byte limit")
    return _recv_exact(sock, n, deadline)


def send_json(sock: socket.socket, obj) -> None:
    send(sock, json.dumps(obj).encode())


def recv_json(sock: socket.socket, limit: int = CONTROL_LIMIT, deadline=None):
    return json.loads(recv(sock, limit, deadline))
