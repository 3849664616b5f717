"""The sandboxed worker: forked from the zygote, isolated, then serving calls.

Two processes when a PID namespace is available:
``W`` (forked by the zygote) unshares the namespaces and forks ``W2``, which
becomes PID 1 of the new namespace, isolates itself and serves calls; when
W2 dies the kernel kills everything left in its namespace.  W only reports
W2's pid and waits, so its exit status tells the grader how W2 ended.
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

from autograder import errors, i18n, loader, wire
from autograder.i18n import _
from autograder.sandbox import channel, layers

PR_SET_PDEATHSIG = 1
SAFE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1",
    "MPLBACKEND": "Agg",
}
OUTPUT_TAIL = 2000


def _die_with_parent() -> None:
    layers._libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def run(conn: socket.socket, req: dict, hidden: list[str] | None) -> None:
    """Entry point in W, right after the zygote's fork.  Never returns.
    ``hidden``: what the zygote's mount namespace hides (None: it has none)."""
    try:
        os.setsid()
        _die_with_parent()
        req = {**req, "slot": os.getpid() % 50_000, "t0": time.perf_counter(), "hidden": hidden}  # own uid
        files = {name: base64.b64decode(data) for name, data in req["files"].items()}
        flags = layers.CLONE_NEWNS | layers.CLONE_NEWNET | layers.CLONE_NEWPID
        namespaces = layers.unshare(flags)
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


def isolate(req: dict, files: dict[str, bytes], namespaces: bool) -> dict:
    """Apply every available layer, in the order layers.py documents."""
    work = Path(req["work"])
    hidden = req["hidden"]
    report = {"network_namespace": namespaces, "mount_namespace": hidden is not None,
              "pid_namespace": namespaces, "hidden": hidden or []}
    keep = layers.needed_paths([])
    if namespaces:
        report["private_proc"] = layers.mount_proc()
        layers.mount_work(work, req["limits"]["work_mb"], hidden or [])
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
    report["fresh_workdir"] = report["scrubbed_env"] = True
    lim = req["limits"]
    root = os.geteuid() == 0  # the work dir is chowned to the new uid below
    uid = layers.UID_BASE + req["slot"]
    drop = root and not req.get("keep_uid") and layers.world_usable([k for k in keep if k != work])
    nproc = lim["nproc"] if (drop or not root) else None
    report["rlimits"] = layers.set_rlimits(memory_mb=lim["memory_mb"], cpu_s=lim["cpu_s"],
                                           fsize_mb=lim["fsize_mb"], nproc=nproc)
    if drop:
        for p in [work, *work.iterdir()]:
            os.chown(p, uid, uid)
        layers.drop_uid(uid)
        report["privileges"] = f"uid {uid}"
    elif root and hidden is None:
        raise PermissionError("no namespaces and Python is not reachable by an unprivileged uid: "
                              "student code could read the grader's files. Install into a "
                              "world-readable prefix (e.g. a venv on /usr/bin/python3).")
    elif root:
        layers.drop_capabilities()
        report["privileges"] = "uid 0 without capabilities (Python not reachable by other uids)"
    else:
        report["privileges"] = f"uid {os.geteuid()} (grader not root)"
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
    try:
        modules = loader.load_modules(work, tuple(req["student_files"]), None, tuple(req["support_files"]))
        load_error = None
    except errors.StudentCodeError as exc:
        modules, load_error = None, exc
    report["ready_ms"] = round((time.perf_counter() - req["t0"]) * 1e3, 1)  # ... and files imported
    channel.send_json(conn, {"hello": report})
    while True:
        try:
            msg = wire.loads(channel.recv(conn, wire.MAX_BYTES))
        except (channel.ChannelClosed, OSError):
            os._exit(0)
        channel.send(conn, _answer(msg, modules, load_error, work))


def _answer(msg: dict, modules, load_error, work: Path) -> bytes:
    name = msg["fn"]
    try:
        if load_error:
            raise load_error
        fn = loader.find_function(modules, name)
        value = loader.call(fn, tuple(msg["args"]), dict(msg["kwargs"]), [work])
        try:
            return wire.dumps({"ok": value}, _("return value of {name}()").format(name=name))
        except wire.WireError as exc:
            raise errors.StudentCodeError(errors.UNSUPPORTED, _("unsupported return type: {error}").format(error=exc)) from None
    except errors.StudentCodeError as exc:
        if exc.kind == errors.EXCEPTION and "MemoryError" in exc.message:
            exc.message += _(" (the sandbox allows at most {mib} MiB)").format(mib=_memory_limit_mb())
        return wire.dumps({"error": {**exc.to_dict(), "output": _output_tail(work)}})


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
