"""The zygote: a warm parent that forks sandboxed workers in milliseconds.

It is exec'd fresh by the grader (never forked from it), imports numpy and
torch with one thread, and then only forks.  It never loads the reference,
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


def preload(modules: list[str]) -> None:
    """Import what student code commonly imports (the course file's
    ``[sandbox] preload``, passed by the grader), so a worker pays nothing."""
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
    import torch

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
        """Without a mount namespace only file modes hide the reference and the
        hidden tests from a worker's uid: refuse to run workers if they don't."""
        from pathlib import Path

        exposed = self.layers.exposed_secrets([Path(p) for p in secrets])
        if self.root is None and os.geteuid() == 0 and exposed:
            self.refusal = ("no mount namespace, and an unprivileged uid could read " + ", ".join(exposed)
                            + ": make them mode 700 (chmod 700 DIR), as the Gradescope setup.sh does")

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
    z.check_secrets(json.loads(args.secrets))
    signal.signal(signal.SIGTERM, z.shutdown)
    signal.signal(signal.SIGINT, z.shutdown)
    print("ready", flush=True)
    z.serve_forever()


if __name__ == "__main__":
    main()
