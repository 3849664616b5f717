"""A pids cgroup per worker, set from the grader's side (the worker cannot change it).

It caps the threads and processes of a worker and its children, and it can
freeze that count during a measured call: a measured call may start no
thread or process, so no work moves to a child whose memory nobody counts.
Where no pids controller can be written (a container without that right,
Gradescope's as a rule), :func:`for_worker` returns None and the result's
isolation report says so; RLIMIT_NPROC per worker uid still caps processes.
"""

from __future__ import annotations

import os
from pathlib import Path


def _pids_root() -> Path | None:
    """This process's own folder in a writable pids hierarchy (cgroup v1 or v2)."""
    mounts = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _sep, right = line.partition(" - ")
            fstype, _src, opts = (right.split() + ["", "", ""])[:3]
            point = left.split()[4]
            if fstype == "cgroup" and "pids" in opts.split(","):
                mounts["v1"] = point
            elif fstype == "cgroup2":
                mounts["v2"] = point
    with open("/proc/self/cgroup") as f:
        lines = [line.rstrip("\n").split(":", 2) for line in f]
    for _id, controllers, path in lines:
        if "pids" in controllers.split(",") and "v1" in mounts:
            return Path(mounts["v1"] + path)
    for _id, controllers, path in lines:
        if controllers == "" and "v2" in mounts:
            base = Path(mounts["v2"] + path)
            if "pids" in (base / "cgroup.controllers").read_text().split():
                return base
    return None


class WorkerGroup:
    def __init__(self, path: Path, limit: int):
        self.path, self.limit = path, limit

    def freeze(self) -> None:
        """No new thread or process from now on."""
        self._write("pids.max", (self.path / "pids.current").read_text().strip())

    def thaw(self) -> None:
        self._write("pids.max", str(self.limit))

    def remove(self) -> None:
        try:
            self.path.rmdir()  # fails while a task is still in it; the next sweep gets it
        except OSError:
            pass

    def _write(self, name: str, value: str) -> None:
        try:
            (self.path / name).write_text(value)
        except OSError:
            pass


def for_worker(pid: int, limit: int) -> WorkerGroup | None:
    """Create ``ironlaw-<grader pid>-<pid>`` beside this process, move ``pid`` in."""
    try:
        root = _pids_root()
        if root is None:
            return None
        path = root / f"ironlaw-{os.getpid()}-{pid}"
        path.mkdir()
        (path / "pids.max").write_text(str(limit))
        (path / "cgroup.procs").write_text(str(pid))
        return WorkerGroup(path, limit)
    except OSError:
        return None


def sweep() -> None:
    """Remove this grader's empty worker groups left behind."""
    try:
        root = _pids_root()
        for p in root.glob(f"ironlaw-{os.getpid()}-*") if root else ():
            try:
                p.rmdir()
            except OSError:
                pass
    except OSError:
        pass
