"""Control groups per worker, set from the grader's side (the worker cannot change them).

* **pids**: caps the threads and processes of a worker and its children, and
  can freeze that count during a measured call: a measured call may start no
  thread or process, so no work moves to a child whose memory nobody counts.
* **cpuacct** (v1; in v2 every group counts it, ``cpu.stat``): the CPU time of the
  whole tree, dead processes included, for the worker's clock (``clock``): a
  process the worker starts and never waits for still spends the worker's time.
* **memory**: caps the memory of the worker's whole tree of processes (what
  they touch, and the files they write to their tmpfs ``/tmp`` and
  ``/dev/shm``, whose pages are charged to the group that writes them) at the
  lab's ``memory_mb``, with no swap; RLIMIT_AS caps each process alone at the
  same number.  When the kernel's OOM killer ends a process of the tree, the
  grader ends the rest (``backend``) and the test says the memory limit.

Both cgroup v1 (a hierarchy per controller: ``pids.max``,
``memory.limit_in_bytes`` and ``memory.memsw.limit_in_bytes``) and v2 (one
hierarchy, where the controller must be enabled for the children of this
process's own group: ``pids.max``, ``memory.max``, ``memory.swap.max``).
Groups are named ``ironlaw-<grader pid>-<worker pid>`` beside this process.
Where a controller cannot be written (a container without that right,
Gradescope's as a rule, simulated by ``layers.NO_NAMESPACES_ENV``),
:func:`for_worker` leaves it out and the result's isolation report says so;
then RLIMIT_NPROC per worker uid caps processes, and with RLIMIT_AS per
process the tree's memory (``backend.NPROC_NO_MEMORY_GROUP``).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import time
from pathlib import Path

from autograder.sandbox import counters
from autograder.sandbox.layers import NO_NAMESPACES_ENV

PREFIX = "ironlaw-"
_NAME = re.compile(r"ironlaw-([0-9]+)-")


def _mounts() -> tuple[dict[str, str], str | None]:
    """{v1 controller: its mount point}, and the v2 mount point."""
    v1, v2 = {}, None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _sep, right = line.partition(" - ")
            fstype, _src, opts = (right.split() + ["", "", ""])[:3]
            point = left.split()[4]
            if fstype == "cgroup":
                for opt in opts.split(","):
                    v1[opt] = point
            elif fstype == "cgroup2":
                v2 = point
    return v1, v2


def _root(controller: str) -> tuple[Path, int] | None:
    """This process's own folder in a hierarchy where ``controller`` can be given to new
    child groups, and the hierarchy's version (1 or 2)."""
    if os.environ.get(NO_NAMESPACES_ENV) == "1":
        return None  # the Gradescope shape: no CAP_SYS_ADMIN, no writable cgroups
    v1, v2 = _mounts()
    with open("/proc/self/cgroup") as f:
        lines = [line.rstrip("\n").split(":", 2) for line in f]
    for _id, controllers, path in lines:
        if controller in controllers.split(",") and controller in v1:
            return Path(v1[controller] + path), 1
    for _id, controllers, path in lines:
        if controllers == "" and v2:
            base = Path(v2 + path)
            if controller not in (base / "cgroup.subtree_control").read_text().split():
                if controller not in (base / "cgroup.controllers").read_text().split():
                    return None
                # fails (EBUSY) where this group holds processes itself, below the root: then no group
                (base / "cgroup.subtree_control").write_text(f"+{controller}")
            return base, 2
    return None


def _limits(controller: str, version: int, nproc: int, memory_bytes: int) -> list[tuple[str, str, bool]]:
    """(file, value, required) to write, in order, into a new group of ``controller``."""
    if controller == "pids":
        return [("pids.max", str(nproc), True)]
    if controller == "cpuacct":  # counts, limits nothing
        return []
    if version == 2:  # no swap: the limit is what the tree holds; one OOM kill ends the whole group
        return [("memory.max", str(memory_bytes), True), ("memory.swap.max", "0", False),
                ("memory.oom.group", "1", False)]
    # v1: memory+swap may not be below memory: set memory first; memsw exists only with swap accounting
    return [("memory.limit_in_bytes", str(memory_bytes), True),
            ("memory.memsw.limit_in_bytes", str(memory_bytes), False)]


def _make(controller: str, name: str, pid: int | None, nproc: int, memory_bytes: int) -> Path | None:
    """A new group ``name`` of ``controller`` with its limits, ``pid`` moved in; None where it cannot be."""
    try:
        found = _root(controller)
        if found is None:
            return None
        root, version = found
        path = root / name
        path.mkdir()
    except OSError:
        return None
    try:
        for file, value, required in _limits(controller, version, nproc, memory_bytes):
            try:
                (path / file).write_text(value)
            except OSError:
                if required:
                    raise
        if pid is not None:
            (path / "cgroup.procs").write_text(str(pid))
        return path
    except OSError:
        _rmdir(path)
        return None


class WorkerGroup:
    """A worker's groups: ``pids`` and ``memory`` are their folders, None where there is none."""

    def __init__(self, pids: Path | None, memory: Path | None, nproc: int, cpu: Path | None = None):
        self.pids, self.memory, self.nproc = pids, memory, nproc
        # where the tree's CPU time is counted: v1's cpuacct group, else (v2) any of the groups
        self.cpu = cpu or next((p for p in (pids, memory) if p and (p / "cpu.stat").is_file()), None)
        self._files = counters.Descriptors()  # its counters, read at every call (_pread)

    def freeze(self) -> None:
        """No new thread or process from now on."""
        if self.pids:
            _write(self.pids / "pids.max", (self.pids / "pids.current").read_text().strip())

    def thaw(self) -> None:
        if self.pids:
            _write(self.pids / "pids.max", str(self.nproc))

    def cpu_seconds(self) -> float | None:
        """CPU seconds used so far by every process the tree ever held (None: not counted here).
        Read at every call's deadline, like :meth:`oom_kills`."""
        text = self._pread("cpu", self.cpu, ("cpuacct.usage", "cpu.stat"))  # v1 (nanoseconds), v2
        if text is None:
            return None
        if text.strip().isdigit():
            return int(text) / 1e9
        usec = _counters(text).get("usage_usec")
        return None if usec is None else usec / 1e6

    def oom_kills(self) -> int:
        """How many processes of the tree the memory limit has killed so far.  Read after
        every call (hundreds a submission)."""
        text = self._pread("events", self.memory, ("memory.events", "memory.oom_control"))  # v2, v1
        return 0 if text is None else _counters(text).get("oom_kill", 0)

    def _pread(self, slot: str, folder: Path | None, names: tuple[str, ...]) -> str | None:
        """The first of ``names`` in ``folder`` that opens, read from a descriptor opened once
        (``counters``): these counters are read hundreds of times a submission."""
        if folder is None:
            return None
        try:
            return self._files.read(slot, folder, *names)
        except OSError:
            return None

    def kill(self) -> None:
        """SIGKILL every process in the groups: the tree, orphans included (without a PID
        namespace a worker's children outlive it)."""
        for path in dict.fromkeys((self.memory, self.pids, self.cpu)):  # in v2, cpu is one of the others
            if path is None:
                continue
            if (path / "cgroup.kill").exists():  # v2: the kernel kills them all, forks in flight too
                _write(path / "cgroup.kill", "1")
                continue
            for _round in range(5):  # v1: a fork between reading and killing leaves a new one
                try:
                    pids = [int(p) for p in (path / "cgroup.procs").read_text().split()]
                except (OSError, ValueError):
                    break
                if not pids:
                    break
                for p in pids:  # members of a group of ours, listed just now
                    with contextlib.suppress(OSError):
                        os.kill(p, signal.SIGKILL)

    def remove(self, wait_s: float = 1.0) -> None:
        """Remove the groups once their processes are gone (a killed process takes a moment
        to free its memory); one still busy after ``wait_s`` is left to the next sweep."""
        self._files.close()  # an open file of the group keeps it from being removed
        deadline = time.monotonic() + wait_s
        for path in dict.fromkeys((self.pids, self.memory, self.cpu)):
            while path is not None and not _rmdir(path) and time.monotonic() < deadline:
                time.sleep(0.01)


def _counters(text: str) -> dict[str, int]:
    """The ``key value`` lines of a cgroup file (``memory.events``, ``cpu.stat``)."""
    found = {}
    for line in text.splitlines():
        key, _sep, value = line.partition(" ")
        if value.strip().isdigit():
            found[key] = int(value)
    return found


def for_worker(pid: int, nproc: int, memory_bytes: int) -> WorkerGroup:
    """Groups ``ironlaw-<grader pid>-<pid>`` beside this process, ``pid`` moved into each."""
    name = f"{PREFIX}{os.getpid()}-{pid}"
    return WorkerGroup(_make("pids", name, pid, nproc, memory_bytes), _make("memory", name, pid, nproc, memory_bytes),
                       nproc, _make("cpuacct", name, pid, nproc, memory_bytes))


_memory_probe: list[bool] = []


def memory_available() -> bool:
    """Can this process give a worker a memory group?  Tried once (a group made and removed):
    the spawn request's process limit depends on it, and is sent before the worker's group exists."""
    if not _memory_probe:
        path = _make("memory", f"{PREFIX}{os.getpid()}-probe", None, 1, 2**30)
        if path is not None:
            _rmdir(path)
        _memory_probe.append(path is not None)
    return _memory_probe[0]


def sweep() -> None:
    """Remove the empty worker groups this grader left behind, and those of graders that are gone."""
    for controller in ("pids", "memory", "cpuacct"):
        try:
            found = _root(controller)
            for p in found[0].glob(f"{PREFIX}*") if found else ():
                m = _NAME.match(p.name)
                if m and (int(m.group(1)) == os.getpid() or not _alive(int(m.group(1)))):
                    _rmdir(p)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass
    return True


def _rmdir(path: Path) -> bool:
    try:
        path.rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def _write(path: Path, value: str) -> None:
    with contextlib.suppress(OSError):
        path.write_text(value)
