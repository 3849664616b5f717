"""The zygote: a warm parent that forks sandboxed workers in milliseconds.

It is exec'd fresh by the grader (never forked from it), imports what the
course file's ``[sandbox] preload`` lists (the course's: numpy and torch, on
one thread), and then only forks.  It never loads the reference,
a test or an expected value, and holds no open grader file: a forked child
inherits all of the parent's memory and descriptors (docs/sandbox.md).

It serves one batch.  Its socket lies in a mode-700 folder of the grader's
and outside the workers' root (``layers.build_root``), so no worker can
reach it; even so it reads every request under a deadline.

Protocol on its Unix socket (one JSON request per connection):
  {"op": "spawn", ...}  -> {"pid": W}; the connection then belongs to the worker
  {"op": "status", "pid": W} -> {"status": exit code or null while running}
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_v] = "1"  # before numpy/torch: a forked child can hang otherwise

import argparse  # noqa: E402
import json  # noqa: E402
import select  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

MAX_STATUSES = 4096
REQUEST_DEADLINE_S = 10.0  # a client that sends nothing cannot freeze the zygote
PR_SET_CHILD_SUBREAPER = 36
PROBE_UID_OFFSET = 50_000  # UID_BASE + this: no worker's uid (theirs are UID_BASE + pid % 50,000), as unprivileged
MAX_PROBED = 20_000  # paths a probe asks about; breadth first, so a folder before what it holds


def preload(modules: list[str]) -> None:
    """Import what student code commonly imports (the course file's
    ``[sandbox] preload``, passed by the grader), so a worker pays nothing;
    only that (torch alone is a second of CPU a zygote)."""
    import importlib

    for name in modules:
        importlib.import_module(name)
    try:  # finds libseccomp by running ldconfig: do it here, while the file system is writable
        importlib.import_module("pyseccomp")
    except Exception:
        pass  # the worker reports seccomp as unavailable
    from autograder.core import i18n

    for lang in i18n.LANGS:  # compile the engine's catalogs once; workers only look up
        i18n.translations(lang, None)
    torch = sys.modules.get("torch")
    if torch is None:  # not on the course's list (the engine's toy lab): a worker that uses it imports it
        return         # after its fork, on one thread by the variables set above
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    torch.ones(2) @ torch.ones(2)  # initialise once, single-threaded, before any fork


class Zygote:
    def __init__(self, path: str):
        from autograder.sandbox import channel, layers, worker  # what a child needs, loaded now

        self.channel, self.layers, self.worker = channel, layers, worker
        self.root: dict | None = None  # the allow-list root's report; None: no mount namespace
        self.refusal: str | None = None  # why workers must not run (no namespace and exposed secrets)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        os.chmod(path, 0o600)
        self.listener.listen(64)
        self.live: set[int] = set()
        self.statuses: dict[int, int] = {}

    def build_root(self, new: str, hide: list[str]) -> None:
        """Build the workers' allow-list root once, here: every worker forked
        later starts inside this mount namespace, so a spawn costs no mounts."""
        L = self.layers
        if os.geteuid() == 0 and L.unshare(L.CLONE_NEWNS):
            from pathlib import Path

            os.mkdir(new, 0o700)
            self.root = L.build_root(Path(new), [Path(p) for p in hide])

    def check_secrets(self, secrets: list[str]) -> None:
        """Without a mount namespace only permissions keep a worker's uid out of the
        secrets (:func:`secrets`): ask the kernel, as an unprivileged uid
        (:func:`exposed`), and refuse to run workers while any is within its reach."""
        if self.root is not None or os.geteuid() != 0:
            return  # the allow-list root hides them; not root: workers keep this uid, which reads them anyway
        read, changed = exposed(self.layers, secrets, [engine_package()])
        said = ([f"could read or change {', '.join(read)}: make them mode 700 (chmod 700 DIR), as the "
                 "Gradescope setup.sh does"] if read else [])
        said += [f"could change the engine its workers import, {', '.join(changed)}: make it writable by its "
                 "owner only (chmod -R go-w DIR)"] if changed else []
        if said:
            self.refusal = "no mount namespace, and an unprivileged uid " + "; and it ".join(said)

    def reap(self) -> None:
        """Reap every finished child, including orphans we adopted as subreaper."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.live.discard(pid)
            self.statuses[pid] = os.waitstatus_to_exitcode(status)
            if len(self.statuses) > MAX_STATUSES:
                self.statuses.pop(next(iter(self.statuses)))

    def serve_forever(self) -> None:
        while True:
            ready, _, _ = select.select([self.listener], [], [], 0.2)
            self.reap()
            if ready:
                conn, _ = self.listener.accept()
                try:
                    conn.settimeout(REQUEST_DEADLINE_S)
                    self.handle(conn)
                except Exception as exc:  # one bad request never stops the zygote
                    print(f"zygote: request failed: {exc}", file=sys.stderr)
                finally:
                    conn.close()

    def handle(self, conn: socket.socket) -> None:
        # a spawn request carries the submission's files: REQUEST_LIMIT is derived from staging's limit
        req = self.channel.recv_json(conn, self.channel.REQUEST_LIMIT, deadline=time.monotonic() + REQUEST_DEADLINE_S)
        op = req.get("op")
        if op == "status":
            self.reap()
            self.channel.send_json(conn, {"status": self.statuses.get(int(req["pid"]))})
        elif op == "spawn":
            self.spawn(conn, req)

    def spawn(self, conn: socket.socket, req: dict) -> None:
        go_r, go_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: forget the zygote, wait for the go, become a worker
            self.listener.close()
            os.close(go_w)
            os.read(go_r, 1)
            os.close(go_r)
            conn.settimeout(None)
            self.worker.run(conn, {**req, "refusal": self.refusal}, self.root)
        os.close(go_r)
        self.live.add(pid)
        self.channel.send_json(conn, {"pid": pid})
        os.write(go_w, b"g")
        os.close(go_w)

    def shutdown(self, *_):
        for pid in list(self.live):
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        signal.alarm(5)  # reap everything before leaving: no zombie outlives the batch
        while True:
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                break
        os._exit(0)


def engine_package() -> str:
    """The folder of the engine this process imports (and its workers inherit)."""
    import autograder

    return os.path.dirname(os.path.realpath(autograder.__file__))


def secrets(given: list[str]) -> list[str]:
    """What no worker may read: the grader's list (``given``: the graded project's and its
    engine's ``solutions/`` and ``tests/``, the batch's output and submissions) and this
    process's own (``secret_paths.secret_list``): the engine the workers import may be
    another copy than the grader's, with its own reference and tests beside it."""
    from autograder.sandbox.secret_paths import secret_list

    return sorted({*given, *secret_list()})


def _below(top: str, budget: list[int]) -> list[str]:
    """``top`` and what lies below it, breadth first, links not followed, at most ``budget[0]`` paths."""
    from collections import deque

    out, queue = [], deque([top])
    while queue and budget[0] > 0:
        path = queue.popleft()
        out.append(path)
        budget[0] -= 1
        try:
            with os.scandir(path) as it:
                for e in it:
                    if e.is_symlink():
                        continue
                    queue.append(e.path) if e.is_dir(follow_symlinks=False) else out.append(e.path)
        except OSError:
            continue  # a file, or unreadable even to root: nothing below to ask about
    return out


def exposed(layers, secret: list[str], engine: list[str]) -> tuple[list[str], list[str]]:
    """(the ``secret`` folders an unprivileged uid can read or change anything of, the
    ``engine`` folders it can change anything of), as the kernel answers a child that
    dropped to such a uid, as a worker does: modes, owners, groups and ACLs all count,
    for each folder and what lies below it (at most MAX_PROBED paths).  A probe that
    gives no answer counts as everything reachable."""
    budget = [MAX_PROBED]
    asked = [(top, p, True) for top in secret if os.path.lexists(top) for p in _below(top, budget)]
    asked += [(top, p, False) for top in engine for p in _below(top, budget)]
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the probe: as unprivileged as a worker, asking only
        code = 1
        try:
            os.close(r)
            layers.drop_uid(layers.UID_BASE + PROBE_UID_OFFSET)
            found = sorted({(top, reads) for top, p, reads in asked
                            if (reads and os.access(p, os.R_OK)) or os.access(p, os.W_OK)})
            with os.fdopen(w, "w") as f:
                json.dump(found, f)
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    _pid, status = os.waitpid(pid, 0)
    try:
        found = json.loads(text) if os.waitstatus_to_exitcode(status) == 0 else None
    except ValueError:
        found = None
    if found is None:  # fail closed
        found = [[top, True] for top in secret if os.path.lexists(top)] + [[top, False] for top in engine]
    return sorted({t for t, reads in found if reads}), sorted({t for t, reads in found if not reads})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--socket", required=True)
    ap.add_argument("--hide", default="[]", help="JSON list of folders workers must not see, even inside allowed ones")
    ap.add_argument("--secrets", default="[]", help="JSON list of folders that must stay unreadable to workers")
    ap.add_argument("--preload", default="[]", help="JSON list of modules to import before any worker starts")
    args = ap.parse_args()
    preload(json.loads(args.preload))
    import ctypes

    ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # orphans of workers come to us
    z = Zygote(args.socket)  # bound before the new root: the socket's folder is not in it
    try:
        z.build_root(os.path.join(os.path.dirname(args.socket), "root"), json.loads(args.hide))
    except OSError as exc:  # half a root is no root: stop, and say why (the grader shows this line)
        print(f"error: could not build the workers' root: {exc}", flush=True)
        os._exit(1)
    z.check_secrets(secrets(json.loads(args.secrets)))
    signal.signal(signal.SIGTERM, z.shutdown)
    signal.signal(signal.SIGINT, z.shutdown)
    print("ready", flush=True)
    z.serve_forever()


if __name__ == "__main__":
    main()
