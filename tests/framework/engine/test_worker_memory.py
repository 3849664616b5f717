"""The memory of a worker's whole tree of processes is bounded, not only each process's (issue 27).

RLIMIT_AS caps one process; a submission that forks 40 children, each under
it, held 6.9 GiB.  Where the grader can write a memory cgroup the worker's
tree lives in one, limited to the lab's ``memory_mb``: when its OOM killer
ends a process of the tree the grader ends the rest, and the test says the
memory limit.  Where it cannot (Gradescope), the process count is what
bounds the tree: at most ``NPROC_NO_MEMORY_GROUP`` processes, each under
RLIMIT_AS.  The isolation report says which holds.
"""

from __future__ import annotations

import dataclasses
import os

import pytest

from autograder.calls import errors
from autograder.sandbox import backend as sandbox_backend, cgroups
from autograder.sandbox.backend import SandboxBackend

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the full sandbox needs root (as on CI and Gradescope)")
MIB = 2**20

CODE = '''
import mmap
import os
import time

import numpy as np


def _fill(mib):
    m = mmap.mmap(-1, mib * 2**20)
    m.madvise(mmap.MADV_HUGEPAGE)  # fewer page faults: the tree fills quickly
    np.frombuffer(m, dtype=np.uint8)[:] = 1  # touched: resident
    return m


def tree(n, mib):
    """n children, each filling mib MiB (under the per-process limit), all waiting."""
    children = []
    for _ in range(n):
        try:
            pid = os.fork()
        except OSError:  # over the process limit
            break
        if pid == 0:
            _fill(mib)
            time.sleep(120)
            os._exit(0)
        children.append(pid)
    if len(children) == n:
        for pid in children:
            os.waitpid(pid, 0)
    return len(children)


def tiny(n):
    return float(n)


def honest(mib):
    """A process and a child that each hold a few hundred MiB for a moment: well within the limit."""
    pid = os.fork()
    if pid == 0:
        _fill(mib)
        os._exit(0)
    m = _fill(mib)
    os.waitpid(pid, 0)
    return len(m)
'''


@pytest.fixture(autouse=True)
def fresh_probe(monkeypatch):
    """Each test probes for itself: a test that fakes the cgroup tree must not leave its
    answer cached for the rest of this process (``cgroups.memory_available``)."""
    monkeypatch.setattr(cgroups, "_memory_probe", [])


@pytest.fixture
def backend(toy_lab, tmp_path):
    (tmp_path / "toy.py").write_text(CODE)
    m = toy_lab.manifest  # the limit the tree must reach, with time to reach it on a busy machine
    m = dataclasses.replace(m, limits=dataclasses.replace(m.limits, timeout_s=30, submission_timeout_s=120))
    b = SandboxBackend(tmp_path, m, toy_lab.assignment_dir)
    yield b
    b.close()


def _peaks(monkeypatch) -> list[int]:
    """The most memory each worker's group held, read as the group is removed."""
    seen, remove = [], cgroups.WorkerGroup.remove

    def record(self, *args, **kwargs):
        for name in ("memory.max_usage_in_bytes", "memory.peak"):  # v1, v2
            if self.memory and (self.memory / name).exists():
                seen.append(int((self.memory / name).read_text()))
        remove(self, *args, **kwargs)

    monkeypatch.setattr(cgroups.WorkerGroup, "remove", record)
    return seen


@needs_root
def test_a_tree_of_processes_is_held_to_the_labs_memory(backend, monkeypatch):
    if not cgroups.memory_available():
        pytest.skip("no writable memory cgroup here: the process count bounds the tree instead")
    peaks = _peaks(monkeypatch)
    limit = backend.manifest.limits.memory_mb
    assert backend.call("tiny", (), {"n": 1})[0] == 1.0
    assert backend.isolation["memory_group"] and backend.isolation["tree_memory_mb"] == limit
    with pytest.raises(errors.StudentCodeError) as info:
        backend.call("tree", (), {"n": 40, "mib": 300})  # 12 GiB, each child a tenth of the limit
    assert info.value.kind == errors.CRASH
    assert str(info.value) == (f"tree() did not return: killed: over the memory limit of {limit} MiB "
                               "for all of its processes together")
    assert peaks and max(peaks) <= limit * MIB  # what the machine gave the whole tree
    assert backend.call("tiny", (), {"n": 2})[0] == 2.0  # a fresh worker: the tests go on


@needs_root
def test_honest_children_and_measured_calls_work_in_the_group(backend):
    assert backend.call("honest", (), {"mib": 400})[0] == 400 * MIB
    _value, m = backend.call("tiny", (), {"n": 1}, measure=True)
    assert m.method == "rss" and m.peak_bytes < 64 * MIB


@needs_root
def test_without_a_memory_group_the_process_count_bounds_the_tree(toy_lab, tmp_path, monkeypatch):
    """The Gradescope shape: no writable memory controller. Each process is under RLIMIT_AS and
    there are at most NPROC_NO_MEMORY_GROUP of them: the report states the bound."""
    root = cgroups._root
    monkeypatch.setattr(cgroups, "_root", lambda controller: None if controller == "memory" else root(controller))
    monkeypatch.setattr(cgroups, "_memory_probe", [])
    (tmp_path / "toy.py").write_text(CODE)
    b = SandboxBackend(tmp_path, toy_lab.manifest, toy_lab.assignment_dir)
    try:
        forked = b.call("tree", (), {"n": 40, "mib": 1})[0]
        nproc = sandbox_backend.NPROC_NO_MEMORY_GROUP
        assert forked < nproc  # the worker itself is one
        lim = b.req["limits"]
        assert not b.isolation["memory_group"] and b.isolation["rlimits"]["nproc"] == nproc
        assert b.isolation["tree_memory_mb"] == nproc * lim["memory_mb"] + lim["work_mb"] + 64
    finally:
        b.close()


# -- cgroup v1 and v2, as the grader writes them ---------------------------------------------------
@pytest.mark.parametrize("version, written", [
    (1, {"memory.limit_in_bytes": "1073741824", "memory.memsw.limit_in_bytes": "1073741824"}),
    (2, {"memory.max": "1073741824", "memory.swap.max": "0", "memory.oom.group": "1"}),
])
def test_a_memory_group_is_limited_with_no_swap(tmp_path, monkeypatch, version, written):
    """On a folder standing in for the hierarchy: what goes in which file (v2 cannot be tried here)."""
    monkeypatch.setattr(cgroups, "_root", lambda controller: (tmp_path, version))
    path = cgroups._make("memory", "ironlaw-1-2", 4242, 12, 2**30)
    assert path == tmp_path / "ironlaw-1-2"
    assert {f.name: f.read_text() for f in path.iterdir() if f.name != "cgroup.procs"} == written
    assert (path / "cgroup.procs").read_text() == "4242"
    (path / ("memory.events" if version == 2 else "memory.oom_control")).write_text(
        "oom_kill_disable 0\nlow 0\noom 2\noom_kill 3\n")
    group = cgroups.WorkerGroup(None, path, 12)
    assert group.oom_kills() == 3
    (path / ("memory.events" if version == 2 else "memory.oom_control")).write_text("oom_kill 4\n")
    assert group.oom_kills() == 4  # read again each time, through the file opened once
    group._files.close()
    # the tree's CPU: v2 counts it in every group (cpu.stat, microseconds), v1 in a cpuacct group (nanoseconds)
    (path / ("cpu.stat" if version == 2 else "cpuacct.usage")).write_text(
        "usage_usec 2500000\nuser_usec 2000000\n" if version == 2 else "2500000000\n")
    group = cgroups.WorkerGroup(None, path if version == 2 else None, 12, None if version == 2 else path)
    assert group.cpu == path and group.cpu_seconds() == 2.5
    group._files.close()
    for f in path.iterdir():
        f.unlink()
    cgroups.WorkerGroup(None, path, 12).remove()
    assert not path.exists()


def test_a_group_that_cannot_be_limited_is_not_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(cgroups, "_root", lambda controller: (tmp_path, 2))
    (tmp_path / "ironlaw-1-3").mkdir()  # taken: mkdir fails
    assert cgroups._make("pids", "ironlaw-1-3", 1, 12, 2**30) is None
    monkeypatch.setattr(cgroups, "_limits", lambda *a: [("no/such/file", "1", True)])
    assert cgroups._make("pids", "ironlaw-1-4", 1, 12, 2**30) is None and not (tmp_path / "ironlaw-1-4").exists()
