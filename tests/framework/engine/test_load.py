"""The same code gets the same grade at any load: a sandboxed call's time limit runs on the
worker's clock (``autograder.sandbox.clock``), which a busy machine does not use up.

Each test makes its own load: busy loops pinned to one core, with the worker (or the
process the clock reads) pinned there too, so it gets a quarter of that core whatever the
rest of the machine does.  A call that needs less than its limit passes though its wall
time is several times the limit; code that never ends (a loop, a sleep, at import or in a
call) is still cut off.  No assertion reads the wall clock: where the load did not slow the
call past its limit (it cannot, pinned so), the test says so and skips.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import subprocess
import sys
import time

import pytest

from autograder.calls import errors
from autograder.sandbox import backend as sandbox_backend, clock
from autograder.sandbox.backend import SandboxBackend

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the full sandbox needs root (as on CI and Gradescope)")
needs_schedstat = pytest.mark.skipif(clock.run_delay_ns(os.getpid()) is None,
                                     reason="this kernel keeps no schedstat: the worker's clock is the wall clock")
BUSY = 3  # busy loops beside the worker on its core: it gets a quarter of it

CODE = '''
import time


def spin(cpu_s):
    """Needs ``cpu_s`` seconds of CPU, however long the machine takes to give them."""
    end = time.process_time() + cpu_s
    while time.process_time() < end:
        pass
    return cpu_s


def forever():
    while True:
        pass


def nap(s):
    time.sleep(s)
    return s
'''
CORE = min(os.sched_getaffinity(0))


def on_core(*cmd: str, **kw) -> subprocess.Popen:
    """A process that runs only on ``CORE``."""
    return subprocess.Popen(cmd, preexec_fn=lambda: os.sched_setaffinity(0, {CORE}), **kw)


@contextlib.contextmanager
def one_busy_core(n: int = BUSY):
    """``n`` busy loops on ``CORE``, each in its own session: where the kernel shares a core between
    sessions first (autogroup), as between a worker (which starts its own) and the rest, each loop
    is a session as busy as the worker's."""
    loops = [on_core(sys.executable, "-c", "while True: pass", start_new_session=True) for _ in range(n)]
    try:
        yield
    finally:
        for p in loops:
            p.kill()
            p.wait()


@needs_schedstat
def test_the_clock_stops_while_the_worker_waits_for_a_core():
    with one_busy_core():
        worker = on_core(sys.executable, "-c", "while True: pass", start_new_session=True)
        try:
            c = clock.WorkerClock(worker.pid, 100.0)
            d0 = clock.run_delay_ns(worker.pid)
            time.sleep(2.0)
            waited = (clock.run_delay_ns(worker.pid) - d0) / 1e9
            used = c.used()
        finally:
            worker.kill()
            worker.wait()
    # a quarter of the core: it waited about three times as long as it ran, and its clock shows the running
    assert waited > used, (waited, used)


@needs_schedstat
def test_the_clock_runs_while_the_worker_sleeps():
    with one_busy_core():
        sleeper = on_core(sys.executable, "-c", "import sys, time; sys.stdout.write('up\\n'); sys.stdout.flush(); "
                          "time.sleep(100)", stdout=subprocess.PIPE)
        try:
            assert sleeper.stdout.readline() == b"up\n"
            c = clock.WorkerClock(sleeper.pid, 1.0)
            while c() > 0:  # a sleep uses the limit up as the wall clock goes, however busy the core
                time.sleep(0.05)
            # it ran out because it slept: the sleeper hardly ran or waited for the core
            assert (clock.run_delay_ns(sleeper.pid) - c.delay0) / 1e9 < 0.5
        finally:
            sleeper.kill()
            sleeper.wait()


@pytest.fixture(scope="module")
def pinned_zygote():
    """This module's zygote, started on ``CORE``: its workers run there, beside the busy loops."""
    before = os.sched_getaffinity(0)
    sandbox_backend.stop_zygote()
    os.sched_setaffinity(0, {CORE})  # what this process starts inherits it
    try:
        sandbox_backend.zygote()
    finally:
        os.sched_setaffinity(0, before)
    yield
    sandbox_backend.stop_zygote()


@pytest.fixture
def pinned_backend(pinned_zygote, toy_lab, tmp_path):
    """``make(timeout_s)``: a sandbox whose workers share ``CORE`` with ``BUSY`` busy loops."""
    (tmp_path / "toy.py").write_text(CODE)
    made = []

    def make(timeout_s: float) -> SandboxBackend:
        m = toy_lab.manifest
        m = dataclasses.replace(m, limits=dataclasses.replace(m.limits, timeout_s=timeout_s, submission_timeout_s=600))
        made.append(SandboxBackend(tmp_path, m, toy_lab.assignment_dir))
        return made[-1]

    try:
        with one_busy_core():
            yield make
    finally:
        for b in made:
            b.close()


@needs_root
@needs_schedstat
def test_a_call_within_its_limit_passes_on_a_busy_core(pinned_backend):
    b = pinned_backend(timeout_s=2)
    value, m = b.call("spin", (), {"cpu_s": 0.8}, measure=True)  # 0.8 s of CPU at a quarter of a core
    # the measurement reads /proc's ticks: a tick (1/HZ s) at each end may fall outside the call
    assert value == 0.8 and m.cpu_s >= 0.8 - 2 / clock.HZ
    if m.wall_s <= 2:
        pytest.skip(f"the core was not busy enough to slow the call past its limit ({m.wall_s:.1f} s)")
    # on the wall clock it took several times its limit: a wall-clock limit would have scored it 0
    assert b.call("nap", (), {"s": 0.5})[0] == 0.5  # and the worker serves the next call


@needs_root
def test_code_that_never_ends_is_cut_off_on_a_busy_core(pinned_backend):
    b = pinned_backend(timeout_s=1)
    with pytest.raises(errors.StudentCodeError, match=r"^forever\(\) timed out after 1 s$") as info:
        b.call("forever", (), {})
    assert info.value.kind == errors.TIMEOUT
    with pytest.raises(errors.StudentCodeError, match=r"^nap\(\) timed out after 1 s$"):
        b.call("nap", (), {"s": 100})  # a sleep is cut by the wall clock's pace


@needs_root
def test_an_import_that_never_ends_is_cut_off_on_a_busy_core(pinned_backend, tmp_path):
    (tmp_path / "toy.py").write_text(CODE + "\nwhile True:\n    pass\n")  # before the backend reads it
    b = pinned_backend(timeout_s=1)
    with pytest.raises(errors.StudentCodeError, match=r"^importing your files timed out after 1 s$") as info:
        b.call("spin", (), {"cpu_s": 0.1})
    assert info.value.kind == errors.TIMEOUT



@needs_root
def test_a_workers_group_counts_the_cpu_of_children_it_never_waits_for():
    """The worker's cgroup counts its whole tree's CPU, which its own threads' (``cpu_ticks``) miss
    for a child it never waits for: a fork bomb's, whose children crowd its main thread off the
    cores (the hostile batch's fork_bomb took 18 s to reach a 3 s limit before the clock counted it)."""
    from autograder.sandbox import cgroups

    parent = subprocess.Popen([sys.executable, "-c", "import os, sys, time\nsys.stdin.readline()\n"
                               "if os.fork() == 0:\n    while True: pass\ntime.sleep(600)"],
                              stdin=subprocess.PIPE, start_new_session=True)
    group = cgroups.for_worker(parent.pid, 64, 2**30)
    try:
        if group.cpu is None:
            pytest.skip("no cgroup counts CPU here: the clock falls back to the worker's own threads")
        own0, tree0 = clock.cpu_ticks(parent.pid), group.cpu_seconds()
        parent.stdin.write(b"go\n")
        parent.stdin.flush()  # it forks a busy child and sleeps
        for _ in range(6000):  # a hang guard, not a time limit: the child's CPU ends the wait
            if group.cpu_seconds() - tree0 >= 0.5:
                break
            time.sleep(0.01)
        assert group.cpu_seconds() - tree0 >= 0.5, "the group never counted the child's CPU"
        assert (clock.cpu_ticks(parent.pid) - own0) / clock.HZ < 0.25, "the parent itself only slept"
    finally:
        group.kill()
        parent.kill()
        parent.wait()
        group.remove()


def test_the_clock_runs_at_the_trees_cpu_when_that_is_more():
    """A worker whose own clock hardly moves (here: it sleeps, and no time passes) has used what
    its tree's CPU says."""
    tree = [10.0]
    c = clock.WorkerClock(os.getpid(), 0.6, tree_cpu=lambda: tree[0])  # a limit one poll reaches: read at once
    assert c() > 0
    tree[0] += 0.75  # its children spent 0.75 s of CPU
    assert c.used() >= 0.7 and c() <= 0


def test_the_clock_reads_nothing_while_no_tree_can_reach_the_limit():
    """A reply's waits ask the clock thousands of times a submission: while even every core busy
    since the start and until the next poll stays under the limit, the answer is the poll's
    length, and neither /proc nor the cgroup is read."""
    reads = []
    c = clock.WorkerClock(os.getpid(), 100.0, tree_cpu=lambda: reads.append(1) or 0.0)
    assert [c() for _ in range(50)] == [clock.POLL_S] * 50
    assert len(reads) == 1, "only the clock's start reads the tree"
    c.t0 -= 100.0 / clock.CORES  # long enough that every core could have spent the limit: now it reads
    c()
    assert len(reads) > 1, "past the bound, the clock reads the tree again"


def test_the_clocks_proc_files_are_its_processs_alone():
    """``ProcFiles`` reads what :func:`clock.cpu_ticks` and :func:`clock.run_delay_ns` read, from
    descriptors opened once; once the process is gone they read nothing (a recycled pid is
    never read as the worker's)."""
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    proc = clock.ProcFiles(child.pid)
    try:
        assert abs(proc.cpu_ticks() - clock.cpu_ticks(child.pid)) <= 1
        assert (proc.run_delay_ns() is None) == (clock.run_delay_ns(child.pid) is None)
        child.stdin.close()
        child.wait()
        assert proc.cpu_ticks() is None and proc.run_delay_ns() is None
        assert clock.WorkerClock(proc, 1.0).delay0 is None, "a clock of an ended worker is the wall clock"
    finally:
        proc.close()
