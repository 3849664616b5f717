"""The sandboxed worker: forked from the zygote, isolated, then serving calls.

Two processes when namespaces are available: ``W`` (forked by the zygote)
unshares the namespaces and forks ``W2``, which becomes PID 1 of the new
PID namespace, isolates itself and serves calls; when W2 dies the kernel
kills everything left in its namespace.  W only reports W2's pid and
waits, so its exit status tells the grader how W2 ended.

Messages to the grader, in order: ``{"worker_pid"}`` (from W),
``{"report"}`` (the isolation report, sent by the engine before any student
code is loaded: it is what the result says protected the student's code),
then, after the grader's ``{"go"}``, ``{"hello"}`` once the files are
imported, and one reply per call (a chain of calls in one message gets one
reply per call too).  Student code can write on this socket
too, from its import on: the grader believes only the first two
(``backend.SandboxBackend``) and reads the rest as the student's output.
"""

from __future__ import annotations

import base64
import os
import signal
import socket
import sys
import time
import traceback
from pathlib import Path

from autograder.calls import errors, loader, seam, wire
from autograder.core import i18n
from autograder.core.i18n import _
from autograder.sandbox import channel, layers

PR_SET_PDEATHSIG = 1
SAFE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1",
    "MPLBACKEND": "Agg",
}
NAMESPACES = (layers.CLONE_NEWNS | layers.CLONE_NEWNET | layers.CLONE_NEWPID | layers.CLONE_NEWIPC
              | layers.CLONE_NEWUTS)
OUTPUT_TAIL = 2000
NS_WORK = Path("/tmp")  # with namespaces: the worker's own tmpfs, the same path for every worker
SHM_MB = 64


def _die_with_parent() -> None:
    layers._libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _only_descriptor(conn: socket.socket) -> None:
    """Keep stdin/out/err and the channel; close everything else inherited."""
    fd = conn.fileno()
    os.closerange(3, fd)
    os.closerange(fd + 1, 1 << 16)


def run(conn: socket.socket, req: dict, root: dict | None) -> None:
    """Entry point in W, right after the zygote's fork.  Never returns.
    ``root``: the zygote's allow-list root report (None: it has none)."""
    try:
        os.setsid()
        _die_with_parent()
        _only_descriptor(conn)
        req = {**req, "slot": os.getpid() % 50_000, "t0": time.perf_counter(), "root": root}  # own uid
        files = {name: base64.b64decode(data) for name, data in req["files"].items()}
        namespaces = root is not None and layers.unshare(NAMESPACES)
        if not namespaces:
            channel.send_json(conn, {"worker_pid": os.getpid()})
            serve(conn, req, files, namespaces=False)
        go_r, go_w = os.pipe()
        child = os.fork()
        if child == 0:
            os.close(go_w)
            _die_with_parent()
            os.read(go_r, 1)
            os.close(go_r)
            serve(conn, req, files, namespaces=True)
        os.close(go_r)
        channel.send_json(conn, {"worker_pid": child})
        os.write(go_w, b"g")
        conn.close()
        _pid, status = os.waitpid(child, 0)
        os._exit(os.waitstatus_to_exitcode(status) % 256 if os.WIFEXITED(status)
                 else 128 + os.WTERMSIG(status))
    except BaseException:
        traceback.print_exc()
    os._exit(70)


class Refused(RuntimeError):
    """The sandbox cannot protect the grader here: grading must not go on."""


def isolate(req: dict, files: dict[str, bytes], namespaces: bool) -> dict:
    """Apply every available layer, in the order layers.py documents."""
    root = req["root"]
    report = {"network_namespace": namespaces, "mount_namespace": root is not None,
              "pid_namespace": namespaces, "ipc_namespace": namespaces, "uts_namespace": namespaces,
              "filesystem": (root or {}).get("filesystem", "host")}
    lim = req["limits"]
    if namespaces:
        report["private_proc"] = layers.mount_proc()
        work = NS_WORK
        layers.mount_tmpfs(work, lim["work_mb"])
        python_dirs = layers.rebind_under_tmp(root) if root else []  # a venv under /tmp stays visible
        layers.mount_tmpfs(Path("/dev/shm"), SHM_MB)
        socket.sethostname("sandbox")
    else:
        work, python_dirs = Path(req["work"]), []
    for name, data in files.items():
        (work / name).write_bytes(data)
    os.chdir(work)
    out = os.open(work / ".output", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    os.environ.clear()
    lang = req.get("lang") if req.get("lang") in i18n.LANGS else i18n.DEFAULT  # messages in the student's language
    os.environ.update(SAFE_ENV, HOME=str(work), TMPDIR=str(work), **{i18n.ENV: lang})
    os.umask(0o077)  # what the worker writes is its own, even on a shared /tmp or /dev/shm
    report["fresh_workdir"] = report["scrubbed_env"] = True
    root_uid = os.geteuid() == 0
    if req.get("refusal"):
        raise Refused(req["refusal"])
    if root_uid and root is None and not layers.world_usable(layers.needed_paths()):
        raise Refused("no mount namespace, and this Python is not reachable by an unprivileged uid: "
                      "student code would run as root. Install the engine on a world-readable Python "
                      "(e.g. a venv on /usr/bin/python3, as the Gradescope setup.sh does), or grade "
                      "where mount namespaces are allowed (root with CAP_SYS_ADMIN).")
    report["rlimits"] = layers.set_rlimits(memory_mb=lim["memory_mb"], cpu_s=lim["cpu_s"],
                                           fsize_mb=lim["fsize_mb"], nproc=lim["nproc"] if root_uid else None)
    if root_uid:
        uid = layers.UID_BASE + req["slot"]
        for p in [work, *(q for q in work.iterdir() if q not in python_dirs), *([Path("/dev/shm")] if namespaces else [])]:
            os.chown(p, uid, uid)
        layers.drop_uid(uid)
        report["privileges"] = "own unprivileged uid"
    else:
        report["privileges"] = "the grader's own uid (grader not root)"
    report["seccomp"] = layers.install_seccomp(os.getpid())
    report["setup_ms"] = round((time.perf_counter() - req["t0"]) * 1e3, 1)  # fork to isolated
    return report


def serve(conn: socket.socket, req: dict, files: dict[str, bytes], namespaces: bool) -> None:
    try:
        report = isolate(req, files, namespaces)
    except BaseException as exc:
        channel.send_json(conn, {"fatal": f"sandbox setup failed: {type(exc).__name__}: {exc}"})
        os._exit(71)
    work = Path.cwd()
    # The report goes out before any student code runs, so the code cannot forge it.
    channel.send_json(conn, {"report": report})
    try:
        channel.recv_json(conn)  # {"go"}: the grader has read this process's baseline
    except (channel.ChannelClosed, OSError, ValueError):
        os._exit(0)
    support = tuple(req["support_files"])
    modules, failed = loader.load_each(work, tuple(req["student_files"]), None, support)
    channel.send_json(conn, {"hello": {"ready_ms": round((time.perf_counter() - req["t0"]) * 1e3, 1)}})
    while True:
        try:
            msg = wire.loads(channel.recv(conn, wire.MAX_BYTES))
        except (channel.ChannelClosed, OSError):
            os._exit(0)
        for reply in _answers(msg, modules, failed, work, support):
            channel.send(conn, reply)


def _answers(msg: dict, modules, failed, work: Path, support_files: tuple[str, ...]):
    """The replies to one message: one to a call, one to ``"each"`` (many keyword calls in
    order, whose values go back as one list; the first that fails is the reply, and the calls
    after it are not made), and one per call to ``"chain"`` (``seam._Function.chain``: each
    call fed items of the previous value as the grader decodes it; the chain ends after an
    error, or after a value that cannot feed the next call, by the grader's own rule)."""
    name = msg["fn"]
    if "chain" not in msg:
        if "each" in msg:  # each value encoded as its call returns: as if it had been sent alone
            yield _answer(name, lambda fn, what, blobs: [
                wire.encode(_one(fn, name, (), dict(kw), work, support_files), blobs, what) for kw in msg["each"]],
                modules, failed, work)
        else:
            yield _answer(name, lambda fn, what, blobs: _one(fn, name, tuple(msg["args"]), dict(msg["kwargs"]), work,
                                                             support_files), modules, failed, work)
        return
    carry, previous, calls = tuple(msg["carry"]), None, msg["chain"]
    for t, kw in enumerate(calls):
        kw = seam.fed(kw, previous, carry) if t else dict(kw)
        reply = _answer(name, lambda fn, what, blobs: _one(fn, name, (), kw, work, support_files),
                        modules, failed, work)
        yield reply
        if t + 1 == len(calls):  # the last value feeds nothing: not decoded again
            return
        answer = wire.loads(reply)
        if "ok" not in answer or not seam.feeds(answer["ok"], carry):
            return
        previous = answer["ok"]


def _answer(name: str, call, modules, failed, work: Path) -> bytes:
    """The reply to ``call(fn, what, blobs)``: its value, or the student's error."""
    try:
        fn = loader.find_function(modules, name, failed, work)
        what, blobs = _("return value of {name}()").format(name=name), []
        try:
            return wire.dumps({"ok": call(fn, what, blobs)}, what, blobs)
        except wire.WireError as exc:
            raise errors.StudentCodeError(errors.UNSUPPORTED, _("unsupported return type: {error}").format(error=exc)) from None
    except errors.StudentCodeError as exc:
        if exc.kind == errors.EXCEPTION and "MemoryError" in exc.message:
            exc.message += _(" (the sandbox allows at most {mib} MiB)").format(mib=_memory_limit_mb())
        return wire.dumps({"error": {**exc.to_dict(), "output": _output_tail(work)}})


def _one(fn, name: str, args: tuple, kwargs: dict, work: Path, support_files: tuple[str, ...]):
    # Engine code, but in the student's process: code that patches hashlib or numpy could
    # hide its own in-place changes. That only skips a check that protects the student
    # (the grader's data never reaches this process), so it needs no stronger guard.
    before = loader.fingerprint_arguments(args, kwargs)
    value = loader.call(fn, args, kwargs, work, support_files)  # a support file's frames: the lab's code
    loader.check_unmodified(name, fn, args, kwargs, before)
    return value


def _memory_limit_mb() -> int:
    import resource

    return resource.getrlimit(resource.RLIMIT_AS)[0] // 2**20


def _output_tail(work: Path) -> str:
    try:
        sys.stdout.flush()
        with open(work / ".output", "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - OUTPUT_TAIL))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""
