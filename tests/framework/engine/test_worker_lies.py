"""The worker cannot speak for the grader (issue 27).

Whatever a worker sends after its isolation report may have been written by
student code: an error's kind is one of the worker's own (never "grader",
whose score would be pending), an array is made of bytes that were sent, and
a reply belongs to one call only: a call the grader did not finish (an
exception raised into it: pytest-timeout's, a MemoryError, a
KeyboardInterrupt) ends its worker, so its late reply is never read as the
next call's.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import struct

import numpy as np
import pytest

from autograder.calls import errors, wire
from autograder.sandbox import backend as sandbox_backend
from autograder.sandbox.backend import SandboxBackend

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the full sandbox needs root (as on CI and Gradescope)")

CODE = '''
import json
import os
import stat
import struct
import time


def _channel():
    for fd in range(3, 64):
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode):
                return fd
        except OSError:
            pass


def forge(head, blobs=(), then_exit=True):
    """Write a reply by hand: any JSON part, any blobs."""
    head = json.dumps(head).encode()
    body = b"".join([struct.pack("!Q", len(head)), head, struct.pack("!Q", len(blobs)),
                     *(struct.pack("!Q", len(b)) + b.encode("latin-1") for b in blobs)])
    view = memoryview(struct.pack("!Q", len(body)) + body)
    while view:
        view = view[os.write(_channel(), view):]
    if then_exit:
        os._exit(0)


def tiny(n):
    return float(n)


def late(s):
    time.sleep(s)
    return -1.0
'''

SLOW_IMPORT = '''
import time

time.sleep(1.0)


def tiny(n):
    return float(n)
'''


@pytest.fixture
def make_backend(toy_lab, tmp_path):
    made = []

    def make(code: str = CODE) -> SandboxBackend:
        (tmp_path / "toy.py").write_text(code)
        made.append(SandboxBackend(tmp_path, toy_lab.manifest, toy_lab.assignment_dir))
        return made[-1]

    yield make
    for b in made:
        b.close()


def _error(kind, message="the grader failed, not your code; this test's score is pending", **more):
    return {"__dict__": {"error": {"__dict__": {"kind": kind, "message": message, **more}}}}


# -- an error's kind is the worker's own ---------------------------------------------------
@needs_root
@pytest.mark.parametrize("kind", [errors.GRADER, errors.TIMEOUT, errors.CRASH, errors.ARGUMENT, "manual", 7,
                                  ["grader"]])
def test_a_worker_cannot_say_the_failure_is_the_graders(make_backend, kind):
    b = make_backend()
    with pytest.raises(errors.StudentCodeError) as info:
        b.call("forge", (), {"head": _error(kind)})
    assert info.value.kind == errors.EXCEPTION  # the student's failure: scored, never pending
    assert info.value.message == "the grader failed, not your code; this test's score is pending"  # their own text


@needs_root
def test_a_workers_own_kinds_and_text_fields_pass_as_they_are(make_backend):
    b = make_backend()
    with pytest.raises(errors.StudentCodeError) as info:
        b.call("forge", (), {"head": _error(errors.MISSING_FUNCTION, "no function f()", traceback="tb", output="out")})
    assert (info.value.kind, info.value.message, info.value.traceback, info.value.output) == (
        errors.MISSING_FUNCTION, "no function f()", "tb", "out")
    b = make_backend()  # that worker is gone: its forge ends with os._exit
    with pytest.raises(errors.StudentCodeError) as info:
        b.call("forge", (), {"head": _error(errors.IMPORT, message=["not", "text"], output={"__dict__": {}})})
    assert (info.value.kind, info.value.message, info.value.output) == (errors.IMPORT, "", "")


def test_from_worker_keeps_only_the_workers_kinds():
    assert errors.StudentCodeError.from_worker({"kind": errors.GRADER, "message": "m"}).kind == errors.EXCEPTION
    assert errors.StudentCodeError.from_worker("not a dict").kind == errors.EXCEPTION
    for kind in errors.WORKER_KINDS:
        assert errors.StudentCodeError.from_worker({"kind": kind}).kind == kind
    assert errors.GRADER not in errors.WORKER_KINDS and errors.ARGUMENT not in errors.WORKER_KINDS


# -- arrays are made of the bytes sent -------------------------------------------------------
def _rss(field: str) -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))


@needs_root
def test_forged_array_views_are_refused_and_cost_the_grader_nothing(make_backend):
    """1,000 records naming one 1 MiB blob: a test copying each would take 1 GiB."""
    b = make_backend()
    b.call("tiny", (), {"n": 1})
    records = [{"__ndarray__": 0, "dtype": "<f8", "shape": [2**17]}] * 1000
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # this process's resident high-water mark starts again from here
    base = _rss("VmRSS")
    with pytest.raises(errors.StudentCodeError) as info:
        value, _m = b.call("forge", (), {"head": {"__dict__": {"ok": records}}, "blobs": ["a" * 2**20]})
        copies = [np.asarray(x, dtype=float) for x in value]  # what a test does with a result
        del copies
    grew = _rss("VmHWM") - base
    assert info.value.kind == errors.UNSUPPORTED and "unreadable reply" in str(info.value)
    assert grew < 64 * 2**20, f"reading a 1 MiB reply took {grew / 2**20:.0f} MiB"
    assert b.call("tiny", (), {"n": 2})[0] == 2.0  # a fresh worker


# -- a call that does not end cleanly ends its worker ------------------------------------------
def _arm(seconds: float, exc: type[BaseException]) -> None:
    """Raise ``exc`` in this thread after ``seconds``, wherever it is (pytest-timeout's signal method)."""
    def fire(_sig, _frame):
        raise exc("interrupted by the test")

    signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)


@contextlib.contextmanager
def _alarm_restored():
    old = signal.getsignal(signal.SIGALRM)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


INTERRUPTS = [pytest.fail.Exception, MemoryError, KeyboardInterrupt]


@needs_root
@pytest.mark.parametrize("exc", INTERRUPTS)
def test_the_call_after_an_interrupted_one_gets_its_own_reply(make_backend, exc):
    b = make_backend()
    assert b.call("tiny", (), {"n": 1})[0] == 1.0
    with pytest.raises(exc), _alarm_restored():
        _arm(0.3, exc)
        b.call("late", (), {"s": 1.0})  # its reply comes 0.7 s after the grader stopped waiting
    assert b.conn is None  # that worker is gone at once, not at the next call
    assert b.call("tiny", (), {"n": 2})[0] == 2.0
    assert b.call("tiny", (), {"n": 3})[0] == 3.0


@needs_root
@pytest.mark.parametrize("exc", [pytest.fail.Exception, KeyboardInterrupt])
def test_the_call_after_an_interrupted_spawn_gets_its_own_reply(make_backend, monkeypatch, exc):
    """Interrupted while the worker imports the files: its hello must not be read as a reply."""
    b = make_backend(SLOW_IMPORT)
    send_json, armed = sandbox_backend.channel.send_json, []

    def send_json_then_interrupt(sock, obj):
        send_json(sock, obj)
        if obj == {"go": True} and not armed:  # the worker now imports for 1 s; stop waiting at 0.3
            armed.append(True)
            _arm(0.3, exc)

    monkeypatch.setattr(sandbox_backend.channel, "send_json", send_json_then_interrupt)
    with pytest.raises(exc), _alarm_restored():
        b.call("tiny", (), {"n": 1})
    assert armed and b.conn is None and b.broken is None  # the grader's interruption: not the student's failure
    assert b.call("tiny", (), {"n": 2})[0] == 2.0


# -- what the grader believes of the worker before student code ran -----------------------------
@pytest.mark.parametrize("report, plain", [
    ({"seccomp": True, "rlimits": {"nproc": 64, "memory_mb": 3072}, "privileges": "own unprivileged uid"}, True),
    ({"filesystem": "/home/grader/solutions"}, False),  # a path: the results show the report
    ({"rlimits": {"x": {"deeper": 1}}}, False),
    ({"privileges": "x" * 1000}, False),
    ([("seccomp", True)], False),
])
def test_only_a_plain_isolation_report_is_taken(report, plain):
    assert sandbox_backend._plain_report(report) is plain


@needs_root
def test_the_worker_pid_is_the_zygotes_child(make_backend, monkeypatch):
    """The pid the grader reads /proc of and kills: refused unless it is the zygote's child or
    that child's child (a grader failure: no student code has run yet)."""
    b = make_backend()
    recv_json = sandbox_backend.channel.recv_json

    def other_pid(sock, *args, **kwargs):
        msg = recv_json(sock, *args, **kwargs)
        return {"worker_pid": os.getpid()} if isinstance(msg, dict) and "worker_pid" in msg else msg

    monkeypatch.setattr(sandbox_backend.channel, "recv_json", other_pid)
    with pytest.raises(errors.StudentCodeError) as info:
        b.call("tiny", (), {"n": 1})
    assert info.value.kind == errors.GRADER and "not the zygote's child" in str(info.value)


def test_a_forged_reply_reads_as_the_wire_format():
    """The fixtures' hand-written replies are the wire's own framing (so the tests above test the reader)."""
    head = json.dumps({"__dict__": {"ok": 1.5}}).encode()
    assert wire.loads(struct.pack("!Q", len(head)) + head + struct.pack("!Q", 0)) == {"ok": 1.5}
